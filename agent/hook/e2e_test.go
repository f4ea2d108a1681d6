package hook_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	os.Exit(bridgetest.Main(m))
}

type hookRun struct {
	cmd    *exec.Cmd
	out    bytes.Buffer
	errb   bytes.Buffer
	done   chan struct{}
	code   int
	output string
}

func startHook(t *testing.T, srv *bridgetest.Server, input string, args ...string) *hookRun {
	t.Helper()
	h := &hookRun{done: make(chan struct{})}
	h.cmd = bridgetest.ClientCommand(t, srv, append([]string{"hook", "claude-code"}, args...))
	h.cmd.Stdin = strings.NewReader(input)
	h.cmd.Stdout, h.cmd.Stderr = &h.out, &h.errb
	require.NoError(t, h.cmd.Start())
	go func() { _ = h.cmd.Wait(); h.code = h.cmd.ProcessState.ExitCode(); close(h.done) }()
	t.Cleanup(func() { _ = h.cmd.Process.Kill() })
	return h
}

func (h *hookRun) wait(t *testing.T) *hookRun {
	t.Helper()
	select {
	case <-h.done:
	case <-time.After(30 * time.Second):
		t.Fatal("hook did not finish")
	}
	h.output = h.out.String()
	return h
}

func pendingOn(t *testing.T, c *client.Client, n int) *domain.Question {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		qs, err := c.List(t.Context(), domain.StatusPending)
		require.NoError(t, err)
		if len(qs) >= n {
			return qs[len(qs)-1]
		}
	}
	t.Fatalf("no %d pending questions", n)
	return nil
}

const askInput = `{"session_id":"0b7c5a52-6c1e-4a57-9b1a-2f7d1d0e9c11","transcript_path":"/home/u/.claude/projects/x/t.jsonl","cwd":"/src/app","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"AskUserQuestion","tool_use_id":"toolu_01ABC","tool_input":{"questions":[{"question":"Which auth method?","header":"Auth","multiSelect":false,"options":[{"label":"OAuth 2.0","description":"Standard"},{"label":"API key","description":"Simple"}]}]}}`

func TestE2EHookAgainstRealBridge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bridge binary")
	}
	srv := bridgetest.Serve(t)
	c := client.New(srv.URL, "", "default")

	// AskUserQuestion answered through the API.
	h := startHook(t, srv, askInput)
	q := pendingOn(t, c, 1)
	assert.Equal(t, "0b7c5a52-6c1e-4a57-9b1a-2f7d1d0e9c11", q.RunID)
	assert.Equal(t, "toolu_01ABC", q.IdempotencyKey)
	assert.Equal(t, "claude-code", q.AgentID)
	_, err := c.RespondText(t.Context(), q.ID, "OAuth 2.0")
	require.NoError(t, err)
	h.wait(t)
	assert.Equal(t, 0, h.code, h.errb.String())
	assert.Equal(t, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"questions":[{"question":"Which auth method?","header":"Auth","multiSelect":false,"options":[{"label":"OAuth 2.0","description":"Standard"},{"label":"API key","description":"Simple"}]}],"answers":{"Which auth method?":"OAuth 2.0"}}}}`+"\n", h.output)

	// Claude Code delivering the same tool call again re-attaches to the answer.
	h = startHook(t, srv, askInput).wait(t)
	assert.Equal(t, 0, h.code)
	assert.Contains(t, h.output, `"answers":{"Which auth method?":"OAuth 2.0"}`)

	// A Bash PermissionRequest denied with feedback.
	perm := `{"session_id":"s-2","cwd":"/src/app","permission_mode":"default","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"rm -rf build","description":"Clean"}}`
	h = startHook(t, srv, perm)
	q = pendingOn(t, c, 1)
	assert.Equal(t, domain.KindApproval, q.Kind)
	assert.Equal(t, "Allow Bash: rm -rf build?", q.Questions[0].Question)
	_, err = c.RespondText(t.Context(), q.ID, "keep build, run make clean")
	require.NoError(t, err)
	h.wait(t)
	assert.Equal(t, 0, h.code, h.errb.String())
	assert.Equal(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Denied by api:local via askbridge, who said: \"keep build, run make clean\""}}}`+"\n", h.output)

	// A subagent: the bridge refuses with 403 subagent_not_allowed.
	sub := strings.Replace(askInput, `"cwd"`, `"agent_id":"a-1","agent_type":"general-purpose","cwd"`, 1)
	sub = strings.Replace(sub, "toolu_01ABC", "toolu_02", 1)
	h = startHook(t, srv, sub).wait(t)
	assert.Equal(t, 0, h.code, h.errb.String())
	assert.Equal(t, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"only parent conversations can ask user questions: ask the parent agent to ask the user"}}`+"\n", h.output)

	// Timeout: the question is withdrawn, nothing printed.
	to := strings.Replace(askInput, "toolu_01ABC", "toolu_03", 1)
	to = strings.Replace(to, "Which auth method?", "Which cache?", 1)
	h = startHook(t, srv, to, "--timeout", "1s").wait(t)
	assert.Equal(t, 0, h.code, h.errb.String())
	assert.Empty(t, h.output)
	qs, err := c.RunQuestions(t.Context(), "0b7c5a52-6c1e-4a57-9b1a-2f7d1d0e9c11")
	require.NoError(t, err)
	last := qs[len(qs)-1]
	assert.Equal(t, "Which cache?", last.Questions[0].Question)
	assert.Equal(t, domain.StatusCancelled, last.Status)
	assert.Equal(t, domain.CancelAgent, last.CancelReason)

	// Garbage.
	h = startHook(t, srv, "\x7fELF garbage {").wait(t)
	assert.Equal(t, 1, h.code)
	assert.Empty(t, h.output)
	assert.Contains(t, h.errb.String(), "not a hook event")
}
