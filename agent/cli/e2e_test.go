package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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

type proc struct {
	cmd            *exec.Cmd
	stdout, stderr *bytes.Buffer
	done           chan struct{}
	code           int
}

func start(t *testing.T, srv *bridgetest.Server, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: bridgetest.ClientCommand(t, srv, args), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, done: make(chan struct{})}
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

func (p *proc) wait(t *testing.T) *proc {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%v did not finish", p.cmd.Args)
	}
	return p
}

func runBridge(t *testing.T, srv *bridgetest.Server, args ...string) *proc {
	t.Helper()
	return start(t, srv, args...).wait(t)
}

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

func TestE2EAskAnsweredByQuestionsAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bridge binary")
	}
	srv := bridgetest.Serve(t)
	c := client.New(srv.URL, "", "default")

	ask := start(t, srv, "ask", "--json", "-q", "Which region?", "--header", "Region",
		"-o", "eu-west-1|Dublin", "-o", "us-east-1|N. Virginia", "--run", "run-cli", "--agent", "ops-script")
	q := pendingOn(t, c, 1)
	assert.Equal(t, "run-cli", q.RunID)

	show := runBridge(t, srv, "questions", "show", q.ID)
	require.Equal(t, 0, show.code, show.stderr.String())
	assert.Contains(t, show.stdout.String(), "[Region] Which region?\n   1) eu-west-1 — Dublin\n   2) us-east-1 — N. Virginia\n\nto dismiss it without an answer: askbridge questions cancel ")

	ans := runBridge(t, srv, "questions", "answer", q.ID, "2")
	require.Equal(t, 0, ans.code, ans.stderr.String())
	assert.Equal(t, "answered \"Which region?\": us-east-1\n", ans.stdout.String())

	ask.wait(t)
	assert.Equal(t, 0, ask.code, ask.stderr.String())
	var rec domain.Question
	require.NoError(t, json.Unmarshal(ask.stdout.Bytes(), &rec), ask.stdout.String())
	assert.Equal(t, domain.StatusAnswered, rec.Status)
	assert.Equal(t, "us-east-1", rec.Answers["Which region?"])
	assert.Equal(t, "api", rec.RespondedBy.Platform)

	// The operator view of kinds: an approval and its "Cancel" choice.
	_, err := c.Ask(t.Context(), &domain.AskRequest{RunID: "sess", AgentID: "claude-code", Kind: domain.KindApproval,
		Questions: []domain.Item{{Question: "Allow Bash: rm -rf build?", Header: "Approval",
			Options: []domain.Option{{Label: "Allow"}, {Label: "Deny"}}}}})
	require.NoError(t, err)
	list := runBridge(t, srv, "questions", "list", "--all")
	require.Equal(t, 0, list.code, list.stderr.String())
	lines := strings.Split(strings.TrimSpace(list.stdout.String()), "\n")
	require.Len(t, lines, 3, list.stdout.String())
	assert.Regexp(t, `^ID\s+KIND\s+STATUS`, lines[0])
	assert.Regexp(t, `\squestion\s+answered\s+-\s+ops-script\s+Which region\?$`, lines[1])
	assert.Regexp(t, `\sapproval\s+pending\s+in 5 min\s+claude-code\s+Allow Bash: rm -rf build\?$`, lines[2])
	appr := pendingOn(t, c, 1)
	cancel := runBridge(t, srv, "questions", "cancel", appr.ID)
	require.Equal(t, 0, cancel.code, cancel.stderr.String())
	final, err := c.Get(t.Context(), appr.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusCancelled, final.Status)
	assert.Equal(t, domain.CancelUser, final.CancelReason)
}

func TestE2EAskExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bridge binary; waits 10s for an expiry")
	}
	cfg := filepath.Join(t.TempDir(), "bridge.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("routes:\n  - {name: fast, timeout: 10s}\n"), 0o600))
	srv := bridgetest.Serve(t, "BRIDGE_CONFIG="+cfg)
	c := client.New(srv.URL, "", "default")

	expired := start(t, srv, "ask", "-q", "Anyone there?", "--route", "fast")

	// Interrupted: the question is withdrawn with reason agent, exit 4.
	intr := start(t, srv, "ask", "-q", "Proceed?", "-o", "Yes", "-o", "No", "--run", "other-run")
	var q *domain.Question
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		qs, err := c.RunQuestions(t.Context(), "other-run")
		require.NoError(t, err)
		if len(qs) == 1 {
			q = qs[0]
			break
		}
	}
	require.NotNil(t, q)
	require.NoError(t, intr.cmd.Process.Signal(syscall.SIGINT))
	intr.wait(t)
	assert.Equal(t, 4, intr.code, intr.stderr.String())
	final, err := c.Get(t.Context(), q.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusCancelled, final.Status)
	assert.Equal(t, domain.CancelAgent, final.CancelReason)

	// Dismissed by a person: exit 4.
	dis := start(t, srv, "ask", "-q", "Dismiss me?", "--run", "third-run")
	var d *domain.Question
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline) && d == nil; time.Sleep(50 * time.Millisecond) {
		if qs, _ := c.RunQuestions(t.Context(), "third-run"); len(qs) == 1 {
			d = qs[0]
		}
	}
	require.NotNil(t, d)
	cancel := runBridge(t, srv, "questions", "cancel", d.ID)
	require.Equal(t, 0, cancel.code, cancel.stderr.String())
	dis.wait(t)
	assert.Equal(t, 4, dis.code)

	// Usage and bridge errors.
	assert.Equal(t, 2, runBridge(t, srv, "ask").code)
	bad := runBridge(t, srv, "ask", "-q", "x?", "-o", "only one")
	assert.Equal(t, 1, bad.code)
	assert.Contains(t, bad.stderr.String(), "questions[0].options")

	expired.wait(t)
	assert.Equal(t, 3, expired.code, expired.stderr.String())
	assert.Contains(t, expired.stderr.String(), "expired")
}
