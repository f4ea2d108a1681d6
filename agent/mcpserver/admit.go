package mcpserver

import (
	"net/http"
)

// A burst of blocking ask_user calls is worked on a few at a time
// (internal/admit): each call's ask is ~50 KB of short-lived work, and
// the few hundred bytes it keeps while parked, allocated in the middle of
// it, would otherwise be scattered among the burst's garbage. A call holds
// its place from its POST's arrival until it is parked, starts to wait the
// ordinary way, or its request ends.

// Admit puts the POSTs of /mcp (next: HTTPHandler's handler) in line for
// a place among the requests being worked on (Config.AskAtOnce). It goes
// in front of anything that starts a clock on the request. A request that
// waits cannot hold a place: only HTTP/1 POSTs to a server whose blocking
// calls are parked take one (such a call waits in its goroutine only
// after it gave its place back: askUser).
func (s *Server) Admit(next http.Handler) http.Handler {
	return s.admit.Handler(func(r *http.Request) bool {
		return r.Method == http.MethodPost && r.ProtoMajor == 1 && s.parker != nil
	}, next)
}
