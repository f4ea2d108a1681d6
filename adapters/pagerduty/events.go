package pagerduty

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Limits of the Events API v2
// (https://developer.pagerduty.com/docs/events-api-v2/trigger-events/).
const (
	// MaxSummary is the longest payload.summary PagerDuty keeps.
	MaxSummary = 1024
	// MaxDedupKey is the longest dedup_key PagerDuty accepts.
	MaxDedupKey = 255
	// maxEventBytes is the largest event PagerDuty accepts (~512 KB).
	maxEventBytes = 512 * 1024
	// defaultRateWait is how long to wait after a 429 that names no
	// Retry-After: the integration's budget (about 120 events a minute)
	// refills within a minute.
	defaultRateWait = 30 * time.Second
)

// Event is one Events API v2 event (PagerDuty/api-schema,
// reference/events-v2/openapiv3.json, createV2Event).
type Event struct {
	RoutingKey  string   `json:"routing_key"`
	EventAction string   `json:"event_action"` // trigger, acknowledge, resolve
	DedupKey    string   `json:"dedup_key,omitempty"`
	Payload     *Payload `json:"payload,omitempty"`
	Client      string   `json:"client,omitempty"`
	ClientURL   string   `json:"client_url,omitempty"`
	Links       []Link   `json:"links,omitempty"`
}

// Payload is an event's description of the problem.
type Payload struct {
	Summary       string         `json:"summary"`
	Source        string         `json:"source"`
	Severity      string         `json:"severity"` // critical, error, warning, info
	Timestamp     string         `json:"timestamp,omitempty"`
	Component     string         `json:"component,omitempty"`
	Group         string         `json:"group,omitempty"`
	Class         string         `json:"class,omitempty"`
	CustomDetails map[string]any `json:"custom_details,omitempty"`
}

// Link is a link shown on the alert.
type Link struct {
	Href string `json:"href"`
	Text string `json:"text,omitempty"`
}

// Severities are the severities PagerDuty accepts.
var Severities = []string{"critical", "error", "warning", "info"}

// Error is a failed call to PagerDuty. Its text never holds a routing key
// or an API token.
type Error struct {
	// Op names the call: "events" or "oncalls".
	Op string
	// Status is the HTTP status, 0 when no answer came.
	Status int
	// Reason is PagerDuty's own words (its message and errors), or the
	// transport failure.
	Reason string
	// Wait is how long to wait before retrying after a 429.
	Wait time.Duration
	perm bool
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("pagerduty %s: %s", e.Op, e.Reason)
	}
	return fmt.Sprintf("pagerduty %s: HTTP %d: %s", e.Op, e.Status, e.Reason)
}

// Permanent reports whether a retry cannot succeed: PagerDuty refused the
// request itself (400 invalid event, 401/403 bad key, 404, 413), as
// opposed to a rate limit, a timeout, a 5xx or a network failure.
func (e *Error) Permanent() bool { return e.perm }

// RetryAfter is how long to wait before the next attempt (after a 429),
// zero when the usual backoff applies.
func (e *Error) RetryAfter() time.Duration { return e.Wait }

// classify turns a PagerDuty answer that is not a success into an Error.
func classify(op string, resp *http.Response, body []byte) *Error {
	e := &Error{Op: op, Status: resp.StatusCode, Reason: reasonOf(body)}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		e.Wait = retryAfter(resp.Header.Get("Retry-After"), defaultRateWait)
		if e.Reason == "" {
			e.Reason = "rate limited"
		}
	case resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode >= 500:
	default:
		e.perm = true
	}
	if e.Reason == "" {
		e.Reason = http.StatusText(resp.StatusCode)
	}
	return e
}

// reasonOf reads PagerDuty's explanation from an error body: the Events
// API's {status, message, errors[]} or the REST API's {error: {message,
// errors[]}}. It never echoes the request.
func reasonOf(body []byte) string {
	var b struct {
		Status  string   `json:"status"`
		Message string   `json:"message"`
		Errors  []string `json:"errors"`
		Error   *struct {
			Message string   `json:"message"`
			Errors  []string `json:"errors"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &b) != nil {
		return ""
	}
	msg, errs := b.Message, b.Errors
	if b.Error != nil {
		msg, errs = b.Error.Message, b.Error.Errors
	}
	if msg == "" {
		msg = b.Status
	}
	if len(errs) > 0 {
		msg += " (" + strings.Join(errs, "; ") + ")"
	}
	return cut(msg, 300)
}

// retryAfter reads a Retry-After header in seconds or as an HTTP date.
func retryAfter(h string, def time.Duration) time.Duration {
	if h == "" {
		return def
	}
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
		return 0
	}
	return def
}

// ErrInvalidEvent is returned before anything is sent for an event
// PagerDuty would refuse (no routing key, a dedup key too long, too big).
var ErrInvalidEvent = errors.New("pagerduty: invalid event")

// Enqueue sends ev to {events_url}/v2/enqueue. PagerDuty's answer other
// than 202 comes back as an *Error.
func (c *Client) Enqueue(ctx context.Context, ev Event) error {
	if ev.RoutingKey == "" {
		return fmt.Errorf("%w: no routing key; set routing_key_file under page.pagerduty", ErrInvalidEvent)
	}
	if len(ev.DedupKey) > MaxDedupKey {
		return fmt.Errorf("%w: dedup_key longer than %d characters", ErrInvalidEvent, MaxDedupKey)
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidEvent, err)
	}
	if len(body) > maxEventBytes {
		return fmt.Errorf("%w: %d bytes, PagerDuty takes at most %d", ErrInvalidEvent, len(body), maxEventBytes)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.eventsURL+"/v2/enqueue", bytes.NewReader(body))
	if err != nil {
		return &Error{Op: "events", Reason: "the events_url setting is not a usable URL", perm: true}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	resp, err := c.http.Do(req)
	if err != nil {
		return &Error{Op: "events", Reason: transportReason(err)}
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(io.LimitReader(resp.Body, 64*1024))
	if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusOK {
		return nil
	}
	return classify("events", resp, rb)
}

// transportReason describes a failed request without its URL or anything
// sent.
func transportReason(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	if errors.Is(err, context.Canceled) {
		return "cancelled"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return cut(err.Error(), 200)
}

// cut shortens s to at most n characters, ending with "…" when cut.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
