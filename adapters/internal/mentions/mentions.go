// Package mentions builds the text of a reminder that names the people and
// groups who may answer, within a platform's length limit.
package mentions

import (
	"fmt"
	"strings"
)

// Fit returns "<m1> <m2> … and N more <sentence>" holding as many of
// mentions as fit, in order, within max units as length counts them. A
// mention is never cut, and the sentence is always kept (the caller keeps it
// short enough). shown is how many mentions the text holds: the first shown
// of the list, so the caller can allow exactly those to notify.
func Fit(mentions []string, sentence string, max int, length func(string) int) (text string, shown int) {
	all := strings.Join(append(append([]string(nil), mentions...), sentence), " ")
	if length(all) <= max {
		return all, len(mentions)
	}
	used := 0
	for shown < len(mentions) {
		next := used + length(mentions[shown]) + 1
		rest := fmt.Sprintf("and %d more %s", len(mentions)-shown-1, sentence)
		if next+length(rest) > max {
			break
		}
		used = next
		shown++
	}
	var b strings.Builder
	for _, m := range mentions[:shown] {
		b.WriteString(m + " ")
	}
	fmt.Fprintf(&b, "and %d more %s", len(mentions)-shown, sentence)
	if shown == 0 {
		return sentence, 0 // no room for anyone: the sentence alone, no "and N more" without names
	}
	return b.String(), shown
}
