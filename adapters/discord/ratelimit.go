package discord

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// limitTransport keeps Discord's 429s from blocking anything but their own
// route, and never past a caller's context. discordgo reads a 429's
// X-RateLimit-* headers and makes every later request of that bucket sleep
// until the reset, holding the bucket's lock and ignoring the context: a
// 60 s Retry-After on one channel held later posts for a minute. This
// transport removes those headers from 429s and instead remembers the
// route until its Retry-After; a call to that route before then gets a
// local 429 with the time left, without reaching Discord, and the
// adapter's call waits it out (context-aware) or gives up at once when it
// is longer than it may wait.
type limitTransport struct {
	next http.RoundTripper
	now  func() time.Time

	mu    sync.Mutex
	until map[string]time.Time // "METHOD route" -> end of its Retry-After
}

func newLimitTransport(next http.RoundTripper) *limitTransport {
	if next == nil {
		next = http.DefaultTransport
	}
	return &limitTransport{next: next, now: time.Now, until: map[string]time.Time{}}
}

func (t *limitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	key := r.Method + " " + bucketPath(r.URL.Path)
	now := t.now()
	t.mu.Lock()
	until, held := t.until[key]
	if held && !now.Before(until) {
		delete(t.until, key)
		held = false
	}
	t.mu.Unlock()
	if held {
		return localLimit(r, until.Sub(now)), nil
	}
	resp, err := t.next.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests {
		return resp, err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	wait := retryAfter(resp.Header, body)
	for k := range resp.Header {
		if strings.HasPrefix(strings.ToLower(k), "x-ratelimit-") {
			resp.Header.Del(k)
		}
	}
	if wait > 0 {
		t.mu.Lock()
		t.until[key] = t.now().Add(wait) // from the 429's arrival, not the request's start
		t.mu.Unlock()
	}
	return resp, nil
}

// bucketPath is the route of a path as Discord buckets it: ids right after
// channels/, guilds/ and webhooks/ (its "major parameters") stay, other
// ids (messages, users) become {id}, so edits of two messages in one
// channel share the channel's limit.
func bucketPath(path string) string {
	parts := strings.Split(path, "/")
	for i := 1; i < len(parts); i++ {
		if !snowflake(parts[i]) {
			continue
		}
		switch parts[i-1] {
		case "channels", "guilds", "webhooks":
		default:
			parts[i] = "{id}"
		}
	}
	return strings.Join(parts, "/")
}

// retryAfter reads a 429's wait: the body's retry_after (seconds, float),
// else the Retry-After header (seconds).
func retryAfter(h http.Header, body []byte) time.Duration {
	var b struct {
		RetryAfter float64 `json:"retry_after"`
	}
	if json.Unmarshal(body, &b) == nil && b.RetryAfter > 0 {
		return time.Duration(b.RetryAfter * float64(time.Second))
	}
	if s, err := strconv.ParseFloat(h.Get("Retry-After"), 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	return 0
}

// localLimit is the 429 a held route gets without reaching Discord.
func localLimit(r *http.Request, left time.Duration) *http.Response {
	body := fmt.Sprintf(`{"message":"rate limited: waiting out Discord's Retry-After","retry_after":%.3f,"global":false}`, left.Seconds())
	return &http.Response{StatusCode: http.StatusTooManyRequests, Status: "429 Too Many Requests", Proto: "HTTP/1.1",
		ProtoMajor: 1, ProtoMinor: 1, Request: r, ContentLength: int64(len(body)),
		Header: http.Header{"Content-Type": {"application/json"}, "Retry-After": {strconv.FormatFloat(left.Seconds(), 'f', 3, 64)}},
		Body:   io.NopCloser(strings.NewReader(body))}
}
