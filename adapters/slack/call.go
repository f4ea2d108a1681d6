package slack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// Error is a failed Slack Web API call: an "ok": false answer with Slack's
// error code, or a transport failure that outlived the retries.
type Error struct {
	Method string // e.g. "chat.postMessage"
	Code   string // Slack's error code ("channel_not_found"), or "" for transport failures
	Err    error
}

func (e *Error) Error() string {
	if e.Code != "" {
		return "slack " + e.Method + ": " + e.Code
	}
	return "slack " + e.Method + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns Slack's error code of err, or "".
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// retrier is the one place Slack calls are retried. A 429 holds back every
// call of the same method on the same channel (or user group) until its
// Retry-After has passed, without counting as a failed attempt; 5xx and
// network errors back off exponentially, up to attempts in all;
// "ok": false is final.
type retrier struct {
	attempts int
	base     time.Duration
	maxWait  time.Duration
	mu       sync.Mutex
	until    map[string]time.Time // method + " " + key → blocked until
	now      func() time.Time
}

func newRetrier() *retrier {
	return &retrier{attempts: 5, base: 200 * time.Millisecond, maxWait: 30 * time.Second,
		until: map[string]time.Time{}, now: time.Now}
}

type callOpts struct {
	// noWait: do not wait out a 429 (views.open: the trigger dies in 3 s).
	noWait bool
}

// do runs fn, retrying as described on retrier. key is the channel or other
// object the method's rate limit applies to.
func (r *retrier) do(ctx context.Context, method, key string, o callOpts, fn func(context.Context) error) error {
	gate := method + " " + key
	backoff := r.base
	var last error
	limited := 0 // 429s answered so far
	for attempt := 1; attempt <= r.attempts; attempt++ {
		// Re-check after sleeping: another call of the gate may have been
		// told to wait longer meanwhile.
		for wait := r.blocked(gate); wait > 0; wait = r.blocked(gate) {
			if o.noWait || !fits(ctx, wait) {
				return &Error{Method: method, Code: "ratelimited", Err: fmt.Errorf("rate limited for another %s", wait.Round(time.Second))}
			}
			if err := sleep(ctx, wait); err != nil {
				return &Error{Method: method, Err: err}
			}
		}
		err := fn(ctx)
		if err == nil {
			return nil
		}
		last = err
		var rl *slack.RateLimitedError
		var sc slack.StatusCodeError
		var se slack.SlackErrorResponse
		switch {
		case errors.As(err, &rl):
			wait := rl.RetryAfter
			if wait <= 0 {
				wait = time.Second
			}
			r.block(gate, wait)
			if o.noWait || wait > r.maxWait || !fits(ctx, wait) {
				return &Error{Method: method, Code: "ratelimited", Err: err}
			}
			attempt -= delayOnly(&limited)
			continue // waits at the gate above
		case errors.As(err, &se):
			return &Error{Method: method, Code: se.Err, Err: err}
		case errors.As(err, &sc) && sc.Code == 429:
			r.block(gate, time.Second)
			attempt -= delayOnly(&limited)
			continue
		case errors.As(err, &sc) && sc.Code >= 500, isNetErr(err):
		default:
			if code := okFalse(err); code != "" {
				return &Error{Method: method, Code: code, Err: err}
			}
			return &Error{Method: method, Err: err}
		}
		if ctx.Err() != nil || attempt == r.attempts {
			break // no sleep after the last attempt: the failure is reported at once
		}
		jitter := time.Duration(rand.Int64N(int64(backoff/2) + 1))
		if err := sleep(ctx, backoff+jitter); err != nil {
			break
		}
		backoff *= 2
	}
	return &Error{Method: method, Err: fmt.Errorf("gave up after %d attempts: %w", r.attempts, last)}
}

// maxRateLimited bounds how many 429s one call waits out without counting
// them as failed attempts; the call's deadline usually ends it first.
const maxRateLimited = 30

// delayOnly returns 1 while a 429 should only delay the call, not use up
// one of its attempts (those are for 5xx and network errors): a rate-limit
// storm longer than a few Retry-Afters must not drop a post that still has
// time.
func delayOnly(limited *int) int {
	*limited++
	if *limited <= maxRateLimited {
		return 1
	}
	return 0
}

// okFalse recognises the plain errors some slack-go methods return for an
// "ok": false answer (the error string is Slack's code).
func okFalse(err error) string {
	s := err.Error()
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c == '_') {
			return ""
		}
	}
	return s
}

// fits reports whether waiting d leaves ctx time to make the call.
func fits(ctx context.Context, d time.Duration) bool {
	deadline, ok := ctx.Deadline()
	return !ok || time.Until(deadline) > d
}

func isNetErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

func (r *retrier) blocked(gate string) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.until[gate]
	if !ok {
		return 0
	}
	d := t.Sub(r.now())
	if d <= 0 {
		delete(r.until, gate)
		return 0
	}
	return d
}

func (r *retrier) block(gate string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.now().Add(d); t.After(r.until[gate]) {
		r.until[gate] = t
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
