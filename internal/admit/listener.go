package admit

import (
	"context"
	"net"
	"net/http"
	"runtime"
	"sync"
	"time"
)

// Listener holds back accepting new connections while max of those
// accepted are still busy with their first request, so a burst of
// connections (a fleet of agents reconnecting at once) waits its turn in
// the kernel's accept queue instead of in the process: what net/http
// allocates for a connection (its goroutine, buffers and request) exists
// for a few hundred at a time, and what a parked request keeps is not
// scattered among the garbage of thousands (BENCHMARKS.md).
//
// A connection holds its place until its first request is done (the
// connection goes idle), it is taken over (a parked wait) or closed, its
// handler says it streams or waits for long (LongLived: an event stream,
// a blocking MCP call), or for hold at most: a request that is none of
// these (a slow client, a wait nobody declared) keeps the listener from
// accepting for hold at most. A kept-alive connection's later requests
// are not counted.
//
// The cost is a burst's order: a connection that arrives during one (a
// click from Slack) waits behind those accepted before it, in the
// kernel's queue instead of the Go scheduler's; BENCHMARKS.md measures
// both. A flood of connections that never send a request can hold every
// place only by arriving faster than max per hold.
type Listener struct {
	net.Listener
	max  int
	hold time.Duration

	mu     sync.Mutex
	held   map[net.Conn]time.Time // since when
	freed  chan struct{}          // a place was given back
	waits  int64                  // Accepts that waited for a place
	waited time.Duration          // their time waiting, in all
}

// Waits is how many times accepting waited for a place, and for how long
// in all (the bridge's askbridge_accept_waits_total and
// askbridge_accept_wait_seconds_total).
func (l *Listener) Waits() (n int64, d time.Duration) {
	if l == nil {
		return 0, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waits, l.waited
}

// AcceptPerCore is how many new connections a server lets be busy with
// their first request at once, per core, by default.
const AcceptPerCore = 128

// AcceptHold is how long a connection holds its place at most, by default.
const AcceptHold = 250 * time.Millisecond

// Limit wraps ln with max places (0: AcceptPerCore per core; negative: a
// Listener that never holds back), each held for hold at most. The server
// that serves it calls ConnState and ConnContext (from its http.Server's).
func Limit(ln net.Listener, max int, hold time.Duration) *Listener {
	if max == 0 {
		max = AcceptPerCore * runtime.GOMAXPROCS(0)
	}
	return &Listener{Listener: ln, max: max, hold: hold, held: map[net.Conn]time.Time{}, freed: make(chan struct{}, 1)}
}

// Accept waits for a place, then accepts.
func (l *Listener) Accept() (net.Conn, error) {
	l.wait()
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if l.max > 0 {
		l.mu.Lock()
		l.held[c] = time.Now()
		l.mu.Unlock()
	}
	return c, nil
}

// wait returns once fewer than max connections hold a place, giving back
// the places held longer than hold.
func (l *Listener) wait() {
	if l.max <= 0 {
		return
	}
	var since time.Time // when this Accept began to wait
	for {
		l.mu.Lock()
		if len(l.held) < l.max {
			l.count(since)
			l.mu.Unlock()
			return
		}
		now := time.Now()
		next := now.Add(l.hold)
		for c, at := range l.held {
			if end := at.Add(l.hold); !end.After(now) {
				delete(l.held, c)
			} else if end.Before(next) {
				next = end
			}
		}
		if len(l.held) < l.max {
			l.count(since)
			l.mu.Unlock()
			return
		}
		if since.IsZero() {
			since = now
		}
		l.mu.Unlock()
		t := time.NewTimer(next.Sub(now))
		select {
		case <-l.freed:
		case <-t.C:
		}
		t.Stop()
	}
}

// count counts a wait that began at since (zero: none), under mu.
func (l *Listener) count(since time.Time) {
	if !since.IsZero() {
		l.waits++
		l.waited += time.Since(since)
	}
}

// ConnState (the server's http.Server.ConnState) gives a connection's
// place back once it is no longer busy with its first request.
func (l *Listener) ConnState(c net.Conn, s http.ConnState) {
	if s == http.StateNew || s == http.StateActive {
		return
	}
	l.give(c)
}

// ConnContext (the server's http.Server.ConnContext) lets the handlers of
// c's requests give its place back (LongLived).
func (l *Listener) ConnContext(ctx context.Context, c net.Conn) context.Context {
	if l == nil || l.max <= 0 {
		return ctx
	}
	return context.WithValue(ctx, connKey{}, connPlace{l, c})
}

type connKey struct{}

type connPlace struct {
	l *Listener
	c net.Conn
}

// LongLived gives the place of the connection of the request of ctx
// back (if it holds one): its handler is about to stream, or to wait in
// its goroutine, and is done with the work of a new connection.
func LongLived(ctx context.Context) {
	if p, ok := ctx.Value(connKey{}).(connPlace); ok {
		p.l.give(p.c)
	}
}

func (l *Listener) give(c net.Conn) {
	if l == nil || l.max <= 0 {
		return
	}
	l.mu.Lock()
	_, had := l.held[c]
	delete(l.held, c)
	l.mu.Unlock()
	if had {
		select {
		case l.freed <- struct{}{}:
		default:
		}
	}
}
