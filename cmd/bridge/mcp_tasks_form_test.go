package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/mcpserver"
	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statelessTasks serves the MCP server of a real bridge (its API, its
// Router) to 2026-07-28 clients without sessions, wired as askbridge serve
// wires /mcp: answers from the host go through the Router like a click.
func statelessTasks(t *testing.T) (mcpURL, apiURL string, a *app.App) {
	t.Helper()
	a, err := app.New(context.Background(), app.Settings{Addr: "127.0.0.1:0"})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	srv := mcpserver.New(mcpserver.Config{})
	srv.HTTPHandler(mcpserver.HTTPConfig{API: a.Handler(), DefaultProject: "ops",
		Answer: func(ctx context.Context, project, id string, req domain.RespondRequest, who domain.Person) error {
			_, err := a.Router().Answer(ctx, project, id, req, who)
			return err
		}})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP() },
		&mcp.StreamableHTTPOptions{Stateless: true})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set(mcpserver.ProjectHeader, "ops")
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	web := httptest.NewServer(a.Handler())
	t.Cleanup(web.Close)
	return ts.URL, web.URL, a
}

func question(t *testing.T, a *app.App, id string) *domain.Question {
	t.Helper()
	q, err := a.Store().Get(t.Context(), "ops", id)
	require.NoError(t, err)
	return q
}

var formHost = map[string]any{"elicitation": map[string]any{"form": map[string]any{}},
	"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}

// TestMCPTaskFormAnsweredAtTheHost: under 2026-07-28 a host that declared
// form elicitation sees the waiting task as input_required with the
// question's form; its user's answer through tasks/update is recorded like
// a click and is the task's result.
func TestMCPTaskFormAnsweredAtTheHost(t *testing.T) {
	url, _, a := statelessTasks(t)
	c := &taskClient{t: t, url: url, stateless: true, caps: formHost}
	created := c.askTask("Which auth method?")
	id := created["taskId"].(string)
	assert.Equal(t, "working", created["status"], "the form comes with tasks/get")

	got, rerr := c.get(id)
	require.Nil(t, rerr)
	require.Equal(t, "input_required", got["status"], "%v", got)
	reqs := got["inputRequests"].(map[string]any)
	require.Len(t, reqs, 1)
	form := reqs["answer"].(map[string]any)
	assert.Equal(t, "elicitation/create", form["method"])
	params := form["params"].(map[string]any)
	assert.Equal(t, "form", params["mode"])
	assert.Contains(t, params["message"], "Which auth method?")
	q1 := params["requestedSchema"].(map[string]any)["properties"].(map[string]any)["q1"].(map[string]any)
	assert.Equal(t, []any{"OAuth 2.0", "API key"}, q1["enum"])

	// An answer the bridge refuses is said in plain words; the form stays.
	_, rerr, err := c.call(t.Context(), "tasks/update", map[string]any{"taskId": id,
		"inputResponses": map[string]any{"answer": map[string]any{"action": "accept", "content": map[string]any{}}}})
	require.NoError(t, err)
	require.NotNil(t, rerr)
	assert.Equal(t, -32602, rerr.Code)
	assert.Contains(t, rerr.Message, "the answer was not recorded")
	assert.Equal(t, domain.StatusPending, question(t, a, id).Status)

	res, rerr, err := c.call(t.Context(), "tasks/update", map[string]any{"taskId": id,
		"inputResponses": map[string]any{"answer": map[string]any{"action": "accept", "content": map[string]any{"q1": "API key"}}}})
	require.NoError(t, err)
	require.Nil(t, rerr)
	assert.Equal(t, "complete", res["resultType"])
	assert.NotContains(t, res, "status", "an acknowledgement, not a task")
	q := question(t, a, id)
	require.Equal(t, domain.StatusAnswered, q.Status)
	assert.Equal(t, "mcp", q.RespondedBy.Platform, "recorded as the host's user")

	got, rerr = c.get(id)
	require.Nil(t, rerr)
	assert.Equal(t, "completed", got["status"])
	assert.NotContains(t, got, "inputRequests")
	text := got["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
	assert.Equal(t, `User has answered your questions: "Which auth method?"="API key". You can now continue with the user's answers in mind.`, text)
}

// TestMCPTaskFormClearedByAnAnswerElsewhere: the first answer anywhere
// wins; once a person answered in the web inbox the task has no input
// request, and a late answer from the host changes nothing.
func TestMCPTaskFormClearedByAnAnswerElsewhere(t *testing.T) {
	url, web, a := statelessTasks(t)
	c := &taskClient{t: t, url: url, stateless: true, caps: formHost}
	id := c.askTask("Which region?")["taskId"].(string)
	got, _ := c.get(id)
	require.Equal(t, "input_required", got["status"])

	code, _ := authed(t, "POST", web+"/api/projects/ops/agent-questions/"+id+"/respond", "", map[string]any{"response": "API key"})
	require.Equal(t, http.StatusAccepted, code)
	got, _ = c.get(id)
	assert.Equal(t, "completed", got["status"])
	assert.NotContains(t, got, "inputRequests")

	res, rerr, err := c.call(t.Context(), "tasks/update", map[string]any{"taskId": id,
		"inputResponses": map[string]any{"answer": map[string]any{"action": "accept", "content": map[string]any{"q1": "OAuth 2.0"}}}})
	require.NoError(t, err)
	require.Nil(t, rerr, "a response to no outstanding request is ignored")
	assert.Equal(t, "complete", res["resultType"])
	assert.Equal(t, "API key", question(t, a, id).Answers["Which region?"])
}

// TestMCPTaskWithoutFormStaysWorking: a 2026-07-28 host that declared no
// form elicitation polls a working task; its user answers elsewhere.
func TestMCPTaskWithoutFormStaysWorking(t *testing.T) {
	url, _, _ := statelessTasks(t)
	c := &taskClient{t: t, url: url, stateless: true,
		caps: map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}
	id := c.askTask("Which region?")["taskId"].(string)
	got, rerr := c.get(id)
	require.Nil(t, rerr)
	assert.Equal(t, "working", got["status"])
	assert.NotContains(t, got, "inputRequests")
}

// TestMCPMultiRoundTripFormWithoutTasks: a 2026-07-28 host that declared
// form elicitation but not tasks gets the form by multi round-trip
// (SEP-2322): the call returns input_required at once, and the call again
// with its user's response records the answer and returns the result.
func TestMCPMultiRoundTripFormWithoutTasks(t *testing.T) {
	url, _, a := statelessTasks(t)
	c := &taskClient{t: t, url: url, stateless: true, caps: map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	args := askArgs("Which auth method?")
	res, rerr, err := c.call(ctx, "tools/call", map[string]any{"name": "ask_user", "arguments": args})
	require.NoError(t, err, "the call returns the form at once")
	require.Nil(t, rerr)
	require.Equal(t, "input_required", res["resultType"], "%v", res)
	state, _ := res["requestState"].(string)
	require.NotEmpty(t, state)
	form := res["inputRequests"].(map[string]any)["answer"].(map[string]any)
	assert.Equal(t, "elicitation/create", form["method"])
	assert.Equal(t, domain.StatusPending, question(t, a, state).Status, "asked everywhere meanwhile")

	// Another question's state is refused.
	res, rerr, err = c.call(ctx, "tools/call", map[string]any{"name": "ask_user", "arguments": args,
		"requestState": "not-a-question"})
	require.NoError(t, err)
	require.Nil(t, rerr)
	assert.Equal(t, true, res["isError"])

	res, rerr, err = c.call(ctx, "tools/call", map[string]any{"name": "ask_user", "arguments": args, "requestState": state,
		"inputResponses": map[string]any{"answer": map[string]any{"action": "accept", "content": map[string]any{"q1": "OAuth 2.0"}}}})
	require.NoError(t, err)
	require.Nil(t, rerr)
	assert.Equal(t, "complete", res["resultType"])
	text := res["content"].([]any)[0].(map[string]any)["text"]
	assert.Equal(t, `User has answered your questions: "Which auth method?"="OAuth 2.0". You can now continue with the user's answers in mind.`, text)
	assert.Equal(t, "mcp", question(t, a, state).RespondedBy.Platform)
}
