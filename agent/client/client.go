// Package client is the Go client of askbridge's HTTP API for agent runtimes
// and operators (docs/openapi.yaml).
//
// Errors the API reports (`{"error": {"code", "message", "details"}}`) come
// back as *domain.Error, so callers use errors.As or domain.ErrorCode on them.
// Network failures are returned wrapped, as they came from net/http. The
// token never appears in an error.
//
// Approvals of tool calls: set domain.AskRequest.Action (tool and input) to
// ask about the exact call; the answered record's Decision says what to do
// (Behavior "allow" with Input, possibly edited by a person, and Rules the
// person chose to always allow; or "deny" with Message). Operators answer
// with domain.RespondRequest's EditedInput, Rule, Digest and Reason
// (docs/approvals.md).
package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// DefaultPollTimeout is how long one long-poll of Wait lasts on the server.
const DefaultPollTimeout = 25 * time.Second

// DefaultUnreachableLimit is how long Wait goes on retrying while the
// bridge cannot be reached or is unavailable (a restart, a redeploy)
// before it gives up with the last error.
const DefaultUnreachableLimit = 2 * time.Minute

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// Client talks to one askbridge server for one project. It is safe for
// concurrent use.
type Client struct {
	base        string // without trailing slash
	token       string
	project     string
	hc          *http.Client
	pollTimeout time.Duration
	userAgent   string
	retryWait   time.Duration
	unreachable time.Duration
	onOutage    func(err error, limit time.Duration)
	traceparent string
	tracestate  string
	notice      func(string)
}

// NoticeHeader is the response header in which a bridge without tokens
// says what it ignored or guessed about a request it served (a token, a
// project that looks like a typo).
const NoticeHeader = "Askbridge-Notice"

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient makes the client send its requests through hc. The client
// relies on contexts for deadlines; an hc.Timeout shorter than the poll
// timeout would cut long-polls.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithPollTimeout sets how long each long-poll of Wait lasts on the server
// (default 25s, at most 120s).
func WithPollTimeout(d time.Duration) Option { return func(c *Client) { c.pollTimeout = d } }

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// WithRetryWait sets the first pause before Wait retries after a network
// error or an unavailable server (default 500ms, doubling up to 10s).
func WithRetryWait(d time.Duration) Option { return func(c *Client) { c.retryWait = d } }

// WithNotices calls f with each notice (NoticeHeader) of every response,
// for the caller to show its user; f may be called from several goroutines.
func WithNotices(f func(notice string)) Option { return func(c *Client) { c.notice = f } }

// WithUnreachableLimit sets how long Wait keeps retrying while the bridge
// cannot be reached or is unavailable (default DefaultUnreachableLimit):
// the bridge restarting, a redeploy. The time counts from the first
// failure after the last answer; then Wait returns the last error.
func WithUnreachableLimit(d time.Duration) Option { return func(c *Client) { c.unreachable = d } }

// WithOutageNotice calls f when Wait loses the bridge and starts retrying
// (once per outage), with the error and how long it will keep trying, so
// a caller can tell its user it is still waiting.
func WithOutageNotice(f func(err error, limit time.Duration)) Option {
	return func(c *Client) { c.onOutage = f }
}

// WithTraceContext sends the W3C trace context of the agent's run
// (traceparent and tracestate headers) on every request, so the question's
// spans on the bridge join the agent's trace. An empty traceparent sends
// nothing; the caller passes a valid one (the bridge ignores one that is
// not).
func WithTraceContext(traceparent, tracestate string) Option {
	return func(c *Client) {
		if traceparent == "" || strings.ContainsAny(traceparent+tracestate, "\r\n") {
			return
		}
		c.traceparent, c.tracestate = traceparent, tracestate
	}
}

// New returns a client for the server at baseURL (e.g.
// "http://127.0.0.1:8080"), authenticating with token (may be empty on an
// embedded bridge without tokens) and acting in project.
func New(baseURL, token, project string, opts ...Option) *Client {
	c := &Client{
		base:        strings.TrimRight(baseURL, "/"),
		token:       token,
		project:     project,
		hc:          &http.Client{},
		pollTimeout: DefaultPollTimeout,
		userAgent:   "askbridge-client",
		retryWait:   500 * time.Millisecond,
		unreachable: DefaultUnreachableLimit,
	}
	for _, o := range opts {
		o(c)
	}
	if c.project == "" {
		c.project = "default"
	}
	return c
}

// Project returns the project the client acts in.
func (c *Client) Project() string { return c.project }

// URL returns the bridge's base URL, as given to New.
func (c *Client) URL() string { return c.base }

// Asked is the create response: the record plus a sentence for the agent's
// tool result.
type Asked struct {
	domain.Question
	Message string `json:"message"`
	// Replayed is true when the server returned an existing question (HTTP
	// 200: idempotent replay or re-attach) instead of creating one.
	Replayed bool `json:"-"`
}

// Responded is the respond response.
type Responded struct {
	ID     string        `json:"id"`
	Status domain.Status `json:"status"`
	// RunID is the run that continues: in webhook mode the new continuation
	// run, else the question's run.
	RunID string `json:"run_id"`
}

// Tool is a tool definition an agent may inject into its model's tools.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Ask creates a question (the ask_user call). An identical re-ask or a
// repeated idempotency key returns the existing question with Replayed set.
func (c *Client) Ask(ctx context.Context, req *domain.AskRequest) (*Asked, error) {
	var out Asked
	status, err := c.do(ctx, http.MethodPost, c.projectPath("agent-questions"), req, &out)
	if err != nil {
		return nil, err
	}
	out.Replayed = status == http.StatusOK
	return &out, nil
}

// BatchAsked is the response to AskBatch: the batch, the calls of the
// request in its order, and a sentence for the agent's tool result.
type BatchAsked struct {
	domain.Batch
	Calls   []*domain.Question `json:"calls"`
	Message string             `json:"message"`
	// Replayed is true when every call had been asked before (HTTP 200).
	Replayed bool `json:"-"`
}

// AskBatch asks several approvals of one run as one batch (POST
// approval-batches): one per tool call, each its own record.
func (c *Client) AskBatch(ctx context.Context, req *domain.BatchRequest) (*BatchAsked, error) {
	var out BatchAsked
	status, err := c.do(ctx, http.MethodPost, c.projectPath("approval-batches"), req, &out)
	if err != nil {
		return nil, err
	}
	out.Replayed = status == http.StatusOK
	return &out, nil
}

// Batch returns a batch of approvals.
func (c *Client) Batch(ctx context.Context, id string) (*domain.Batch, error) {
	var b domain.Batch
	if _, err := c.do(ctx, http.MethodGet, c.projectPath("approval-batches", id), nil, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// DecideBatch decides every still-pending call of a batch at once (Allow
// all / Deny all; operator tokens).
func (c *Client) DecideBatch(ctx context.Context, id string, req domain.BatchRespondRequest) (*domain.Batch, error) {
	var b domain.Batch
	if _, err := c.do(ctx, http.MethodPost, c.projectPath("approval-batches", id, "respond"), req, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// Get returns one question.
func (c *Client) Get(ctx context.Context, id string) (*domain.Question, error) {
	var q domain.Question
	if _, err := c.do(ctx, http.MethodGet, c.projectPath("agent-questions", id), nil, &q); err != nil {
		return nil, err
	}
	return &q, nil
}

// WaitOnce long-polls the question once: it returns when the question is no
// longer pending or after timeout (the server caps it at 120s), with the
// latest record either way.
func (c *Client) WaitOnce(ctx context.Context, id string, timeout time.Duration) (*domain.Question, error) {
	var q domain.Question
	p := c.projectPath("agent-questions", id, "wait") + "?timeout=" + url.QueryEscape(formatDuration(timeout))
	if _, err := c.do(ctx, http.MethodGet, p, nil, &q); err != nil {
		return nil, err
	}
	return &q, nil
}

// Wait blocks until the question is final or ctx ends, long-polling the
// server repeatedly. A bridge that shuts down answers its long-polls with
// the record as it is (still pending), and Wait polls again; network errors
// and an unavailable server (a restart) are retried with backoff for up to
// the unreachable limit (WithUnreachableLimit), then the last error is
// returned. API errors (not_found, unauthorized…) end the wait. When ctx
// ends it returns the last record seen (nil if none) with ctx's error; the
// question stays pending.
func (c *Client) Wait(ctx context.Context, id string) (*domain.Question, error) {
	return waitLoop(ctx, c, "question "+id, func() (*domain.Question, bool, error) {
		q, err := c.WaitOnce(ctx, id, c.pollTimeout)
		return q, err == nil && q.Status.Final(), err
	})
}

// WaitBatchOnce long-polls the batch once: it returns when no call of it is
// pending or after timeout (at most 120s), with the batch either way.
func (c *Client) WaitBatchOnce(ctx context.Context, id string, timeout time.Duration) (*domain.Batch, error) {
	var b domain.Batch
	p := c.projectPath("approval-batches", id, "wait") + "?timeout=" + url.QueryEscape(formatDuration(timeout))
	if _, err := c.do(ctx, http.MethodGet, p, nil, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// WaitBatch blocks until every call of the batch is decided (a call that
// joins it meanwhile is waited for too), long-polling as Wait does and
// riding out a restart the same way. Each call's final record is in the
// batch's Questions. When ctx ends it returns the last batch seen (nil if
// none) with ctx's error; the calls stay pending.
func (c *Client) WaitBatch(ctx context.Context, id string) (*domain.Batch, error) {
	return waitLoop(ctx, c, "batch "+id, func() (*domain.Batch, bool, error) {
		b, err := c.WaitBatchOnce(ctx, id, c.pollTimeout)
		return b, err == nil && b.Status != domain.BatchPending, err
	})
}

// waitLoop repeats a long-poll (once) until it says done, retrying an
// unavailable bridge with backoff for up to the unreachable limit; what
// names the record in errors.
func waitLoop[T any](ctx context.Context, c *Client, what string, once func() (*T, bool, error)) (*T, error) {
	var last *T
	var lost time.Time // when the bridge stopped answering; zero while it answers
	backoff := c.retryWait
	for {
		r, done, err := once()
		if err == nil {
			last = r
			if done {
				return r, nil
			}
			backoff, lost = c.retryWait, time.Time{}
			continue
		}
		if ctx.Err() != nil {
			return last, fmt.Errorf("askbridge: waiting for %s: %w", what, ctx.Err())
		}
		if !retryable(err) {
			return last, err
		}
		if lost.IsZero() {
			lost = time.Now()
			if c.onOutage != nil {
				c.onOutage(err, c.unreachable)
			}
		} else if time.Since(lost) >= c.unreachable {
			return last, err
		}
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("askbridge: waiting for %s: %w", what, ctx.Err())
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 10*time.Second)
	}
}

// AskAndWait asks and waits for the final record. When ctx ends first, the
// question stays pending (an identical re-ask re-attaches to it) and the
// last record seen is returned with ctx's error.
func (c *Client) AskAndWait(ctx context.Context, req *domain.AskRequest) (*domain.Question, error) {
	a, err := c.Ask(ctx, req)
	if err != nil {
		return nil, err
	}
	if a.Status.Final() {
		return &a.Question, nil
	}
	q, err := c.Wait(ctx, a.ID)
	if q == nil {
		q = &a.Question
	}
	return q, err
}

// Respond answers a question.
func (c *Client) Respond(ctx context.Context, id string, req domain.RespondRequest) (*Responded, error) {
	var out Responded
	if _, err := c.do(ctx, http.MethodPost, c.projectPath("agent-questions", id, "respond"), req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RespondText answers a single-item question with one value, label or free
// text.
func (c *Client) RespondText(ctx context.Context, id, response string) (*Responded, error) {
	return c.Respond(ctx, id, domain.RespondRequest{Response: &response})
}

// Cancel withdraws (reason "agent", also when reason is "") or dismisses
// (reason "user") a question and returns the final record.
func (c *Client) Cancel(ctx context.Context, id, reason string) (*domain.Question, error) {
	return c.CancelWithNote(ctx, id, reason, "")
}

// CancelWithNote is Cancel with a free-text note (at most 500 characters),
// kept on the record as cancel_note and shown on every copy.
func (c *Client) CancelWithNote(ctx context.Context, id, reason, note string) (*domain.Question, error) {
	if reason == "" {
		// The agent's client: withdrawing, whatever the bridge would
		// assume for a caller without an agent token (a person).
		reason = domain.CancelAgent
	}
	var q domain.Question
	body := map[string]string{"reason": reason}
	if note != "" {
		body["note"] = note
	}
	if _, err := c.do(ctx, http.MethodPost, c.projectPath("agent-questions", id, "cancel"), body, &q); err != nil {
		return nil, err
	}
	return &q, nil
}

// List returns every question of the project (that the token may see),
// oldest first, reading page after page until the last; status "" lists
// every state.
func (c *Client) List(ctx context.Context, status domain.Status) ([]*domain.Question, error) {
	out := []*domain.Question{}
	o := ListOptions{Status: status, Limit: MaxPage}
	for {
		page, err := c.ListPage(ctx, o)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Questions...)
		if o.Cursor = page.NextCursor; o.Cursor == "" {
			return out, nil
		}
	}
}

// MaxPage is the largest page the API gives (ListOptions.Limit).
const MaxPage = 1000

// ListOptions selects one page of the list.
type ListOptions struct {
	// Status keeps the questions in that state; "" keeps every state.
	Status domain.Status
	// Limit bounds the page (1 to MaxPage); 0 takes the server's default
	// (500).
	Limit int
	// Cursor is the NextCursor of the previous page; "" for the first.
	Cursor string
}

// Page is one page of the list.
type Page struct {
	Questions []*domain.Question
	// NextCursor continues the list (ListOptions.Cursor); "" after the
	// last page. A page may be short, even empty, before the last one.
	NextCursor string
}

// ListPage returns one page of the project's questions, oldest first.
func (c *Client) ListPage(ctx context.Context, o ListOptions) (*Page, error) {
	q := url.Values{}
	if o.Status != "" {
		q.Set("status", string(o.Status))
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Cursor != "" {
		q.Set("cursor", o.Cursor)
	}
	p := c.projectPath("agent-questions")
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	var out struct {
		Questions  []*domain.Question `json:"questions"`
		NextCursor *string            `json:"next_cursor"`
	}
	if _, err := c.do(ctx, http.MethodGet, p, nil, &out); err != nil {
		return nil, err
	}
	page := &Page{Questions: out.Questions}
	if page.Questions == nil {
		page.Questions = []*domain.Question{}
	}
	if out.NextCursor != nil {
		page.NextCursor = *out.NextCursor
	}
	return page, nil
}

// Run returns a run record.
func (c *Client) Run(ctx context.Context, runID string) (*domain.Run, error) {
	var r domain.Run
	if _, err := c.do(ctx, http.MethodGet, c.projectPath("agent-runs", runID), nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// PauseRun reports that the run's loop has stopped; in webhook mode answers
// are accepted only from then on.
func (c *Client) PauseRun(ctx context.Context, runID string) (*domain.Run, error) {
	var r domain.Run
	if _, err := c.do(ctx, http.MethodPost, c.projectPath("agent-runs", runID, "pause"), struct{}{}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// RunQuestions returns every question of a run in creation order.
func (c *Client) RunQuestions(ctx context.Context, runID string) ([]*domain.Question, error) {
	var out struct {
		Questions []*domain.Question `json:"questions"`
	}
	if _, err := c.do(ctx, http.MethodGet, c.projectPath("agent-runs", runID, "questions"), nil, &out); err != nil {
		return nil, err
	}
	return out.Questions, nil
}

// Tools returns the tool definitions agent may inject.
func (c *Client) Tools(ctx context.Context, agent string) ([]Tool, error) {
	var out struct {
		Tools []Tool `json:"tools"`
	}
	if _, err := c.do(ctx, http.MethodGet, c.projectPath("agents", agent, "tools"), nil, &out); err != nil {
		return nil, err
	}
	return out.Tools, nil
}

// Route is a route of the bridge's configuration, by name.
type Route struct {
	Name    string `json:"name"`
	Default bool   `json:"default"`
}

// Routes returns the routes the bridge is configured with (none without a
// configuration file), sorted by name.
func (c *Client) Routes(ctx context.Context) ([]Route, error) {
	var out struct {
		Routes []Route `json:"routes"`
	}
	if _, err := c.do(ctx, http.MethodGet, c.projectPath("routes"), nil, &out); err != nil {
		return nil, err
	}
	return out.Routes, nil
}

// Notifications returns the project's inbox; unreadOnly keeps unread ones.
func (c *Client) Notifications(ctx context.Context, unreadOnly bool) ([]domain.Notification, error) {
	p := c.projectPath("notifications")
	if unreadOnly {
		p += "?unread=true"
	}
	var out struct {
		Notifications []domain.Notification `json:"notifications"`
	}
	if _, err := c.do(ctx, http.MethodGet, p, nil, &out); err != nil {
		return nil, err
	}
	return out.Notifications, nil
}

// MarkRead marks a notification read.
// Audit returns the project's audit trail, oldest first; question filters
// to one question when not empty.
func (c *Client) Audit(ctx context.Context, question string) ([]domain.AuditEntry, error) {
	p := c.projectPath("audit")
	if question != "" {
		p += "?question=" + url.QueryEscape(question)
	}
	var out struct {
		Entries []domain.AuditEntry `json:"entries"`
	}
	if _, err := c.do(ctx, http.MethodGet, p, nil, &out); err != nil {
		return nil, err
	}
	return out.Entries, nil
}

func (c *Client) MarkRead(ctx context.Context, id string) (*domain.Notification, error) {
	var n domain.Notification
	if _, err := c.do(ctx, http.MethodPost, c.projectPath("notifications", id, "read"), struct{}{}, &n); err != nil {
		return nil, err
	}
	return &n, nil
}
