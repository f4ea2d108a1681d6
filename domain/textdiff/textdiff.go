// Package textdiff renders unified diffs of two texts, line by line, for
// people deciding an approval: removed lines start with "-", added lines
// with "+", unchanged context lines with a space, in "@@" hunks with three
// lines of context.
package textdiff

import (
	"fmt"
	"strings"
)

// Context is the number of unchanged lines shown around each change.
const Context = 3

// maxCells bounds the line-matching table (old lines × new lines after the
// common head and tail are set aside). Beyond it the differing middle is
// shown as wholly removed and wholly added: still a correct diff, only a
// coarser one, and it keeps a huge input from costing quadratic memory.
const maxCells = 4 << 20

// op is one line of a diff.
type op struct {
	kind byte // ' ', '-', '+'
	text string
}

// Lines splits s into lines without their line breaks. An empty text has
// no lines; a final line break does not start another line.
func Lines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

// Hunks returns the unified hunks ("@@ -a,b +c,d @@" and their lines) that
// turn old into new, with line numbers counted from startOld and startNew
// (1 for a whole file). It returns "" when the texts are equal.
func Hunks(old, new string, startOld, startNew int) string {
	ops := diffLines(Lines(old), Lines(new))
	var b strings.Builder
	n := len(ops)
	i := 0
	for i < n {
		// Find the next change.
		for i < n && ops[i].kind == ' ' {
			i++
		}
		if i == n {
			break
		}
		start := max(i-Context, 0)
		// Extend the hunk while changes are within 2×Context of each other.
		end := i
		for j := i; j < n; j++ {
			if ops[j].kind != ' ' {
				end = j
			} else if j-end > 2*Context {
				break
			}
		}
		stop := min(end+Context+1, n)
		// Line numbers at start.
		oldLine, newLine := startOld, startNew
		for _, o := range ops[:start] {
			if o.kind != '+' {
				oldLine++
			}
			if o.kind != '-' {
				newLine++
			}
		}
		oldCount, newCount := 0, 0
		for _, o := range ops[start:stop] {
			if o.kind != '+' {
				oldCount++
			}
			if o.kind != '-' {
				newCount++
			}
		}
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", span(oldLine, oldCount), span(newLine, newCount))
		for _, o := range ops[start:stop] {
			b.WriteByte(o.kind)
			b.WriteString(o.text)
			b.WriteByte('\n')
		}
		i = stop
	}
	return b.String()
}

// Unified is a whole unified diff with "---"/"+++" headers naming the
// old and new file ("/dev/null" for a file that did not exist).
func Unified(oldName, newName, old, new string) string {
	h := Hunks(old, new, 1, 1)
	if h == "" {
		return ""
	}
	return "--- " + oldName + "\n+++ " + newName + "\n" + h
}

// span is a hunk range: "start,count", with the start of an empty range
// one line before, as diff -u writes it.
func span(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start-1)
	}
	if count == 1 {
		return fmt.Sprintf("%d", start)
	}
	return fmt.Sprintf("%d,%d", start, count)
}

// diffLines matches a and b by their longest common subsequence.
func diffLines(a, b []string) []op {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	var ops []op
	for _, s := range a[:head] {
		ops = append(ops, op{' ', s})
	}
	ops = append(ops, middle(a[head:len(a)-tail], b[head:len(b)-tail])...)
	for _, s := range a[len(a)-tail:] {
		ops = append(ops, op{' ', s})
	}
	return ops
}

func middle(a, b []string) []op {
	var ops []op
	if len(a)*len(b) > maxCells || len(a) == 0 || len(b) == 0 {
		for _, s := range a {
			ops = append(ops, op{'-', s})
		}
		for _, s := range b {
			ops = append(ops, op{'+', s})
		}
		return ops
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	w := len(b) + 1
	lcs := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, op{' ', a[i]})
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[(i+1)*w+j] >= lcs[i*w+j+1]):
			ops = append(ops, op{'-', a[i]})
			i++
		default:
			ops = append(ops, op{'+', b[j]})
			j++
		}
	}
	return ops
}
