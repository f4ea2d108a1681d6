package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestE2EAskWithAnAgentToken: `askbridge ask` with an agent token and no
// --agent or BRIDGE_AGENT_ID asks as the token's agent (it used to send
// agent_id "cli", which the token refuses); an --agent the token does not
// own is refused with the flag and the variable named, and a bridge that
// requires a token names BRIDGE_TOKEN when none is set.
func TestE2EAskWithAnAgentToken(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bridge binary")
	}
	const agentTok, opTok = "deploy-bot-token-0123456789abcdef", "alice-token-0123456789abcdef0123"
	cfg := filepath.Join(t.TempDir(), "bridge.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`agents:
  - {id: deploy-bot, project: demo, token: `+agentTok+`, tools: [ask_user]}
operators:
  - {id: alice, projects: [demo], token: `+opTok+`}
`), 0o600))
	srv := bridgetest.Serve(t, "BRIDGE_CONFIG="+cfg)
	ops := client.New(srv.URL, opTok, "demo")

	asked := startEnv(t, srv, []string{"BRIDGE_TOKEN=" + agentTok, "BRIDGE_PROJECT=demo"}, "ask", "-q", "Ship it?", "-o", "Yes", "-o", "No")
	var id string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline) && id == ""; time.Sleep(50 * time.Millisecond) {
		qs, err := ops.List(t.Context(), "pending")
		require.NoError(t, err)
		for _, q := range qs {
			if q.Questions[0].Question == "Ship it?" {
				assert.Equal(t, "deploy-bot", q.AgentID)
				id = q.ID
			}
		}
	}
	if id == "" {
		_ = asked.cmd.Process.Kill()
		t.Fatalf("the question was not asked; stderr:\n%s", asked.wait(t).stderr.String())
	}
	ans := runBridgeEnv(t, srv, []string{"BRIDGE_TOKEN=" + opTok, "BRIDGE_PROJECT=demo"}, "questions", "answer", id, "1")
	require.Equal(t, 0, ans.code, ans.stderr.String())
	asked.wait(t)
	assert.Equal(t, 0, asked.code, asked.stderr.String())
	assert.Equal(t, "Yes\n", asked.stdout.String())

	other := runBridgeEnv(t, srv, []string{"BRIDGE_TOKEN=" + agentTok, "BRIDGE_PROJECT=demo"}, "ask", "--agent", "cli", "-q", "x?")
	assert.Equal(t, 1, other.code)
	assert.Contains(t, other.stderr.String(), "--agent or BRIDGE_AGENT_ID")

	none := runBridgeEnv(t, srv, []string{"BRIDGE_PROJECT=demo"}, "questions", "list")
	assert.Equal(t, 1, none.code)
	assert.Contains(t, none.stderr.String(), "set BRIDGE_TOKEN")
	assert.NotContains(t, none.stderr.String(), "Authorization", "the CLI names the variable, not the HTTP header")
}

// startEnv starts a client command with env added.
func startEnv(t *testing.T, srv *bridgetest.Server, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: bridgetest.ClientCommand(t, srv, args, env...), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	require.NoError(t, p.cmd.Start())
	go func() {
		_ = p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	return p
}

// TestE2EAskWithAnOtherOptionIsRefused: `askbridge ask -o Other` is
// refused by the bridge with the words MCP and the API use, naming the
// option, and exits 1 without asking anything.
func TestE2EAskWithAnOtherOptionIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bridge binary")
	}
	srv := bridgetest.Serve(t)
	r := runBridgeEnv(t, srv, []string{"BRIDGE_PROJECT=demo"}, "ask", "Deploy api v2.14?", "-o", "Deploy now", "-o", "Other", "--timeout", "1m")
	assert.Equal(t, 1, r.code, r.stderr.String())
	assert.Contains(t, r.stderr.String(), "  questions[0].options[1].label: "+domain.OtherOptionProblem+"\n")
	qs, err := client.New(srv.URL, "", "demo").List(t.Context(), "")
	require.NoError(t, err)
	assert.Empty(t, qs, "nothing was asked")
}
