package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/askbridge/askbridge/domain"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain lets the test binary act as the bridge binary's client side
// (cli.Run, the same entry point cmd/bridge calls), so the MCP server runs
// in its own process behind a real stdio pipe.
func TestMain(m *testing.M) {
	os.Exit(bridgetest.Main(m))
}

type progressLog struct {
	mu   sync.Mutex
	msgs []string
}

func (p *progressLog) add(s string) { p.mu.Lock(); p.msgs = append(p.msgs, s); p.mu.Unlock() }
func (p *progressLog) all() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.msgs...)
}

// connect starts "askbridge mcp" against api and connects the SDK's client.
func connect(t *testing.T, api *fakeapi.Server, extraEnv ...string) (*mcp.ClientSession, *progressLog) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "mcp", "--progress-every", "200ms")
	cmd.Env = append(bridgetest.CleanEnv(), "ASKBRIDGE_TEST_AS_BRIDGE=1", "BRIDGE_URL="+api.URL,
		"BRIDGE_TOKEN="+api.Token, "BRIDGE_PROJECT=ops")
	cmd.Env = append(cmd.Env, extraEnv...)
	return connectCmd(t, cmd)
}

func connectCmd(t *testing.T, cmd *exec.Cmd) (*mcp.ClientSession, *progressLog) {
	t.Helper()
	cmd.Stderr = &testWriter{t: t}
	prog := &progressLog{}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			prog.add(req.Params.Message)
		},
	})
	s, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, prog
}

type testWriter struct {
	t  *testing.T
	mu sync.Mutex
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.t.Logf("askbridge mcp: %s", strings.TrimSpace(string(p)))
	return len(p), nil
}

func authArgs() map[string]any {
	return map[string]any{"questions": []any{map[string]any{
		"question": "Which auth method?", "header": "Auth", "multiSelect": false,
		"options": []any{
			map[string]any{"label": "OAuth 2.0", "description": "Standard"},
			map[string]any{"label": "API key", "description": "Simple"},
		},
	}}}
}

// text is the prose of a result: its first text content (the second is
// the structured result as JSON).
func text(r *mcp.CallToolResult) string {
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}

func structured(t *testing.T, r *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(r.StructuredContent)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

func TestToolsListSchema(t *testing.T) {
	api := fakeapi.New(t, "tok")
	s, _ := connect(t, api)
	res, err := s.ListTools(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, res.Tools, 1)
	tool := res.Tools[0]
	assert.Equal(t, "ask_user", tool.Name)
	assert.Contains(t, tool.Description, `"Other" is added automatically`)
	assert.Contains(t, tool.Description, "Use it when")
	// The model tells the person where to look: every surface is named.
	for _, surface := range []string{"Slack", "Discord", "Telegram", "email", "web inbox", "PagerDuty"} {
		assert.Contains(t, tool.Description, surface)
	}

	b, _ := json.Marshal(tool.InputSchema)
	var schema struct {
		Required   []string
		Properties map[string]struct {
			MinItems, MaxItems int
			Items              struct {
				Required   []string
				Properties map[string]struct {
					Type        string
					MaxLength   int
					MaxItems    int
					Description string
					Items       struct{ Required []string }
				}
			}
		}
	}
	require.NoError(t, json.Unmarshal(b, &schema), string(b))
	assert.Equal(t, []string{"questions"}, schema.Required)
	qs := schema.Properties["questions"]
	assert.Equal(t, 1, qs.MinItems)
	assert.Equal(t, 4, qs.MaxItems)
	assert.ElementsMatch(t, []string{"question", "header"}, qs.Items.Required)
	assert.Equal(t, 12, qs.Items.Properties["header"].MaxLength)
	assert.Equal(t, 4, qs.Items.Properties["options"].MaxItems)
	assert.Contains(t, qs.Items.Properties["options"].Description, "open-ended")
	assert.ElementsMatch(t, []string{"label", "description"}, qs.Items.Properties["options"].Items.Required)
	assert.Equal(t, "boolean", qs.Items.Properties["multiSelect"].Type)

	out, _ := json.Marshal(tool.OutputSchema)
	assert.Contains(t, string(out), `"answers"`)
	assert.Contains(t, string(out), `"selections"`)
	assert.Contains(t, string(out), `"status"`)
}

func TestAskUserBlocksUntilAnsweredWithProgress(t *testing.T) {
	api := fakeapi.New(t, "tok")
	s, prog := connect(t, api, "BRIDGE_ROUTE=", "BRIDGE_AGENT_ID=")
	type callResult struct {
		r   *mcp.CallToolResult
		err error
	}
	done := make(chan callResult, 1)
	go func() {
		p := &mcp.CallToolParams{Name: "ask_user", Arguments: authArgs()}
		p.SetProgressToken("progress-1")
		r, err := s.CallTool(t.Context(), p)
		done <- callResult{r, err}
	}()
	q := api.WaitPending(t, 1)
	assert.Equal(t, "test-client", q.AgentID, "the MCP client's name is the agent id without BRIDGE_AGENT_ID")
	assert.True(t, strings.HasPrefix(q.RunID, "mcp-"), q.RunID)
	time.Sleep(700 * time.Millisecond) // a few progress intervals
	select {
	case <-done:
		t.Fatal("ask_user returned before an answer")
	default:
	}
	api.Answer(t, q.ID, []string{"OAuth 2.0"})
	var res callResult
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("ask_user did not return after the answer")
	}
	require.NoError(t, res.err)
	assert.False(t, res.r.IsError)
	assert.Equal(t, `User has answered your questions: "Which auth method?"="OAuth 2.0". You can now continue with the user's answers in mind.`, text(res.r))
	sc := structured(t, res.r)
	assert.Equal(t, "answered", sc["status"])
	assert.Equal(t, map[string]any{"Which auth method?": "OAuth 2.0"}, sc["answers"])
	assert.Equal(t, map[string]any{"Which auth method?": []any{"OAuth 2.0"}}, sc["selections"])

	msgs := prog.all()
	require.GreaterOrEqual(t, len(msgs), 2, "progress notifications while waiting")
	assert.Regexp(t, `^waiting for an answer in the web inbox — expires in \d+ min$`, msgs[0])

	// A second question in the same session gets a run of its own, named
	// after the session.
	go func() {
		args := authArgs()
		args["questions"].([]any)[0].(map[string]any)["question"] = "Which region?"
		r, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: args})
		done <- callResult{r, err}
	}()
	q2 := api.WaitPending(t, 2)
	assert.NotEqual(t, q.RunID, q2.RunID, "one run per call")
	assert.Equal(t, q.RunID[:len("mcp-")+36], q2.RunID[:len("mcp-")+36], "named after the session")
	api.Answer(t, q2.ID, []string{"somewhere warm"})
	res = <-done
	require.NoError(t, res.err)
	assert.Contains(t, text(res.r), `"Which region?"="somewhere warm"`)
}

func TestAskUserMultiQuestionAndRunID(t *testing.T) {
	api := fakeapi.New(t, "")
	s, prog := connect(t, api, "BRIDGE_RUN_ID=run-fixed", "BRIDGE_AGENT_ID=coder", "BRIDGE_ROUTE=")
	args := map[string]any{"questions": []any{
		map[string]any{"question": "Which features?", "header": "Features", "multiSelect": true, "options": []any{
			map[string]any{"label": "Login", "description": "a"}, map[string]any{"label": "Dashboard", "description": "b"},
			map[string]any{"label": "Billing", "description": "c"}}},
		map[string]any{"question": "Project name?", "header": "Name"},
	}}
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		r, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: args})
		assert.NoError(t, err)
		done <- r
	}()
	q := api.WaitPending(t, 1)
	assert.Equal(t, "run-fixed", q.RunID)
	assert.Equal(t, "coder", q.AgentID)
	assert.True(t, q.Questions[1].OpenEnded())
	api.Answer(t, q.ID, []string{"Login", "Dashboard"}, []string{"Aurora"})
	r := <-done
	assert.Equal(t, `User has answered your questions: "Which features?"="Login, Dashboard", "Project name?"="Aurora". You can now continue with the user's answers in mind.`, text(r))
	assert.Empty(t, prog.all(), "no progress token, no progress notifications")
}

func TestAskUserExpiredAndDismissed(t *testing.T) {
	api := fakeapi.New(t, "")
	s, _ := connect(t, api, "BRIDGE_RUN_ID=", "BRIDGE_ROUTE=")
	done := make(chan *mcp.CallToolResult, 1)
	call := func(question string) {
		args := authArgs()
		args["questions"].([]any)[0].(map[string]any)["question"] = question
		r, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: args})
		assert.NoError(t, err)
		done <- r
	}
	go call("First?")
	q := api.WaitPending(t, 1)
	api.Expire(q.ID)
	r := <-done
	assert.True(t, r.IsError)
	assert.Contains(t, text(r), "No answer: the question expired")
	assert.Contains(t, text(r), "Continue without the answer")
	assert.Equal(t, "expired", structured(t, r)["status"])

	go call("Second?")
	q = api.WaitPending(t, 2)
	cancelled := false
	for i := 0; i < 50 && !cancelled; i++ {
		req, _ := httpPost(api.URL+"/api/projects/ops/agent-questions/"+q.ID+"/cancel", `{"reason":"user"}`)
		cancelled = req == 200
	}
	require.True(t, cancelled)
	r = <-done
	assert.True(t, r.IsError)
	assert.Contains(t, text(r), "dismissed the question without answering")
	assert.Contains(t, text(r), "Continue without the answer")
}

func TestAskUserInvalidInput(t *testing.T) {
	api := fakeapi.New(t, "")
	s, _ := connect(t, api)
	// The schema refuses a header over 12 characters before anything is sent.
	args := authArgs()
	args["questions"].([]any)[0].(map[string]any)["header"] = "much too long a header"
	r, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: args})
	require.NoError(t, err)
	assert.True(t, r.IsError)
	assert.Contains(t, text(r), "header")
	// One option: the bridge lists the problem so the model can fix it.
	args = authArgs()
	q := args["questions"].([]any)[0].(map[string]any)
	q["options"] = q["options"].([]any)[:1]
	r, err = s.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: args})
	require.NoError(t, err)
	assert.True(t, r.IsError)
	assert.Contains(t, text(r), "questions[0].options: 2 to 4 options")
	assert.Empty(t, api.Questions())
}

func TestAskUserReattachAfterClientTimeout(t *testing.T) {
	api := fakeapi.New(t, "")
	s, _ := connect(t, api, "BRIDGE_RUN_ID=", "BRIDGE_ROUTE=")
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "ask_user", Arguments: authArgs()})
	cancel()
	require.Error(t, err, "the client's own timeout cuts the call")
	q := api.WaitPending(t, 1)
	time.Sleep(200 * time.Millisecond)
	assert.Equal(t, domain.StatusPending, api.Question(q.ID).Status, "a cut call leaves the question pending")

	api.Answer(t, q.ID, []string{"API key"})
	start := time.Now()
	r, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: authArgs()})
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 2*time.Second, "the repeated call returns the answer at once")
	assert.Contains(t, text(r), `"Which auth method?"="API key"`)
	assert.Len(t, api.Questions(), 1, "the repeated call re-attached instead of asking again")
}

func httpPost(url, body string) (int, error) {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return resp.StatusCode, nil
}
