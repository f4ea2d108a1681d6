package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cliEnv runs the built binary as a client of p with env (BRIDGE_URL is
// p's).
func (p *proc) cliEnv(ctx context.Context, env []string, args ...string) (int, string, string) {
	p.t.Helper()
	cmd := exec.CommandContext(ctx, bridgeBin, args...)
	cmd.Env = append([]string{"BRIDGE_URL=" + p.URL, "HOME=" + p.t.TempDir()}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		p.t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// TestCLISaysWhatOpenModeIgnored: on a bridge without tokens, a
// BRIDGE_TOKEN (the docs' "…", a leftover) and a mistyped BRIDGE_PROJECT are
// served — nothing refused — and the CLI says once on stderr what the
// bridge ignored or guessed.
func TestCLISaysWhatOpenModeIgnored(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	p := startBridge(t)
	code, _ := authed(t, "POST", p.URL+"/api/projects/demo/agent-questions", "", map[string]any{"run_id": "r0", "question": "Deploy?"})
	require.Equal(t, 201, code)

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for _, token := range []string{"nope", "…"} {
		code, stdout, stderr := p.cliEnv(ctx, []string{"BRIDGE_PROJECT=demo", "BRIDGE_TOKEN=" + token}, "questions", "list")
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stdout, "Deploy?")
		note := "askbridge questions: note: the token was ignored (the bridge runs without tokens)\n"
		assert.True(t, strings.HasPrefix(stderr, note), "token %q: %s", token, stderr)
		assert.Equal(t, 1, strings.Count(stderr, "note:"), "token %q: %s", token, stderr)
	}

	code, stdout, stderr := p.cliEnv(ctx, []string{"BRIDGE_PROJECT=dmeo"}, "questions", "list")
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stdout, "Deploy?")
	assert.True(t, strings.HasPrefix(stderr, "askbridge questions: note: project dmeo had no questions before; did you mean demo?\n"), stderr)
	assert.Equal(t, 1, strings.Count(stderr, "note:"), stderr)

	// askbridge ask makes several requests (ask, then long-polls): each
	// notice is printed once.
	done := make(chan string, 1)
	go func() {
		_, _, stderr := p.cliEnv(ctx, []string{"BRIDGE_PROJECT=dmeo", "BRIDGE_TOKEN=nope"}, "ask", "--timeout", "10m", "Ship it?", "-o", "Yes", "-o", "No")
		done <- stderr
	}()
	q := pending(t, p.URL, "dmeo", "", 1)[0]
	time.Sleep(300 * time.Millisecond) // a long-poll or two
	code, _ = authed(t, "POST", p.URL+"/api/projects/dmeo/agent-questions/"+q["id"].(string)+"/respond", "", map[string]any{"response": "Yes"})
	require.Equal(t, 202, code)
	stderr = <-done
	assert.Equal(t, 1, strings.Count(stderr, "note: the token was ignored"), stderr)
	assert.Equal(t, 1, strings.Count(stderr, "note: project dmeo had no questions before; did you mean demo?"), stderr)
}
