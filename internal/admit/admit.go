// Package admit puts requests in line for one of a few places among the
// requests being worked on, so that a burst of them (a fleet of agents
// reconnecting at once) is worked on a few at a time.
//
// Why it matters for requests that end up parked (long-polls, blocking
// MCP calls): the few hundred bytes such a request keeps while it waits
// are allocated in the middle of its short-lived work. With thousands of
// requests under way together on two cores, the kept objects end up
// scattered one or two to a page among the burst's garbage, and the heap
// cannot give those pages back while the requests wait (BENCHMARKS.md:
// 11.6 KB of RSS per parked MCP call for 2.9 KB live, against 2.2 KB when
// the calls arrived a few at a time). More requests under way than the
// cores can work on make none of them faster.
//
// A request holds its place until it is parked, starts to wait in its
// goroutine, or ends: a handler that blocks gives its place back first
// (Of), so the places cannot run out while requests wait.
package admit

import (
	"context"
	"net/http"
	"runtime"
	"sync/atomic"
)

// PerCore is how many requests of a line are worked on at once per core.
const PerCore = 8

// Line bounds the requests of one kind worked on at once.
type Line chan struct{}

// New is a line of n places; 0: PerCore per core, at least 8.
func New(n int) Line {
	if n <= 0 {
		n = max(PerCore*runtime.GOMAXPROCS(0), 8)
	}
	return make(Line, n)
}

// Enter waits for a place; false if ctx ended first (the client went
// away). The place is given back by the release it returns, once.
func (l Line) Enter(ctx context.Context) (release func(), ok bool) {
	select {
	case l <- struct{}{}:
	case <-ctx.Done():
		return nil, false
	}
	var done atomic.Bool
	return func() {
		if done.CompareAndSwap(false, true) {
			<-l
		}
	}, true
}

// Handler puts the requests that take reports true for in line before
// next serves them; next finds the place's release in the request's
// context (Of). It goes in front of anything that starts a clock on
// the request (a deadline on reading its body): a request may wait its
// turn for seconds in a burst.
func (l Line) Handler(takes func(*http.Request) bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !takes(r) {
			next.ServeHTTP(w, r)
			return
		}
		release, ok := l.Enter(r.Context())
		if !ok {
			return // the client went away while its request waited
		}
		defer release()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), placeKey{}, release)))
	})
}

type placeKey struct{}

// Of is what gives back the place of the request of ctx (a no-op if it
// holds none), and its connection's among new connections (LongLived): a
// handler calls it before it blocks, or keeps it for later.
func Of(ctx context.Context) func() {
	f, _ := ctx.Value(placeKey{}).(func())
	return func() {
		if f != nil {
			f()
		}
		LongLived(ctx)
	}
}
