package admit

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// accepted accepts on l in the background: each connection it accepts
// comes out of the channel.
func accepted(t *testing.T, l *Listener) <-chan net.Conn {
	t.Helper()
	out := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(out)
				return
			}
			out <- c
		}
	}()
	t.Cleanup(func() { l.Close() })
	return out
}

func dial(t *testing.T, l net.Listener) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func listen(t *testing.T, max int, hold time.Duration) *Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return Limit(ln, max, hold)
}

func next(t *testing.T, ch <-chan net.Conn, within time.Duration) net.Conn {
	t.Helper()
	select {
	case c := <-ch:
		return c
	case <-time.After(within):
		t.Fatalf("no connection accepted within %s", within)
		return nil
	}
}

func none(t *testing.T, ch <-chan net.Conn, during time.Duration) {
	t.Helper()
	select {
	case <-ch:
		t.Fatalf("a connection was accepted while every place was held")
	case <-time.After(during):
	}
}

func TestListenerHoldsBackWhileEveryPlaceIsBusy(t *testing.T) {
	for _, given := range []http.ConnState{http.StateIdle, http.StateHijacked, http.StateClosed} {
		t.Run(given.String(), func(t *testing.T) {
			l := listen(t, 2, time.Hour)
			ch := accepted(t, l)
			dial(t, l)
			dial(t, l)
			a, b := next(t, ch, 5*time.Second), next(t, ch, 5*time.Second)
			l.ConnState(a, http.StateNew)
			l.ConnState(b, http.StateActive)
			dial(t, l)
			none(t, ch, 200*time.Millisecond) // both places busy: the third waits in the kernel
			l.ConnState(b, given)
			next(t, ch, 5*time.Second)
			dial(t, l)
			none(t, ch, 100*time.Millisecond)
			l.ConnState(b, given) // b's place was given back already: nothing more
			none(t, ch, 100*time.Millisecond)
		})
	}
}

func TestListenerGivesBackAPlaceHeldTooLong(t *testing.T) {
	// A connection that streams (or waits in its goroutine) never goes
	// idle: its place is given back after hold.
	l := listen(t, 1, 150*time.Millisecond)
	ch := accepted(t, l)
	dial(t, l)
	next(t, ch, 5*time.Second)
	dial(t, l)
	t0 := time.Now()
	next(t, ch, 5*time.Second)
	require.GreaterOrEqual(t, time.Since(t0), 100*time.Millisecond, "accepted before the first connection's hold ran out")
}

func TestListenerWithNoLimitNeverHoldsBack(t *testing.T) {
	l := listen(t, -1, time.Hour)
	ch := accepted(t, l)
	for range 5 {
		dial(t, l)
		c := next(t, ch, 5*time.Second)
		l.ConnState(c, http.StateActive)
	}
	var nilListener *Listener
	nilListener.ConnState(nil, http.StateClosed) // a server without a Listener may still call it
}

func TestListenerUnderAServer(t *testing.T) {
	// One place: a request that streams for ever does not keep the next
	// connection out for longer than hold, and a short request's
	// connection gives its place back as soon as it is answered.
	l := listen(t, 1, 300*time.Millisecond)
	srv := &http.Server{ConnState: l.ConnState, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stream" {
			w.WriteHeader(http.StatusOK)
			http.NewResponseController(w).Flush()
			<-r.Context().Done()
			return
		}
		io.WriteString(w, "ok")
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })

	get := func(c net.Conn, path string) {
		t.Helper()
		_, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
		require.NoError(t, err)
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode)
	}
	quick := func() time.Duration {
		t0 := time.Now()
		get(dial(t, l), "/")
		return time.Since(t0)
	}
	// Answered connections give their places back at once.
	for range 5 {
		require.Less(t, quick(), 250*time.Millisecond)
	}
	get(dial(t, l), "/stream")
	d := quick()
	require.GreaterOrEqual(t, d, 150*time.Millisecond, "the stream's place was not held")
	require.Less(t, d, 3*time.Second)
	require.Less(t, quick(), 250*time.Millisecond, "the stream keeps its place after hold")
}

func TestLongLivedGivesTheConnectionsPlaceBack(t *testing.T) {
	// One place, held for ever unless given back: a handler that says it
	// streams (LongLived) or gives its line's place back (Of) lets the
	// next connection in at once.
	l := listen(t, 1, time.Hour)
	line := New(4)
	streams := make(chan struct{})
	srv := &http.Server{ConnState: l.ConnState, ConnContext: l.ConnContext,
		Handler: line.Handler(func(*http.Request) bool { return true }, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/stream":
				LongLived(r.Context())
			case "/wait":
				Of(r.Context())()
			default:
				io.WriteString(w, "ok")
				return
			}
			w.WriteHeader(http.StatusOK)
			http.NewResponseController(w).Flush()
			select {
			case <-r.Context().Done():
			case <-streams:
			}
		}))}
	go srv.Serve(l)
	t.Cleanup(func() { close(streams); srv.Close() })

	get := func(path string) {
		t.Helper()
		c := dial(t, l)
		c.SetDeadline(time.Now().Add(5 * time.Second))
		_, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
		require.NoError(t, err)
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err, "GET %s: not answered while the streams before it stream", path)
		require.Equal(t, http.StatusOK, res.StatusCode)
	}
	for range 3 {
		get("/stream")
		get("/wait")
	}
	get("/")
	require.Len(t, line, 3, "the streams hold their line's places; the waits gave theirs back (Of)")
}
