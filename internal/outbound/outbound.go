// Package outbound observes the bridge's calls to the outside (Slack,
// Discord, resume webhooks and any later surface or pager): one labelled
// http.RoundTripper reports each call's platform, method, outcome and
// latency, and every Retry-After a platform asks for, to an Observer. A
// surface gets it by having its HTTP transport wrapped once where the
// bridge is wired (app), so no adapter imports the metrics.
package outbound

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Outcomes of a call, the values of the metrics' outcome label.
const (
	OK          = "ok"
	RateLimited = "rate_limited"
	ClientError = "client_error"
	ServerError = "server_error"
	Network     = "network"
)

// Observer is told of every call a Transport carries. Both methods must
// be cheap and must not block.
type Observer interface {
	// Call reports one call: platform ("slack"), method (a name of few
	// values, never an id or a token), outcome (OK …) and how long it took
	// until the response headers (or the error).
	Call(platform, method, outcome string, took time.Duration)
	// RetryAfter reports the wait a platform asked for with Retry-After
	// (a 429, or a 503 that names one).
	RetryAfter(platform string, wait time.Duration)
}

// MethodFunc names a request's method for the metrics. It must return one
// of few values: never an id, a token or free text.
type MethodFunc func(r *http.Request) string

// Transport wraps next (nil: http.DefaultTransport) so every call it
// carries is reported to o as platform's, its method named by method
// (nil: PathMethod).
func Transport(next http.RoundTripper, platform string, o Observer, method MethodFunc) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	if method == nil {
		method = PathMethod
	}
	if o == nil {
		return next
	}
	return &transport{next: next, platform: platform, o: o, method: method}
}

type transport struct {
	next     http.RoundTripper
	platform string
	o        Observer
	method   MethodFunc
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(r)
	took := time.Since(start)
	var status int
	if resp != nil {
		status = resp.StatusCode
	}
	t.o.Call(t.platform, t.method(r), Outcome(status, err), took)
	if resp != nil && (status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable) {
		if wait, ok := RetryAfterOf(resp.Header, time.Now()); ok {
			t.o.RetryAfter(t.platform, wait)
		}
	}
	return resp, err
}

// Outcome classifies a call by its status (0 when there was no response)
// and error.
func Outcome(status int, err error) string {
	switch {
	case err != nil || status == 0:
		return Network
	case status == http.StatusTooManyRequests:
		return RateLimited
	case status >= 500:
		return ServerError
	case status >= 400:
		return ClientError
	}
	return OK
}

// RetryAfterOf reads a Retry-After header (seconds, possibly fractional
// as Discord sends them, or an HTTP date).
func RetryAfterOf(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// PathMethod names a request by its HTTP method and its path with every
// segment that could be an id or a token replaced by {id}: a segment is
// kept only if it is a short word (at most 24) of letters, '.', '_', '-' or '@', or an
// API version (v10). "POST /api/v10/channels/{id}/messages".
func PathMethod(r *http.Request) string {
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	for i, s := range segs {
		if !word(s) {
			segs[i] = "{id}"
		}
	}
	return r.Method + " /" + strings.Join(segs, "/")
}

// SlackMethod names a Slack Web API call by its method (chat.postMessage);
// any other URL (a response_url) is "response_url".
func SlackMethod(r *http.Request) string {
	p := r.URL.Path
	if i := strings.LastIndex(p, "/api/"); i >= 0 && word(p[i+5:]) {
		return p[i+5:]
	}
	return "response_url"
}

// LastSegmentMethod names a call by the last segment of its path when it is
// a plain word (Telegram's /bot<token>/sendMessage is "sendMessage", never
// the token; PagerDuty's /v2/enqueue is "enqueue"), else by its HTTP method.
func LastSegmentMethod(r *http.Request) string {
	p := strings.TrimSuffix(r.URL.Path, "/")
	if i := strings.LastIndex(p, "/"); i >= 0 && word(p[i+1:]) {
		return p[i+1:]
	}
	return r.Method
}

// HTTPMethod names a request by its HTTP method alone (resume webhooks,
// whose URLs are the agents').
func HTTPMethod(r *http.Request) string { return r.Method }

func word(s string) bool {
	if s == "" || len(s) > 24 {
		return len(s) == 0
	}
	if len(s) >= 2 && s[0] == 'v' && strings.Trim(s[1:], "0123456789") == "" {
		return true
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '_' || c == '-' || c == '@') {
			return false
		}
	}
	return true
}
