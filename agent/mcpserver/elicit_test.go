package mcpserver_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func connectEliciting(t *testing.T, api *fakeapi.Server, h func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(os.Args[0], "mcp")
	cmd.Env = append(bridgetest.CleanEnv(), "ASKBRIDGE_TEST_AS_BRIDGE=1", "BRIDGE_URL="+api.URL, "BRIDGE_PROJECT=ops")
	cmd.Stderr = &testWriter{t: t}
	c := mcp.NewClient(&mcp.Implementation{Name: "vscode", Title: "VS Code", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: h})
	// Hosts today (Claude Code, VS Code, Cursor) speak 2025-11-25, where a
	// form may stay open while the call waits.
	s, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestElicitationAnswersTheQuestionWhereTheAgentRuns(t *testing.T) {
	api := fakeapi.New(t, "")
	var got *mcp.ElicitParams
	s := connectEliciting(t, api, func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		got = req.Params
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"q1": "API key"}}, nil
	})
	r, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: authArgs()})
	require.NoError(t, err)
	assert.False(t, r.IsError, text(r))
	assert.Equal(t, `User has answered your questions: "Which auth method?"="API key". You can now continue with the user's answers in mind.`, text(r))
	require.NotNil(t, got)
	assert.Contains(t, got.Message, "Which auth method?")
	assert.Contains(t, got.Message, "the first answer anywhere counts")
	q := api.Questions()[0]
	require.NotNil(t, q.RespondedBy)
	assert.Equal(t, "mcp", q.RespondedBy.Platform, "recorded as the MCP host's user")
	assert.Equal(t, "vscode", q.RespondedBy.ID)
}

func TestElicitationWithdrawnWhenAnsweredElsewhere(t *testing.T) {
	api := fakeapi.New(t, "")
	withdrawn := make(chan struct{})
	s := connectEliciting(t, api, func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		<-ctx.Done() // the form stays open until the server withdraws it
		close(withdrawn)
		return nil, ctx.Err()
	})
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		r, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: authArgs()})
		assert.NoError(t, err)
		done <- r
	}()
	q := api.WaitPending(t, 1)
	time.Sleep(300 * time.Millisecond)
	api.Answer(t, q.ID, []string{"OAuth 2.0"})
	select {
	case r := <-done:
		assert.Contains(t, text(r), `"Which auth method?"="OAuth 2.0"`)
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not return the answer given elsewhere")
	}
	select {
	case <-withdrawn:
	case <-time.After(5 * time.Second):
		t.Fatal("the host's form was not withdrawn")
	}
	assert.Equal(t, "test", api.Question(q.ID).RespondedBy.Platform)
}
