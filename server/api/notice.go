package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// NoticeHeader carries what a bridge without tokens ignored or guessed
// about a request that it still served: the caller is told, not refused.
// One value per notice; plain ASCII, so every HTTP client reads it as sent.
const NoticeHeader = "Askbridge-Notice"

// Notices of open mode.
const noticeTokenIgnored = "the token was ignored (the bridge runs without tokens)"

// openNotices adds the notices of a request served in open mode (no
// tokens configured): a bearer token sent for nothing (BRIDGE_TOKEN set to
// a placeholder, a stale one), and a project that has no questions while a
// project with a close name has (a typo creates a project silently).
func (a *API) openNotices(w http.ResponseWriter, r *http.Request, project string) {
	if r.Header.Get("Authorization") != "" {
		w.Header().Add(NoticeHeader, noticeTokenIgnored)
	}
	if project == "" {
		return
	}
	if near := a.projects.near(r.Context(), a.store.Projects, project); near != "" {
		w.Header().Add(NoticeHeader, fmt.Sprintf("project %s had no questions before; did you mean %s?", project, near))
	}
}

// knownProjects remembers the projects that have questions, so a request
// to one of them reads nothing more. It holds only names the store
// returned, never names from requests.
type knownProjects struct {
	mu    sync.Mutex
	known map[string]bool
}

// near returns the existing project whose name is closest to name when
// name has no questions and one is close enough to be a typo of it, else
// "".
func (k *knownProjects) near(ctx context.Context, list func(context.Context) ([]string, error), name string) string {
	k.mu.Lock()
	known := k.known[name]
	k.mu.Unlock()
	if known {
		return ""
	}
	all, err := list(ctx)
	if err != nil {
		return ""
	}
	k.mu.Lock()
	if k.known == nil {
		k.known = map[string]bool{}
	}
	for _, p := range all {
		k.known[p] = true
	}
	known = k.known[name]
	k.mu.Unlock()
	if known {
		return ""
	}
	best, bestD := "", max(1, len(name)/3)+1
	for _, p := range all { // sorted: the first of equally close names wins
		if d := editDistance(strings.ToLower(name), strings.ToLower(p)); d < bestD {
			best, bestD = p, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of two neighbours ("dmeo" is one from
// "demo").
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
