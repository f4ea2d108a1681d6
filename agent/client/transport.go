package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
)

func (c *Client) projectPath(parts ...string) string {
	var b strings.Builder
	b.WriteString("/api/projects/")
	b.WriteString(url.PathEscape(c.project))
	for _, p := range parts {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(p))
	}
	return b.String()
}

// do sends one request and decodes a 2xx body into out. It returns the
// HTTP status.
func (c *Client) do(ctx context.Context, method, path string, in, out any) (int, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, fmt.Errorf("askbridge: encoding %s %s: %w", method, pathOnly(path), err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return 0, fmt.Errorf("askbridge: %s %s: %w", method, pathOnly(path), err)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	if c.traceparent != "" {
		req.Header.Set("traceparent", c.traceparent)
		if c.tracestate != "" {
			req.Header.Set("tracestate", c.tracestate)
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("askbridge: %s %s: %w", method, pathOnly(path), c.scrub(err))
	}
	defer resp.Body.Close()
	if c.notice != nil {
		for _, n := range resp.Header.Values(NoticeHeader) {
			c.notice(n)
		}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, apiError(method, path, resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return resp.StatusCode, fmt.Errorf("askbridge: %s %s: decoding the response: %w", method, pathOnly(path), err)
	}
	return resp.StatusCode, nil
}

// scrub makes sure no error text carries the token, whatever the transport
// put in it.
func (c *Client) scrub(err error) error {
	if c.token == "" || !strings.Contains(err.Error(), c.token) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), c.token, "[token]"))
}

// apiError turns a non-2xx response into a *domain.Error: the API's own when
// the body carries one, else one named after the HTTP status (a proxy's
// page, an empty body).
func apiError(method, path string, resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var env struct {
		Error *domain.Error `json:"error"`
	}
	if json.Unmarshal(raw, &env) == nil && env.Error != nil && env.Error.Code != "" {
		return env.Error
	}
	return &domain.Error{
		Code:    codeForStatus(resp.StatusCode),
		Message: fmt.Sprintf("%s %s: HTTP %s", method, pathOnly(path), resp.Status),
	}
}

func codeForStatus(status int) string {
	switch {
	case status == http.StatusBadRequest:
		return domain.EInvalid
	case status == http.StatusUnauthorized:
		return domain.EUnauthorized
	case status == http.StatusForbidden:
		return domain.EForbidden
	case status == http.StatusNotFound:
		return domain.ENotFound
	case status == http.StatusConflict:
		return domain.EConflict
	case status == http.StatusBadGateway, status == http.StatusServiceUnavailable, status == http.StatusGatewayTimeout,
		status == http.StatusTooManyRequests:
		return domain.EUnavailable
	}
	return domain.EInternal
}

// retryable reports whether Wait should try again after err: network
// failures and an unavailable or overloaded server.
func retryable(err error) bool {
	var e *domain.Error
	if errors.As(err, &e) {
		return e.Code == domain.EUnavailable
	}
	var ue *url.Error
	return errors.As(err, &ue)
}

func pathOnly(p string) string {
	if i := strings.IndexByte(p, '?'); i >= 0 {
		return p[:i]
	}
	return p
}

func formatDuration(d time.Duration) string {
	if d <= 0 {
		d = DefaultPollTimeout
	}
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", int(d/time.Second))
	}
	return d.String()
}
