// Package fairclaim shares out a claim of due deliveries among projects,
// the same way on both stores: projects are read in turn, starting where
// the caller says (one further each call), and each first gets an equal
// share of every lane's want, so a project with a long queue cannot starve
// the others; a second pass gives what is left to the projects that filled
// their share and may have more due.
package fairclaim

import (
	"maps"

	"github.com/askbridge/askbridge/lifecycle"
)

// ClaimFunc claims up to asked[lane] due deliveries of each lane in one
// project, reporting how many it took of each lane.
type ClaimFunc func(project string, asked map[string]int) (got []lifecycle.Delivery, counts map[string]int, err error)

// Claim runs claim over projects from start, for want (lane → how many).
// What was claimed before an error is returned with it.
func Claim(projects []string, start int, want map[string]int, claim ClaimFunc) ([]lifecycle.Delivery, error) {
	left := maps.Clone(want)
	var out []lifecycle.Delivery
	full := map[string]map[string]bool{} // project -> lanes that may have more due
	for pass := 0; pass < 2; pass++ {
		for i := range projects {
			p := projects[(start+i)%len(projects)]
			asked := map[string]int{}
			for l, rest := range left {
				w := min(max(1, want[l]/len(projects)), rest)
				if pass == 1 {
					if !full[p][l] {
						continue
					}
					w = rest
				}
				if w > 0 {
					asked[l] = w
				}
			}
			if len(asked) == 0 {
				continue
			}
			got, counts, err := claim(p, asked)
			out = append(out, got...)
			if err != nil {
				return out, err
			}
			full[p] = map[string]bool{}
			for l, w := range asked {
				left[l] -= counts[l]
				full[p][l] = counts[l] >= w
			}
		}
	}
	return out, nil
}
