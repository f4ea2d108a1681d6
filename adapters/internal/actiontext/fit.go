package actiontext

import (
	"fmt"
	"strings"
)

// Cut is a text fitted to a budget: the part shown and how much of the
// whole it is.
type Cut struct {
	Text       string // what is shown: whole lines, or the start of the one line there is
	Lines      int    // lines of the whole text
	ShownLines int    // whole lines in Text
	Chars      int    // characters of the whole text
	ShownChars int    // characters in Text
	Whole      bool   // Text is the whole text
	Added      int    // for a diff: lines starting with "+" (not "+++")
	Removed    int    // for a diff: lines starting with "-" (not "---")
}

// Fit keeps as many whole lines of text as cost allows within budget
// (cost gives what one line, with its newline, costs on the platform:
// escaping can make it longer). When not even the first line fits, it
// keeps the start of that line. It never drops lines silently: Cut says
// how many were left out, and More words it.
func Fit(text string, budget int, cost func(string) int) Cut {
	lines := strings.SplitAfter(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	c := Cut{Lines: len(lines), Chars: len([]rune(text))}
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			c.Added++
		case strings.HasPrefix(l, "-"):
			c.Removed++
		}
	}
	var b strings.Builder
	used := 0
	for _, l := range lines {
		w := cost(l)
		if used+w > budget {
			break
		}
		b.WriteString(l)
		used += w
		c.ShownLines++
	}
	if c.ShownLines == 0 && len(lines) > 0 {
		// One line longer than the budget: keep its start.
		var r strings.Builder
		for _, ch := range lines[0] {
			if used+cost(string(ch)) > budget {
				break
			}
			r.WriteRune(ch)
			used += cost(string(ch))
		}
		b.WriteString(r.String())
	}
	c.Text = strings.TrimSuffix(b.String(), "\n")
	c.ShownChars = len([]rune(b.String()))
	c.Whole = c.ShownLines == c.Lines && c.ShownChars >= c.Chars
	return c
}

// More says what a cut left out, naming the text ("diff", "command",
// "arguments"): "diff: 300 lines, 212 shown" or, when only part of one
// line fits, "command: 12,000 characters, 2,900 shown". Empty when the
// text is whole.
func More(what string, c Cut) string {
	if c.Whole {
		return ""
	}
	if c.ShownLines == 0 || c.Lines <= 1 {
		return fmt.Sprintf("%s: %s characters, %s shown", what, thousands(c.Chars), thousands(c.ShownChars))
	}
	return fmt.Sprintf("%s: %s lines, %s shown (%s more lines)", what, thousands(c.Lines), thousands(c.ShownLines), thousands(c.Lines-c.ShownLines))
}

// DiffStat is "+12 −3" for a diff's added and removed lines.
func DiffStat(c Cut) string { return fmt.Sprintf("+%d −%d", c.Added, c.Removed) }

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Pages cuts text at line ends into pages of at most size cost each; a
// line longer than a page is cut inside. Every character is on a page.
func Pages(text string, size int, cost func(string) int) []string {
	var out []string
	var b strings.Builder
	used := 0
	flush := func() {
		if b.Len() > 0 {
			out = append(out, strings.TrimSuffix(b.String(), "\n"))
			b.Reset()
			used = 0
		}
	}
	for _, l := range strings.SplitAfter(text, "\n") {
		if w := cost(l); used+w <= size {
			b.WriteString(l)
			used += w
			continue
		}
		flush()
		for _, ch := range l {
			w := cost(string(ch))
			if used+w > size {
				flush()
			}
			b.WriteRune(ch)
			used += w
		}
	}
	flush()
	return out
}
