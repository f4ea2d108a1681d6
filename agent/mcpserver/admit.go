package mcpserver

import (
	"context"
	"net/http"
	"runtime"
	"sync/atomic"
)

// A burst of blocking ask_user calls (every agent of a fleet reconnecting
// at once) is asked a bounded number at a time. Each call's ask is ~50 KB
// of short-lived work (decoding, the ask, the store), and the few hundred
// bytes it keeps while it waits are allocated in the middle of it: with
// thousands of asks under way together, the calls' long-lived objects end
// up scattered one or two to a page among the burst's garbage, and the
// heap cannot give those pages back while the calls wait. Measured with
// 17,000 calls written at once: 11.6 KB of RSS per waiting call for
// 2.9 KB live; asked 16 at a time, 2.2 KB for 1.0 KB live (BENCHMARKS.md).
// On two cores, more asks at once than this make none of them faster.
//
// A call holds its place from the moment its POST is known to be a
// parkable call until it is parked, starts waiting the ordinary way, or
// its request ends: a waiting call never holds a place, so the places
// cannot run out while calls wait. Requests that are not parkable calls
// (every other method, HTTP/2) do not take one.

// admitPerCore is how many calls are asked at once per core.
const admitPerCore = 8

// admission bounds the calls being asked at once.
type admission chan struct{}

func newAdmission(n int) admission {
	if n <= 0 {
		n = max(admitPerCore*runtime.GOMAXPROCS(0), 8)
	}
	return make(admission, n)
}

// enter waits for a place; false if ctx ended first (the client went away).
// The place is given back by the release it returns, once.
func (a admission) enter(ctx context.Context) (release func(), ok bool) {
	select {
	case a <- struct{}{}:
	case <-ctx.Done():
		return nil, false
	}
	var done atomic.Bool
	return func() {
		if done.CompareAndSwap(false, true) {
			<-a
		}
	}, true
}

// Admit puts the POSTs of /mcp (next: HTTPHandler's handler) in line for
// a place among the requests being worked on. It goes in front of
// anything that starts a clock on the request (a deadline on reading its
// body): a request may wait its turn for seconds in a burst. A request that
// waits cannot hold a place: only HTTP/1 POSTs to a server whose blocking
// calls are parked take one (a call waits in its goroutine only after it
// gave its place back).
func (s *Server) Admit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.ProtoMajor != 1 || s.parker == nil {
			next.ServeHTTP(w, r)
			return
		}
		release, ok := s.admit.enter(r.Context())
		if !ok {
			return // the client went away while its request waited
		}
		defer release()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), placeKey{}, release)))
	})
}

type placeKey struct{}

// placeOf is what gives back the place of the request of ctx (a no-op
// if it holds none).
func placeOf(ctx context.Context) func() {
	if f, ok := ctx.Value(placeKey{}).(func()); ok {
		return f
	}
	return func() {}
}
