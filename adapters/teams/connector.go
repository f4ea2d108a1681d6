package teams

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

// The Bot Connector REST API (v3), called at a conversation's serviceUrl
// with net/http: four operations (create a conversation, send, reply,
// update) and full control of retries and of where requests may go.
// https://learn.microsoft.com/azure/bot-service/rest-api/bot-framework-rest-connector-api-reference

// DefaultServiceURLAllow are the hosts a serviceUrl may name: Teams'
// public, GCC and Bot Framework service hosts.
var DefaultServiceURLAllow = []string{"smba.trafficmanager.net", "*.botframework.com", "*.teams.microsoft.com"}

// apiError is the Connector refusing (or failing) a call: its status and
// the error body {"error": {"code", "message"}}.
type apiError struct {
	Op         string
	Status     int
	Code       string
	Message    string
	RetryAfter time.Duration
}

func (e *apiError) Error() string {
	s := fmt.Sprintf("teams: %s: HTTP %d", e.Op, e.Status)
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Permanent reports whether no retry can fix the call
// (lifecycle.IsPermanent): the conversation or activity is gone, the bot
// was removed, the body breaks a limit. 429, 5xx and network failures are
// not permanent.
func (e *apiError) Permanent() bool {
	switch e.Status {
	case http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusRequestEntityTooLarge:
		return true
	}
	return false
}

// egressError is a serviceUrl the allow list does not admit.
type egressError struct{ host string }

func (e *egressError) Error() string {
	return fmt.Sprintf("teams: serviceUrl host %q is not one Teams uses; add it to TEAMS_SERVICE_URL_ALLOW if it is", e.host)
}

func (e *egressError) Permanent() bool { return true }

// hostAllow decides which serviceUrls the adapter sends to: entries are
// host names, host:port, "*.suffix", or "http://host:port" to admit a
// plain-HTTP test server; everything else must be https.
type hostAllow []string

func (h hostAllow) check(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil {
		return &egressError{host: raw}
	}
	host := strings.ToLower(u.Host)
	for _, e := range h {
		e = strings.ToLower(strings.TrimSpace(e))
		if rest, ok := strings.CutPrefix(e, "http://"); ok {
			if u.Scheme == "http" && host == strings.TrimRight(rest, "/") {
				return nil
			}
			continue
		}
		if u.Scheme != "https" {
			continue
		}
		name := u.Hostname()
		switch {
		case strings.HasPrefix(e, "*."):
			if strings.HasSuffix(name, e[1:]) && u.Port() == "" {
				return nil
			}
		case e == host || (e == name && u.Port() == ""):
			return nil
		}
	}
	return &egressError{host: u.Host}
}

// connector calls the Bot Connector.
type connector struct {
	client  *http.Client
	tokens  *tokenSource
	allow   hostAllow
	retry   retryPolicy
	onRetry func(op string, err error)
}

// retryPolicy bounds retries of one call.
type retryPolicy struct {
	Attempts    int
	BaseBackoff time.Duration
	MaxWait     time.Duration // longest Retry-After honoured inside one call
}

// call sends body to serviceURL+path and decodes the answer into out
// (may be nil). 429 waits its Retry-After, 5xx and network errors back off,
// a refused token is fetched again once; the last error is returned
// (transient) when attempts run out.
func (c *connector) call(ctx context.Context, op, method, serviceURL, path string, body, out any) error {
	if err := c.allow.check(serviceURL); err != nil {
		return err
	}
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("teams: %s: encoding the request: %w", op, err)
	}
	endpoint := strings.TrimRight(serviceURL, "/") + path
	var last error
	renewed := false
	for attempt := 0; attempt < c.retry.Attempts; attempt++ {
		if attempt > 0 {
			wait := c.retry.BaseBackoff << (attempt - 1)
			var ae *apiError
			if errors.As(last, &ae) && ae.RetryAfter > 0 {
				if ae.RetryAfter > c.retry.MaxWait {
					return last // the Router retries it later
				}
				wait = ae.RetryAfter
			}
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("teams: %s: %w (last: %v)", op, ctx.Err(), last)
			case <-t.C:
			}
		}
		token, err := c.tokens.get(ctx)
		if err != nil {
			var te *tokenError
			if errors.As(err, &te) && te.Permanent() {
				return err
			}
			last = err
			continue
		}
		last = c.once(ctx, op, method, endpoint, token, b, out)
		if last == nil {
			return nil
		}
		var ae *apiError
		if errors.As(last, &ae) {
			if ae.Status == http.StatusUnauthorized && !renewed {
				c.tokens.drop(token)
				renewed = true
				attempt-- // a renewed token is not a retry of the same request
				continue
			}
			if ae.Status != http.StatusTooManyRequests && ae.Status < 500 {
				return last
			}
		}
		if ctx.Err() != nil {
			return last
		}
		if c.onRetry != nil {
			c.onRetry(op, last)
		}
	}
	return last
}

func (c *connector) once(ctx context.Context, op, method, endpoint, token string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, endpoint, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("teams: %s: building the request failed", op)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("teams: %s: %w", op, unwrapURL(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("teams: %s: reading the answer: %w", op, err)
	}
	if resp.StatusCode/100 != 2 {
		e := &apiError{Op: op, Status: resp.StatusCode, RetryAfter: retryAfter(resp.Header.Get("Retry-After"), time.Now())}
		var eb struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(raw, &eb) == nil {
			e.Code, e.Message = eb.Error.Code, eb.Error.Message
		}
		return e
	}
	if out != nil && len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("teams: %s: reading the answer: %w", op, err)
		}
	}
	return nil
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(h, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
