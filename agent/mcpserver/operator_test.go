package mcpserver_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lockedBuffer is the stderr of `askbridge mcp`: what its operator reads in
// the MCP host's log.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor waits until the log holds want.
func (b *lockedBuffer) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(b.String(), want) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the log of askbridge mcp never said %q:\n%s", want, b.String())
}

// connectLogged starts `askbridge mcp` with env and keeps its stderr.
func connectLogged(t *testing.T, env ...string) (*mcp.ClientSession, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "mcp")
	cmd.Env = append(append(bridgetest.CleanEnv(), "ASKBRIDGE_TEST_AS_BRIDGE=1"), env...)
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	s, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, logs
}

// TestNoBridgeIsToldInTheCLIsWords: with nothing listening at BRIDGE_URL,
// the operator reads the CLI's words in the log (at start and when a call
// fails), and the model is told only that the question could not be sent:
// no Go dial error in either.
func TestNoBridgeIsToldInTheCLIsWords(t *testing.T) {
	s, logs := connectLogged(t, "BRIDGE_URL=http://127.0.0.1:1")
	want := "no bridge at http://127.0.0.1:1 (BRIDGE_URL): start it with `askbridge serve`, or set BRIDGE_URL"
	logs.waitFor(t, want)
	r := call(t, s, authArgs())
	assert.True(t, r.IsError)
	assert.Equal(t, "The question was not sent: askbridge could not be reached. Continue without the answer: make the safest reasonable choice yourself and tell the user which one you made.", text(r))
	// The log comes through a pipe: it may lag behind the result.
	assert.Eventually(t, func() bool { return strings.Count(logs.String(), want) == 2 }, 5*time.Second, 20*time.Millisecond,
		"at start and at the failed call:\n%s", logs)
	assert.NotContains(t, logs.String()+text(r), "dial tcp")
}
