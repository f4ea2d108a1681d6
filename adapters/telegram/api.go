package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The Bot API is a handful of JSON methods over HTTPS; the adapter calls
// them with net/http (no library): it needs seven methods, control of every
// retry (429 parameters.retry_after, 5xx, network errors) and errors that
// never carry the token, which sits in every request's path.

// apiError is a Bot API answer with "ok": false (or a non-JSON failure).
type apiError struct {
	Method      string
	Status      int    // HTTP status
	Code        int    // error_code
	Description string // Telegram's description, e.g. "Bad Request: chat not found"
	RetryAfter  time.Duration
}

func (e *apiError) Error() string {
	d := e.Description
	if d == "" {
		d = http.StatusText(e.Status)
	}
	return fmt.Sprintf("telegram %s: %d %s", e.Method, e.Code, d)
}

// Permanent reports whether no retry can fix the call (lifecycle.IsPermanent):
// Telegram refused the request itself — the chat or message is gone, the bot
// was removed or blocked, the token is wrong, a limit is broken. 429, 5xx,
// network failures and timeouts are not permanent.
func (e *apiError) Permanent() bool {
	switch e.Code {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		return true
	}
	return false
}

// notModified: an edit that changes nothing, which Telegram refuses; the
// copy already shows what was meant.
func notModified(err error) bool {
	var e *apiError
	return errors.As(err, &e) && e.Code == http.StatusBadRequest && strings.Contains(e.Description, "message is not modified")
}

// response is every Bot API answer.
type response struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  *struct {
		RetryAfter      int   `json:"retry_after"`
		MigrateToChatID int64 `json:"migrate_to_chat_id"`
	} `json:"parameters"`
}

// client calls Bot API methods.
type client struct {
	base    string // <api_url>/bot<token>/
	http    *http.Client
	retry   retryPolicy
	pace    *pacer
	onRetry func(method string, err error)
}

// retryPolicy bounds retries of one call.
type retryPolicy struct {
	Attempts    int
	BaseBackoff time.Duration
	MaxWait     time.Duration // longest retry_after honoured inside one call
}

// call posts params to method and decodes the result into out (may be nil).
// A 429 waits its retry_after, 5xx and network errors back off; the last
// error is returned (transient) when attempts run out.
func (c *client) call(ctx context.Context, method string, params, out any) error {
	body, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("telegram %s: encoding the request: %w", method, err)
	}
	var last error
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
				return fmt.Errorf("telegram %s: %w (last: %v)", method, ctx.Err(), last)
			case <-t.C:
			}
		}
		last = c.once(ctx, method, body, out)
		if last == nil {
			return nil
		}
		var ae *apiError
		if errors.As(last, &ae) && ae.Code != http.StatusTooManyRequests && ae.Status < 500 {
			return last // Telegram refused the request itself
		}
		if ctx.Err() != nil {
			return last
		}
		if c.onRetry != nil {
			c.onRetry(method, last)
		}
	}
	return last
}

// once makes one request. Network errors are rewritten without the URL,
// which holds the token.
func (c *client) once(ctx context.Context, method string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+method, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("telegram %s: building the request failed", method)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) {
			if inner := ue.Unwrap(); inner != nil {
				err = inner
			}
		}
		return fmt.Errorf("telegram %s: %s", method, scrub(err.Error(), c.base))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("telegram %s: reading the answer: %s", method, scrub(err.Error(), c.base))
	}
	var r response
	if err := json.Unmarshal(b, &r); err != nil {
		return &apiError{Method: method, Status: resp.StatusCode, Code: resp.StatusCode, Description: "answer is not JSON"}
	}
	if !r.OK {
		e := &apiError{Method: method, Status: resp.StatusCode, Code: r.ErrorCode, Description: r.Description}
		if e.Code == 0 {
			e.Code = resp.StatusCode
		}
		if r.Parameters != nil && r.Parameters.RetryAfter > 0 {
			e.RetryAfter = time.Duration(r.Parameters.RetryAfter) * time.Second
		}
		return e
	}
	if out != nil {
		if err := json.Unmarshal(r.Result, out); err != nil {
			return fmt.Errorf("telegram %s: reading the result: %w", method, err)
		}
	}
	return nil
}

// scrub removes the base URL (with the token) and any bot token from s.
func scrub(s, base string) string {
	s = strings.ReplaceAll(s, base, "<api>/")
	if i := strings.Index(s, "/bot"); i >= 0 {
		if j := strings.IndexAny(s[i+4:], "/ \"'"); j > 0 {
			s = s[:i+4] + "<token>" + s[i+4+j:]
		}
	}
	return s
}

// pacer spaces messages sent to one chat: Telegram allows about one message
// per second in a chat and 20 per minute in a group, and answers 429 beyond.
// Waiting here is cheaper than a 429 storm, and keeps the order of posts.
type pacer struct {
	every    time.Duration // between two messages to one chat
	groupWin time.Duration // the group window (a minute)
	groupMax int           // messages per group window
	mu       sync.Mutex
	chats    map[string][]time.Time // recent sends per chat, newest last
}

func newPacer(every time.Duration) *pacer {
	return &pacer{every: every, groupWin: time.Minute, groupMax: 20, chats: map[string][]time.Time{}}
}

// wait blocks until chat may get another message, and books it.
func (p *pacer) wait(ctx context.Context, chat string) error {
	if p == nil || p.every <= 0 {
		return nil
	}
	group := strings.HasPrefix(chat, "-")
	for {
		p.mu.Lock()
		now := time.Now()
		sent := p.chats[chat]
		for len(sent) > 0 && now.Sub(sent[0]) > p.groupWin {
			sent = sent[1:]
		}
		var next time.Time
		if n := len(sent); n > 0 {
			next = sent[n-1].Add(p.every)
		}
		if group && len(sent) >= p.groupMax {
			if t := sent[len(sent)-p.groupMax].Add(p.groupWin); t.After(next) {
				next = t
			}
		}
		if !next.After(now) {
			p.chats[chat] = append(sent, now)
			p.mu.Unlock()
			return nil
		}
		p.chats[chat] = sent
		p.mu.Unlock()
		t := time.NewTimer(next.Sub(now))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
