package app

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/askbridge/askbridge/internal/throttle"
)

// Limits on what a client may hold open before it is authenticated: a
// slow-loris wave (many connections, one byte every few seconds) must not
// keep connections open for long, and a healthy request is served
// meanwhile.
const (
	// headerTimeout bounds reading a request's headers.
	headerTimeout = 10 * time.Second
	// idleTimeout closes a kept-alive connection that sends nothing more.
	idleTimeout = 60 * time.Second
	// chatBodyTimeout bounds reading the body of a platform's callback or
	// a sign-in: Slack, Discord and a browser send a few kilobytes at once.
	chatBodyTimeout = 5 * time.Second
	// apiBodyTimeout bounds reading an API body (up to 1 MiB).
	apiBodyTimeout = 15 * time.Second
	// DefaultConnsPerIP bounds the connections one client address may hold
	// open at once; more are closed as they arrive. It is high because an
	// agent runtime parks a long-poll per waiting question (the bench parks
	// 10,000 from one address); behind a load balancer every client shares
	// its address: raise it (Settings.ConnsPerIP).
	DefaultConnsPerIP = 16384
	// unauthenticatedPerIP bounds the requests one client address may have
	// in flight at once on the endpoints anyone may reach before any
	// credential is checked (platform callbacks, sign-in): a click or a
	// sign-in takes milliseconds.
	unauthenticatedPerIP = 64
)

// perIPInFlight answers 429 to a client address that already has max
// requests in flight on the platform callbacks and sign-in.
type perIPInFlight struct {
	next http.Handler
	max  int
	mu   sync.Mutex
	n    map[string]int
}

func boundUnauthenticated(next http.Handler, max int) http.Handler {
	return &perIPInFlight{next: next, max: max, n: map[string]int{}}
}

func (b *perIPInFlight) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !unauthenticated(r.URL.Path) {
		b.next.ServeHTTP(w, r)
		return
	}
	ip := throttle.ClientAddr(r)
	b.mu.Lock()
	if b.n[ip] >= b.max {
		b.mu.Unlock()
		w.Header().Set("Retry-After", "1")
		http.Error(w, "too many requests in flight from this address", http.StatusTooManyRequests)
		return
	}
	b.n[ip]++
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		if b.n[ip]--; b.n[ip] <= 0 {
			delete(b.n, ip)
		}
		b.mu.Unlock()
	}()
	b.next.ServeHTTP(w, r)
}

// unauthenticated reports the endpoints anyone may reach before any
// credential is checked: the platform callbacks (checked by their
// signatures) and the inbox's sign-in.
func unauthenticated(path string) bool {
	return strings.HasPrefix(path, "/slack/") || strings.HasPrefix(path, "/discord/") || strings.HasPrefix(path, "/telegram/") || path == "/teams/messages" || path == "/login"
}

// bodyDeadline gives a request's body its endpoint's time to arrive: chat
// for platform callbacks and sign-in, api for the rest. The deadline is set
// when the handler starts and lifted as soon as the body has been read to
// its end (or closed), so long-polls and streams are not cut; a body that
// does not arrive in time fails the handler's read, and the connection is
// closed. Nothing is copied: the handler reads the body as it comes.
func bodyDeadline(next http.Handler, chat, api time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		d := api
		if unauthenticated(r.URL.Path) {
			d = chat
		}
		rc := http.NewResponseController(w)
		if rc.SetReadDeadline(time.Now().Add(d)) == nil {
			r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the read deadline once the body is read or closed.
type deadlineBody struct {
	io.ReadCloser
	rc     *http.ResponseController
	lifted bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.lifted {
		var ne net.Error
		if !(errors.As(err, &ne) && ne.Timeout()) {
			b.lift()
		}
	}
	return n, err
}

func (b *deadlineBody) Close() error {
	b.lift()
	return b.ReadCloser.Close()
}

func (b *deadlineBody) lift() {
	if !b.lifted {
		b.lifted = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
}

// perIPListener closes connections from an address that already holds max.
type perIPListener struct {
	net.Listener
	max int
	mu  sync.Mutex
	n   map[string]int
}

func limitPerIP(ln net.Listener, max int) net.Listener {
	if max <= 0 {
		return ln
	}
	return &perIPListener{Listener: ln, max: max, n: map[string]int{}}
}

func (l *perIPListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := remoteIP(c)
		l.mu.Lock()
		if l.n[ip] >= l.max {
			l.mu.Unlock()
			_ = c.Close()
			continue
		}
		l.n[ip]++
		l.mu.Unlock()
		return &countedConn{Conn: c, l: l, ip: ip}, nil
	}
}

// release gives back one of ip's connections.
func (l *perIPListener) release(ip string) {
	l.mu.Lock()
	if l.n[ip]--; l.n[ip] <= 0 {
		delete(l.n, ip)
	}
	l.mu.Unlock()
}

func remoteIP(c net.Conn) string {
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String()
	}
	return host
}

type countedConn struct {
	net.Conn
	l  *perIPListener
	ip string
	// given is set once the connection's place in the count is given
	// back (Close) or handed over (KeepCount).
	given atomic.Bool
}

func (c *countedConn) Close() error {
	if c.given.CompareAndSwap(false, true) {
		c.l.release(c.ip)
	}
	return c.Conn.Close()
}

// KeepCount hands the connection's place in its address's count to the
// caller: the long-poll parker holds a waiting connection's socket after
// closing the connection itself, and calls release (once) when it closes
// the socket, so parked waits still count against the address's limit.
func (c *countedConn) KeepCount() (release func()) {
	if !c.given.CompareAndSwap(false, true) {
		return func() {}
	}
	l, ip := c.l, c.ip
	return func() { l.release(ip) }
}

// The counted connection keeps what the server and the long-poll parker
// look for on a TCP connection: its file descriptor (the parker watches
// hang-ups through epoll instead of a goroutine per waiter), sendfile and
// half-close.

func (c *countedConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.New("not a system connection")
}

func (c *countedConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

func (c *countedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
