package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const token = "tok-very-secret-123"

func authAsk() *domain.AskRequest {
	return &domain.AskRequest{RunID: "run-1", AgentID: "bot", Questions: []domain.Item{{
		Question: "Which auth method?", Header: "Auth",
		Options: []domain.Option{{Label: "OAuth 2.0", Value: "oauth"}, {Label: "API key"}},
	}}}
}

func TestAskWaitAnswered(t *testing.T) {
	api := fakeapi.New(t, token)
	c := client.New(api.URL, token, "ops", client.WithPollTimeout(time.Second))
	ctx := t.Context()

	a, err := c.Ask(ctx, authAsk())
	require.NoError(t, err)
	assert.Equal(t, domain.StatusPending, a.Status)
	assert.False(t, a.Replayed)
	assert.Contains(t, a.Message, "this run will pause")
	assert.Equal(t, "ops", a.ProjectID)

	// An identical re-ask in the same run re-attaches (HTTP 200).
	again, err := c.Ask(ctx, authAsk())
	require.NoError(t, err)
	assert.True(t, again.Replayed)
	assert.Equal(t, a.ID, again.ID)

	go func() {
		time.Sleep(1500 * time.Millisecond) // longer than one poll: Wait must poll again
		api.Answer(t, a.ID, []string{"OAuth 2.0"})
	}()
	q, err := c.Wait(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusAnswered, q.Status)
	assert.Equal(t, "OAuth 2.0", q.Answers["Which auth method?"])
	assert.Equal(t, "oauth", q.Response)

	var polls int
	for _, r := range api.Requests() {
		if strings.HasSuffix(r.Path, "/wait") {
			polls++
			assert.Equal(t, "timeout=1s", r.Query)
		}
		assert.Equal(t, "Bearer "+token, r.Auth)
	}
	assert.GreaterOrEqual(t, polls, 2, "Wait long-polls repeatedly until the question is final")
}

func TestAskAndWaitContextEndsLeavesPending(t *testing.T) {
	api := fakeapi.New(t, "")
	c := client.New(api.URL, "", "default", client.WithPollTimeout(time.Second))
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	q, err := c.AskAndWait(ctx, authAsk())
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotNil(t, q, "the last record seen comes back with the context error")
	assert.Equal(t, domain.StatusPending, q.Status)
	assert.Equal(t, domain.StatusPending, api.Question(q.ID).Status, "a caller that may retry leaves the question pending")
}

func TestAPIErrorsAreCoreErrors(t *testing.T) {
	api := fakeapi.New(t, token)
	c := client.New(api.URL, token, "ops")
	ctx := t.Context()

	bad := &domain.AskRequest{Questions: []domain.Item{{Question: "Q?", Header: "much too long header",
		Options: []domain.Option{{Label: "only one"}}}}}
	_, err := c.Ask(ctx, bad)
	var e *domain.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, domain.EInvalid, e.Code)
	fields := map[string]bool{}
	for _, d := range e.Details {
		fields[d.Field] = true
	}
	assert.True(t, fields["questions[0].header"], "every problem is listed: %v", e.Details)
	assert.True(t, fields["questions[0].options"], "every problem is listed: %v", e.Details)

	_, err = c.Ask(ctx, &domain.AskRequest{ParentRunID: "parent", Question: "Q?"})
	assert.Equal(t, domain.ESubagentNotAllowed, domain.ErrorCode(err))

	_, err = c.Get(ctx, "nope")
	assert.Equal(t, domain.ENotFound, domain.ErrorCode(err))

	a, err := c.Ask(ctx, authAsk())
	require.NoError(t, err)
	_, err = c.Respond(ctx, a.ID, domain.RespondRequest{Answers: map[string]domain.StringList{"Nope?": {"x"}}})
	assert.Equal(t, domain.EInvalidAnswer, domain.ErrorCode(err))
	r, err := c.RespondText(ctx, a.ID, "api key")
	require.NoError(t, err)
	assert.Equal(t, domain.StatusAnswered, r.Status)
	assert.Equal(t, "run-1", r.RunID)
	_, err = c.RespondText(ctx, a.ID, "oauth")
	assert.Equal(t, domain.EAlreadyAnswered, domain.ErrorCode(err))
	_, err = c.Cancel(ctx, a.ID, domain.CancelAgent)
	assert.Equal(t, domain.EAlreadyAnswered, domain.ErrorCode(err))

	// A wrong token: unauthorized, and the token is in no error text.
	wrong := client.New(api.URL, "wrong-"+token, "ops")
	_, err = wrong.List(ctx, "")
	assert.Equal(t, domain.EUnauthorized, domain.ErrorCode(err))
	assert.NotContains(t, err.Error(), token)
}

func TestNonAPIErrorBodies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte("<html>bad gateway</html>"))
	}))
	defer srv.Close()
	c := client.New(srv.URL, token, "ops")
	_, err := c.Get(t.Context(), "x")
	var e *domain.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, domain.EUnavailable, e.Code)
	assert.Contains(t, e.Message, "502")
}

func TestNetworkErrorsWrappedWithoutToken(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close()
	c := client.New(u, token, "ops")
	_, err := c.List(t.Context(), domain.StatusPending)
	require.Error(t, err)
	var e *domain.Error
	assert.False(t, errors.As(err, &e), "a network error is not an API error")
	assert.NotContains(t, err.Error(), token)
	assert.Contains(t, err.Error(), "/api/projects/ops/agent-questions")
}

func TestWaitRetriesUnavailableServer(t *testing.T) {
	api := fakeapi.New(t, "")
	c := client.New(api.URL, "", "p", client.WithPollTimeout(time.Second))
	a, err := c.Ask(t.Context(), authAsk())
	require.NoError(t, err)

	var calls atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if n <= 2 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"redis down"}}`))
			return
		}
		if n == 3 {
			api.Answer(t, a.ID, []string{"API key"})
		}
		resp, err := http.Get(api.URL + r.URL.String())
		if err != nil {
			w.WriteHeader(500)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	defer proxy.Close()
	pc := client.New(proxy.URL, "", "p", client.WithRetryWait(10*time.Millisecond))
	q, err := pc.Wait(t.Context(), a.ID)
	require.NoError(t, err)
	assert.Equal(t, "API key", q.Answers["Which auth method?"])
	assert.Equal(t, int32(3), calls.Load(), "two 503s retried, then the answer")

	// not_found is not retried.
	_, err = pc.Wait(t.Context(), "missing")
	assert.Equal(t, domain.ENotFound, domain.ErrorCode(err))
}

func TestRunsListsNotifications(t *testing.T) {
	api := fakeapi.New(t, "")
	c := client.New(api.URL, "", "proj/with space")
	ctx := t.Context()
	a, err := c.Ask(ctx, authAsk())
	require.NoError(t, err)
	// A new question in the same run supersedes the first.
	second := authAsk()
	second.Questions[0].Question = "Which region?"
	b, err := c.Ask(ctx, second)
	require.NoError(t, err)

	first, err := c.Get(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusCancelled, first.Status)
	assert.Equal(t, domain.CancelSuperseded, first.CancelReason)

	pending, err := c.List(ctx, domain.StatusPending)
	require.NoError(t, err)
	require.Len(t, pending, 1)
	assert.Equal(t, b.ID, pending[0].ID)
	all, err := c.List(ctx, "")
	require.NoError(t, err)
	assert.Len(t, all, 2)

	rq, err := c.RunQuestions(ctx, "run-1")
	require.NoError(t, err)
	require.Len(t, rq, 2)
	assert.Equal(t, a.ID, rq[0].ID)

	run, err := c.PauseRun(ctx, "run-1")
	require.NoError(t, err)
	assert.Equal(t, domain.RunPaused, run.Status)
	run, err = c.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Equal(t, domain.RunPaused, run.Status)

	ns, err := c.Notifications(ctx, true)
	require.NoError(t, err)
	require.Len(t, ns, 2)
	n, err := c.MarkRead(ctx, b.ID)
	require.NoError(t, err)
	assert.True(t, n.Read)
	ns, err = c.Notifications(ctx, true)
	require.NoError(t, err)
	assert.Len(t, ns, 1)

	cq, err := c.Cancel(ctx, b.ID, domain.CancelAgent)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusCancelled, cq.Status)
	assert.Equal(t, domain.CancelAgent, cq.CancelReason)

	// The project is escaped as one path segment.
	for _, r := range api.Requests() {
		assert.True(t, strings.HasPrefix(r.Path, "/api/projects/proj/with space/"), r.Path)
	}
}

func TestTools(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/projects/ops/agents/deploy-bot/tools" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"tools":[{"name":"ask_user","description":"Ask","input_schema":{"type":"object"}}]}`))
	}))
	defer srv.Close()
	tools, err := client.New(srv.URL, "", "ops").Tools(t.Context(), "deploy-bot")
	require.NoError(t, err)
	require.Len(t, tools, 1)
	assert.Equal(t, "ask_user", tools[0].Name)
	assert.JSONEq(t, `{"type":"object"}`, string(tools[0].InputSchema))
}

// TestListReadsEveryPage: List follows next_cursor to the last page, so it
// returns every question however small the server's pages; ListPage gives
// one page and the cursor of the next.
func TestListReadsEveryPage(t *testing.T) {
	api := fakeapi.New(t, "")
	api.MaxPage = 2
	c := client.New(api.URL, "", "ops")
	ctx := t.Context()
	var ids []string
	for i := range 5 {
		a := authAsk()
		a.RunID = fmt.Sprintf("run-%d", i)
		q, err := c.Ask(ctx, a)
		require.NoError(t, err)
		ids = append(ids, q.ID)
	}
	all, err := c.List(ctx, domain.StatusPending)
	require.NoError(t, err)
	var got []string
	for _, q := range all {
		got = append(got, q.ID)
	}
	assert.Equal(t, ids, got, "every page, oldest first")
	var lists []string
	for _, r := range api.Requests() {
		if r.Method == "GET" && strings.HasSuffix(r.Path, "/agent-questions") {
			lists = append(lists, r.Query)
		}
	}
	assert.Len(t, lists, 3, "three pages of two: %v", lists)

	page, err := c.ListPage(ctx, client.ListOptions{Status: domain.StatusPending, Limit: 3})
	require.NoError(t, err)
	assert.Len(t, page.Questions, 2, "the server's page")
	require.NotEmpty(t, page.NextCursor)
	page, err = c.ListPage(ctx, client.ListOptions{Status: domain.StatusPending, Cursor: page.NextCursor})
	require.NoError(t, err)
	assert.Equal(t, ids[2], page.Questions[0].ID)
	_, err = c.ListPage(ctx, client.ListOptions{Cursor: "bogus"})
	assert.Equal(t, domain.EInvalid, domain.ErrorCode(err))
}
