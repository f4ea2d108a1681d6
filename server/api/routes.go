package api

import (
	"net/http"
)

// routeInfo is what a client may learn of a configured route: that it
// exists (to check BRIDGE_ROUTE before asking), not its targets or
// responders.
type routeInfo struct {
	Name    string `json:"name"`
	Default bool   `json:"default"`
}

// routes lists the names of the configured routes, so a client configured
// with a route (askbridge mcp's BRIDGE_ROUTE) can tell its operator at start
// that the bridge has no such route, instead of every question failing.
func (a *API) routes(w http.ResponseWriter, r *http.Request, _ Principal) error {
	names, def := a.router.RouteNames()
	out := make([]routeInfo, 0, len(names))
	for _, n := range names {
		out = append(out, routeInfo{Name: n, Default: n == def})
	}
	writeJSON(w, http.StatusOK, map[string]any{"routes": out})
	return nil
}
