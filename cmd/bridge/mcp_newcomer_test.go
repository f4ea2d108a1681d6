package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lockedLog is the stderr of `askbridge mcp`: what its operator reads in
// the MCP host's log.
type lockedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *lockedLog) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(l.String(), want) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the log of askbridge mcp never said %q:\n%s", want, l.String())
}

// stdioMCP starts cmd (an `askbridge mcp`) and connects an MCP client.
func stdioMCP(t *testing.T, cmd *exec.Cmd) (*mcp.ClientSession, *lockedLog) {
	t.Helper()
	logs := &lockedLog{}
	cmd.Stderr = logs
	c := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	s, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err, "%s", logs)
	t.Cleanup(func() { _ = s.Close() })
	return s, logs
}

// docsMCPSnippet is the `claude mcp add` command of docs/agents.md for
// `askbridge mcp`.
func docsMCPSnippet(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/agents.md")
	require.NoError(t, err)
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		for _, line := range strings.Split(m[1], "\n") {
			if strings.HasPrefix(line, "claude mcp add askbridge ") && strings.Contains(line, " mcp") && !strings.Contains(line, "--transport") {
				return line
			}
		}
	}
	t.Fatal("docs/agents.md has no `claude mcp add askbridge … mcp` snippet")
	return ""
}

// TestDocsMCPSnippetWorksOnTheReadmeBridge runs the MCP snippet of
// docs/agents.md as written, with a stand-in `claude` that records what it
// was told to run, against the bridge of the README (`make run`: no
// configuration file), with askbridge on PATH as the README's walkthrough
// has it. The server it configures asks successfully, in the walkthrough's
// project, where `askbridge questions list` shows the question.
func TestDocsMCPSnippetWorksOnTheReadmeBridge(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	b := startBridge(t)
	port := b.URL[strings.LastIndex(b.URL, ":")+1:]
	fake := t.TempDir()
	record := filepath.Join(fake, "args")
	require.NoError(t, os.WriteFile(filepath.Join(fake, "claude"), []byte("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > "+record+"\n"), 0o755))
	snippet := strings.ReplaceAll(docsMCPSnippet(t), ":8080", ":"+port)
	sh := exec.Command("bash", "-euc", snippet)
	sh.Env = []string{"PATH=" + fake + string(os.PathListSeparator) + filepath.Dir(bridgeBin) + string(os.PathListSeparator) + "/usr/bin:/bin", "HOME=" + t.TempDir()}
	out, err := sh.CombinedOutput()
	require.NoError(t, err, "%s", out)
	rec, err := os.ReadFile(record)
	require.NoError(t, err)
	args := strings.Split(strings.TrimSuffix(string(rec), "\n"), "\n")

	// claude mcp add NAME [--env K=V]... -- COMMAND ARGS...
	require.GreaterOrEqual(t, len(args), 3)
	require.Equal(t, []string{"mcp", "add", "askbridge"}, args[:3])
	env := []string{"PATH=/usr/bin:/bin"} // Claude Code's own PATH need not have askbridge
	i := 3
	for ; i < len(args) && args[i] != "--"; i++ {
		if args[i] == "--env" || args[i] == "-e" {
			i++
			env = append(env, args[i])
		}
	}
	require.Less(t, i, len(args), "no -- before the command")
	command := args[i+1:]
	require.Equal(t, []string{bridgeBin, "mcp"}, command, "the absolute path of askbridge, so Claude Code finds it whatever its PATH")
	for _, kv := range env {
		assert.False(t, strings.HasPrefix(kv, "BRIDGE_ROUTE="), "the README's bridge has no routes: %s", kv)
	}

	cmd := exec.Command(command[0], command[1:]...)
	cmd.Env = env
	s, logs := stdioMCP(t, cmd)
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		r, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: askArgs("Which auth method?")})
		assert.NoError(t, err)
		done <- r
	}()
	// The walkthrough's terminal: BRIDGE_PROJECT=demo.
	var id string
	require.Eventually(t, func() bool {
		code, stdout, _ := b.cli("questions", "list")
		if code != 0 || !strings.Contains(stdout, "Which auth method?") {
			return false
		}
		id = strings.Fields(strings.Split(stdout, "\n")[1])[0]
		return true
	}, 15*time.Second, 100*time.Millisecond, "the snippet's question is not in the walkthrough's project:\n%s", logs)
	code, stdout, stderr := b.cli("questions", "answer", id, "1")
	require.Equal(t, 0, code, stdout+stderr)
	select {
	case r := <-done:
		require.NotNil(t, r)
		assert.False(t, r.IsError, firstText(r))
		assert.Contains(t, firstText(r), `"Which auth method?"="OAuth 2.0"`)
	case <-time.After(15 * time.Second):
		t.Fatalf("ask_user did not return after the answer:\n%s", logs)
	}
}

// TestMCPRouteMissingIsTheOperatorsError: BRIDGE_ROUTE naming a route the
// bridge lacks is said to the operator — in the log at start and at each
// call — while the model hears only that the question could not be sent,
// never to fix what it cannot.
func TestMCPRouteMissingIsTheOperatorsError(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	b := startBridge(t)
	cmd := exec.Command(bridgeBin, "mcp")
	cmd.Env = []string{"BRIDGE_URL=" + b.URL, "BRIDGE_PROJECT=demo", "BRIDGE_ROUTE=oncall"}
	s, logs := stdioMCP(t, cmd)
	logs.waitFor(t, `BRIDGE_ROUTE=oncall: the bridge at `+b.URL+` has no route named \"oncall\" (it has none)`)

	r, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: askArgs("Which auth method?")})
	require.NoError(t, err)
	assert.True(t, r.IsError)
	assert.Equal(t, "The question could not be sent. Continue without the answer: make the safest reasonable choice yourself and tell the user which one you made.", firstText(r))
	assert.NotContains(t, firstText(r), "Fix these")
	logs.waitFor(t, `BRIDGE_ROUTE=oncall: no route named \"oncall\" in the configuration; unset BRIDGE_ROUTE or name a route of the bridge's configuration`)

	// A route the bridge has: no complaint at start.
	cfg := filepath.Join(t.TempDir(), "bridge.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("routes:\n  - {name: oncall}\n"), 0o600))
	b2 := startBridge(t, "BRIDGE_CONFIG="+cfg)
	cmd = exec.Command(bridgeBin, "mcp")
	cmd.Env = []string{"BRIDGE_URL=" + b2.URL, "BRIDGE_PROJECT=demo", "BRIDGE_ROUTE=oncall"}
	_, logs = stdioMCP(t, cmd)
	time.Sleep(500 * time.Millisecond)
	assert.NotContains(t, logs.String(), "no route")
}

// TestRemoteMCPTimeout: ?timeout= on /mcp sets how long the session's
// questions stay open, bounded as the API's timeout.
func TestRemoteMCPTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	b := startBridge(t)
	s := mcpConnect(t, b.URL+"/mcp?project=demo&timeout=2h", "")
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		r, _ := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: askArgs("Which auth method?")})
		done <- r
	}()
	q := pending(t, b.URL, "demo", "", 1)[0]
	created, err := time.Parse(time.RFC3339Nano, q["created_at"].(string))
	require.NoError(t, err)
	expires, err := time.Parse(time.RFC3339Nano, q["expires_at"].(string))
	require.NoError(t, err)
	assert.Equal(t, 2*time.Hour, expires.Sub(created).Round(time.Second))
	code, _ := authed(t, "POST", b.URL+"/api/projects/demo/agent-questions/"+q["id"].(string)+"/respond", "", map[string]any{"response": "OAuth 2.0"})
	require.Equal(t, http.StatusAccepted, code)
	select {
	case r := <-done:
		require.NotNil(t, r)
		assert.False(t, r.IsError, firstText(r))
	case <-time.After(15 * time.Second):
		t.Fatal("ask_user did not return after the answer")
	}

	code, out := authed(t, "POST", b.URL+"/mcp?timeout=5s", "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize"})
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Equal(t, "must be between 10s and 720h (30 days), got 5s", out["error"].(map[string]any)["details"].([]any)[0].(map[string]any)["problem"])
}
