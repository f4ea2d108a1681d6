package actiontext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// CutDiff fits a unified diff into budget runes by whole lines, sharing
// the room between its runs of removed, added and context lines so that
// a replaced block shows the start of both its old and its new side. The
// headers (---, +++, @@) come first; each run cut short ends with a line
// "⋯ N more removed lines" (or added, unchanged), which Discord and Slack
// leave uncoloured. shown counts the diff's own lines shown, total all of
// them.
func CutDiff(diff string, budget int) (text string, shown, total int) {
	lines := strings.Split(strings.TrimRight(diff, "\n"), "\n")
	total = len(lines)
	type run struct {
		lines []string
		keep  int
		head  bool
	}
	var runs []*run
	kind := func(l string) byte {
		switch {
		case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "@@"):
			return 'h'
		case l == "":
			return ' '
		}
		return l[0]
	}
	for i, l := range lines {
		if i > 0 && kind(l) == kind(lines[i-1]) && kind(l) != 'h' {
			r := runs[len(runs)-1]
			r.lines = append(r.lines, l)
			continue
		}
		runs = append(runs, &run{lines: []string{l}, head: kind(l) == 'h'})
	}
	marker := func(r *run) string {
		what := "unchanged"
		switch kind(r.lines[0]) {
		case '-':
			what = "removed"
		case '+':
			what = "added"
		}
		return fmt.Sprintf("⋯ %d more %s lines", len(r.lines)-r.keep, what)
	}
	cost := func(s string) int { return utf8.RuneCountInString(s) + 1 }
	used := 0
	// The cost of a run's marker is paid when it first keeps a line
	// without keeping them all; it is taken back once it keeps them all.
	add := func(r *run) bool {
		next := cost(r.lines[r.keep])
		if r.keep == 0 && len(r.lines) > 1 {
			next += cost(marker(r))
		}
		if r.keep == len(r.lines)-1 && r.keep > 0 {
			next -= cost(marker(r))
		}
		if used+next > budget {
			return false
		}
		used += next
		r.keep++
		return true
	}
	for _, r := range runs {
		if r.head && !add(r) {
			break
		}
	}
	for grew := true; grew; {
		grew = false
		for _, r := range runs {
			if !r.head && r.keep < len(r.lines) && add(r) {
				grew = true
			}
		}
	}
	var b strings.Builder
	for _, r := range runs {
		for _, l := range r.lines[:r.keep] {
			b.WriteString(l + "\n")
			shown++
		}
		if r.keep > 0 && r.keep < len(r.lines) {
			b.WriteString(marker(r) + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n"), shown, total
}
