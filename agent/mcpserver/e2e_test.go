package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/domain"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pendingOn polls the real bridge until n questions are pending and returns
// the newest.
func pendingOn(t *testing.T, c *client.Client, n int) *domain.Question {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		qs, err := c.List(t.Context(), domain.StatusPending)
		require.NoError(t, err)
		if len(qs) >= n {
			return qs[len(qs)-1]
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no %d pending questions on the bridge", n)
	return nil
}

func TestE2EMCPAnsweredThroughAPIWithProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bridge binary")
	}
	srv := bridgetest.Serve(t)
	c := client.New(srv.URL, "", "default")
	s, prog := connectCmd(t, bridgetest.ClientCommand(t, srv, []string{"mcp", "--progress-every", "300ms"}, "BRIDGE_AGENT_ID=claude"))

	tools, err := s.ListTools(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 1)
	assert.Equal(t, "ask_user", tools.Tools[0].Name)

	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		p := &mcp.CallToolParams{Name: "ask_user", Arguments: authArgs()}
		p.SetProgressToken(42)
		r, err := s.CallTool(t.Context(), p)
		assert.NoError(t, err)
		done <- r
	}()
	q := pendingOn(t, c, 1)
	assert.Equal(t, "claude", q.AgentID)
	time.Sleep(time.Second)
	_, err = c.RespondText(t.Context(), q.ID, "api key")
	require.NoError(t, err)
	var r *mcp.CallToolResult
	select {
	case r = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("ask_user did not return after the answer")
	}
	assert.False(t, r.IsError)
	assert.Equal(t, `User has answered your questions: "Which auth method?"="API key". You can now continue with the user's answers in mind.`, text(r))
	sc := structured(t, r)
	assert.Equal(t, "answered", sc["status"])
	assert.Equal(t, q.ID, sc["question_id"])
	msgs := prog.all()
	require.GreaterOrEqual(t, len(msgs), 2)
	assert.Equal(t, "waiting for an answer in the web inbox — expires in 5 min", msgs[0])
}

func TestE2EMCPReattachAndExpiry(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bridge binary; waits 10s for an expiry")
	}
	cfg := filepath.Join(t.TempDir(), "bridge.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("routes:\n  - {name: fast, timeout: 10s}\n"), 0o600))
	srv := bridgetest.Serve(t, "BRIDGE_CONFIG="+cfg)
	c := client.New(srv.URL, "", "default")
	s, _ := connectCmd(t, bridgetest.ClientCommand(t, srv, []string{"mcp"}, "BRIDGE_ROUTE=fast"))

	// The host's timeout cuts the call; the question stays pending.
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "ask_user", Arguments: authArgs()})
	cancel()
	require.Error(t, err)
	q := pendingOn(t, c, 1)
	assert.Equal(t, "fast", q.Route)
	_, err = c.RespondText(t.Context(), q.ID, "OAuth 2.0")
	require.NoError(t, err)
	// The same call again re-attaches and returns the answer at once.
	start := time.Now()
	r, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: authArgs()})
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.Contains(t, text(r), `"Which auth method?"="OAuth 2.0"`)
	all, err := c.List(t.Context(), "")
	require.NoError(t, err)
	assert.Len(t, all, 1, "re-attached, not asked twice")

	// Expiry: an error result telling the model to go on without it.
	args := authArgs()
	args["questions"].([]any)[0].(map[string]any)["question"] = "Which database?"
	start = time.Now()
	r, err = s.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: args})
	require.NoError(t, err)
	assert.True(t, r.IsError)
	assert.Contains(t, text(r), "No answer: the question expired")
	assert.Contains(t, text(r), "Continue without the answer")
	assert.Equal(t, "expired", structured(t, r)["status"])
	assert.InDelta(t, 10, time.Since(start).Seconds(), 3)
}
