// Package throttle makes guessing credentials slow: failed
// authentications are counted per key (a client address, a token's prefix)
// in fixed windows, and a key over its budget is told to wait. A right
// credential never counts, so a flood of wrong ones from elsewhere cannot
// lock its owner out.
package throttle

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Defaults: 10 failures a minute per key.
const (
	DefaultMax    = 10
	DefaultWindow = time.Minute
	// maxKeys bounds memory: past it, finished windows are dropped first,
	// then the oldest.
	maxKeys = 10000
)

// Limiter counts failures per key. The zero value uses the defaults.
type Limiter struct {
	Max    int
	Window time.Duration
	Now    func() time.Time

	mu   sync.Mutex
	keys map[string]*window
}

type window struct {
	n     int
	start time.Time
}

func (l *Limiter) params() (int, time.Duration, time.Time) {
	max, w := l.Max, l.Window
	if max <= 0 {
		max = DefaultMax
	}
	if w <= 0 {
		w = DefaultWindow
	}
	now := time.Now()
	if l.Now != nil {
		now = l.Now()
	}
	return max, w, now
}

// Wait reports how long key must wait before its next attempt counts, or 0
// when it is within its budget.
func (l *Limiter) Wait(key string) time.Duration {
	max, w, now := l.params()
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.keys[key]
	if !ok || now.Sub(e.start) >= w || e.n < max {
		return 0
	}
	return e.start.Add(w).Sub(now)
}

// Fail counts a failed attempt of key and returns Wait(key) after it.
func (l *Limiter) Fail(key string) time.Duration {
	max, w, now := l.params()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.keys == nil {
		l.keys = map[string]*window{}
	}
	e, ok := l.keys[key]
	if !ok || now.Sub(e.start) >= w {
		if !ok && len(l.keys) >= maxKeys {
			l.prune(now, w)
		}
		e = &window{start: now}
		l.keys[key] = e
	}
	e.n++
	if e.n < max {
		return 0
	}
	return e.start.Add(w).Sub(now)
}

// prune drops finished windows, and the oldest half if none had finished.
func (l *Limiter) prune(now time.Time, w time.Duration) {
	for k, e := range l.keys {
		if now.Sub(e.start) >= w {
			delete(l.keys, k)
		}
	}
	if len(l.keys) < maxKeys {
		return
	}
	n := 0
	for k := range l.keys {
		delete(l.keys, k)
		if n++; n >= maxKeys/2 {
			return
		}
	}
}

// Prefix is the part of a presented token that names its failures: enough
// to group guesses at one token, too little to say anything about it.
func Prefix(token string) string {
	if len(token) > 6 {
		return token[:6]
	}
	return token
}

// Seconds rounds d up to whole seconds for a Retry-After header.
func Seconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	return max(s, 1)
}

// ClientAddr is the address a request came from (the connection's peer),
// the key failures and requests in flight are counted by.
func ClientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
