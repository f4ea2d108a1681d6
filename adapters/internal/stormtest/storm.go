// Package stormtest puts a misbehaving network between an adapter and a fake
// chat platform, for tests: while a storm blows, requests are answered with
// 5xx, 429 with Retry-After (then 429 again for every request of the same
// rate-limit scope until the advertised time) or a TCP connection reset,
// instead of reaching the fake. Every request is recorded, so a test can
// check that Retry-After was honoured and count what the storm cost.
//
// Faults are answered before the fake sees the request: a failed request
// never had an effect, as with a platform's edge refusing it.
package stormtest

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"
)

// Fault is how one request is refused during a storm.
type Fault struct {
	Status int // an HTTP status (5xx, or 429 with a Retry-After of Wait)
	Wait   time.Duration
	Reset  bool // the TCP connection is reset (RST) instead of answered
}

// Common faults.
var (
	ServerError = Fault{Status: http.StatusInternalServerError}
	BadGateway  = Fault{Status: http.StatusBadGateway}
	Unavailable = Fault{Status: http.StatusServiceUnavailable}
	Timeout     = Fault{Status: http.StatusGatewayTimeout}
	Reset       = Fault{Reset: true}
)

// RateLimit is a 429 advertising wait.
func RateLimit(wait time.Duration) Fault {
	return Fault{Status: http.StatusTooManyRequests, Wait: wait}
}

func (f Fault) String() string {
	switch {
	case f.Reset:
		return "reset"
	case f.Status == http.StatusTooManyRequests:
		return fmt.Sprintf("429 (Retry-After %s)", f.Wait)
	}
	return fmt.Sprint(f.Status)
}

// Dialect is what differs between platforms.
type Dialect struct {
	// Scope names the rate-limit scope of a request, e.g. the Slack method
	// and channel, or the Discord route and its channel.
	Scope func(r *http.Request, body []byte) string
	// RateLimited writes a 429 asking to wait at least wait, and returns
	// the wait it advertised (platforms round it).
	RateLimited func(w http.ResponseWriter, wait time.Duration) time.Duration
}

// Exchange is one request the proxy received.
type Exchange struct {
	Scope string
	Call  [32]byte // hash of method, path and body: a retry of the same call has the same
	At    time.Time
	Done  time.Time // when the answer was written
	Fault string    // "" when the request went through to the fake
	Wait  time.Duration
	// Status is what the client got (0 for a reset).
	Status int
}

// Proxy is the storm: an HTTP server in front of a fake platform.
type Proxy struct {
	*httptest.Server
	d     Dialect
	proxy *httputil.ReverseProxy

	mu      sync.Mutex
	match   func(scope string) bool // nil: no storm
	pattern []Fault
	seq     map[string]int
	limited map[string]time.Time // scope → end of its advertised wait
	log     []Exchange
}

// New starts a proxy to target (the fake's base URL), closed when the test
// ends.
func New(t testing.TB, target string, d Dialect) *Proxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{d: d, seq: map[string]int{}, limited: map[string]time.Time{}}
	p.proxy = httputil.NewSingleHostReverseProxy(u)
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.Close)
	return p
}

// Blow starts a storm on every scope: request k of a scope is refused with
// pattern[k % len(pattern)], and a 429 refuses the scope until its
// Retry-After has passed. Calm ends it.
func (p *Proxy) Blow(pattern ...Fault) { p.BlowOn(func(string) bool { return true }, pattern...) }

// BlowOn starts a storm on the scopes match accepts.
func (p *Proxy) BlowOn(match func(scope string) bool, pattern ...Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.match, p.pattern = match, pattern
}

// BlowFor blows a storm on every scope for d, then calms down.
func (p *Proxy) BlowFor(d time.Duration, pattern ...Fault) {
	p.Blow(pattern...)
	time.AfterFunc(d, p.Calm)
}

// Calm ends the storm. Waits already advertised still hold.
func (p *Proxy) Calm() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.match = nil
}

// Exchanges returns what the proxy received, in order of arrival.
func (p *Proxy) Exchanges() []Exchange {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.log)
}

// Faults counts the requests refused, by fault.
func (p *Proxy) Faults() map[string]int {
	out := map[string]int{}
	for _, e := range p.Exchanges() {
		if e.Fault != "" {
			out[e.Fault]++
		}
	}
	return out
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	scope := p.d.Scope(r, body)
	h := sha256.New()
	fmt.Fprintf(h, "%s %s\n", r.Method, r.URL.Path)
	h.Write(body)
	e := Exchange{Scope: scope, At: time.Now()}
	h.Sum(e.Call[:0])

	p.mu.Lock()
	var f *Fault
	if until, ok := p.limited[scope]; ok && e.At.Before(until) {
		rl := RateLimit(until.Sub(e.At))
		f = &rl
	} else if p.match != nil && p.match(scope) && len(p.pattern) > 0 {
		f = &p.pattern[p.seq[scope]%len(p.pattern)]
		p.seq[scope]++
	}
	p.mu.Unlock()

	switch {
	case f == nil:
		rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		p.proxy.ServeHTTP(rec, r)
		e.Status = rec.status
	case f.Reset:
		e.Fault = "reset"
		resetConn(w)
	case f.Status == http.StatusTooManyRequests:
		e.Fault, e.Status = "429", f.Status
		e.Wait = p.d.RateLimited(w, f.Wait)
	default:
		e.Fault, e.Status = fmt.Sprint(f.Status), f.Status
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(f.Status)
		_, _ = io.WriteString(w, "<html><body><h1>"+http.StatusText(f.Status)+"</h1></body></html>")
	}
	e.Done = time.Now()
	p.mu.Lock()
	if e.Fault == "429" {
		if until := e.Done.Add(e.Wait); until.After(p.limited[scope]) {
			p.limited[scope] = until
		}
	}
	p.log = append(p.log, e)
	p.mu.Unlock()
}

// resetConn closes the request's TCP connection with an RST.
func resetConn(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("storm: the response writer cannot be hijacked")
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) { s.status = code; s.ResponseWriter.WriteHeader(code) }

// Violations lists requests that came before an advertised Retry-After had
// passed in their scope: the retry of the same call at any time inside
// the wait, and other calls of the scope once inFlight has passed after the
// 429 was answered (earlier ones may have been sent before it arrived).
func (p *Proxy) Violations(inFlight time.Duration) []string {
	log := p.Exchanges()
	var out []string
	for i, limit := range log {
		if limit.Fault != "429" {
			continue
		}
		until := limit.Done.Add(limit.Wait)
		for _, e := range log[i+1:] {
			if e.Scope != limit.Scope || !e.At.Before(until) || e.At.Before(limit.Done) {
				continue
			}
			early := until.Sub(e.At)
			switch {
			case e.Call == limit.Call:
				out = append(out, fmt.Sprintf("%s: the same call retried %s before the Retry-After of %s had passed",
					e.Scope, early.Round(time.Millisecond), limit.Wait))
			case e.At.Sub(limit.Done) >= inFlight:
				out = append(out, fmt.Sprintf("%s: another call %s after a 429 asking for %s",
					e.Scope, e.At.Sub(limit.Done).Round(time.Millisecond), limit.Wait))
			}
		}
	}
	return out
}

// CeilSeconds rounds a wait up to whole seconds, as a Retry-After header
// carries it.
func CeilSeconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }
