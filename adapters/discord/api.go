package discord

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
)

// Discord JSON error codes the adapter acts on.
// https://discord.com/developers/docs/topics/opcodes-and-status-codes#json
const (
	codeUnknownMessage     = 10008
	codeUnknownWebhook     = 10015
	codeUnknownInteraction = 10062
	codeAlreadyAcked       = 40060
	codeInvalidToken       = 50027
)

// rewriteTransport sends requests meant for discordgo's built-in API base
// to the configured one (DISCORD_API_URL): discordgo computes its endpoint
// URLs at package init, so the base can only be changed on the way out.
type rewriteTransport struct {
	from string // discordgo.EndpointAPI, ends with "/"
	to   *url.URL
	next http.RoundTripper
}

func (t *rewriteTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	u := r.URL.String()
	if strings.HasPrefix(u, t.from) {
		nu, err := url.Parse(strings.TrimSuffix(t.to.String(), "/") + "/" + strings.TrimPrefix(u, t.from))
		if err != nil {
			return nil, err
		}
		r = r.Clone(r.Context())
		r.URL = nu
		r.Host = nu.Host
	}
	return t.next.RoundTrip(r)
}

// apiError is a Discord API failure without anything secret in it: no
// token, no request URL (webhook URLs carry interaction tokens).
type apiError struct {
	Op      string
	Status  int
	Code    int
	Message string
	Err     error
}

func (e *apiError) Error() string {
	switch {
	case e.Status != 0:
		s := fmt.Sprintf("discord: %s: HTTP %d", e.Op, e.Status)
		if e.Message != "" {
			s += ": " + e.Message
		}
		if e.Code != 0 {
			s += fmt.Sprintf(" (code %d)", e.Code)
		}
		return s
	case e.Err != nil:
		return "discord: " + e.Op + ": " + e.Err.Error()
	}
	return "discord: " + e.Op + " failed"
}

func (e *apiError) Unwrap() error { return e.Err }

// retryable reports whether the failure may pass on its own: 5xx, network
// errors and timeouts of one attempt.
func (e *apiError) retryable() bool {
	if e.Status >= 500 {
		return true
	}
	return e.Status == 0 && e.Err != nil && !errors.Is(e.Err, context.Canceled)
}

// classify turns a discordgo error into an *apiError. Errors that would
// print a URL (url.Error carries the webhook token in its path) keep only
// their cause.
func classify(op string, err error) *apiError {
	var rest *discordgo.RESTError
	if errors.As(err, &rest) {
		e := &apiError{Op: op, Status: rest.Response.StatusCode}
		if rest.Message != nil {
			e.Code, e.Message = rest.Message.Code, rest.Message.Message
		}
		return e
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return &apiError{Op: op, Err: ue.Err}
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return &apiError{Op: op, Err: ne}
	}
	// discordgo reports a 502 it gave up on as a plain error.
	if strings.HasPrefix(err.Error(), "Exceeded Max retries HTTP 5") {
		return &apiError{Op: op, Status: http.StatusBadGateway}
	}
	return &apiError{Op: op, Err: err}
}

// retryPolicy bounds the retries of one Discord call.
type retryPolicy struct {
	Attempts    int           // total attempts for 5xx and network errors
	BaseBackoff time.Duration // first backoff, doubled each time, with jitter
	MaxWait     time.Duration // longest Retry-After the call will honour
}

// call runs fn with discordgo's own sleeping retries off, so a 429 waits
// here for its Retry-After without holding more than its own bucket and
// gives up when ctx ends; 5xx and network errors retry with backoff.
func (a *Adapter) call(ctx context.Context, op string, fn func(opts ...discordgo.RequestOption) error) error {
	opts := []discordgo.RequestOption{
		discordgo.WithContext(ctx),
		discordgo.WithRetryOnRatelimit(false),
		discordgo.WithRestRetries(0),
	}
	backoff := a.retry.BaseBackoff
	failures := 0
	for {
		err := fn(opts...)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return &apiError{Op: op, Err: ctx.Err()}
		}
		var wait time.Duration
		var rl *discordgo.RateLimitError
		if errors.As(err, &rl) {
			wait = rl.RetryAfter
			if wait <= 0 {
				wait = 100 * time.Millisecond
			}
			if wait > a.retry.MaxWait {
				return &apiError{Op: op, Status: http.StatusTooManyRequests, Message: "rate limited for " + wait.String()}
			}
			a.log.Debug("discord rate limit, waiting", "op", op, "retry_after", wait)
		} else {
			ae := classify(op, err)
			failures++
			if !ae.retryable() || failures >= a.retry.Attempts {
				return ae
			}
			wait = backoff + time.Duration(rand.Int64N(int64(backoff)/2+1))
			backoff *= 2
			a.log.Debug("discord call failed, retrying", "op", op, "err", ae, "in", wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return &apiError{Op: op, Err: ctx.Err()}
		case <-t.C:
		}
	}
}

func errCode(err error) int {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.Code
	}
	return 0
}
