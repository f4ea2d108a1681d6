package mcpserver_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/askbridge/askbridge/domain"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startMCP starts "askbridge mcp" with pipes the test holds itself, so the test
// decides when stdin closes and can signal and reap the process.
func startMCP(t *testing.T, api *fakeapi.Server, extraEnv ...string) (*exec.Cmd, *mcp.ClientSession, func() error, io.Closer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "mcp")
	cmd.Env = append(bridgetest.CleanEnv(), "ASKBRIDGE_TEST_AS_BRIDGE=1", "BRIDGE_URL="+api.URL, "BRIDGE_PROJECT=ops")
	cmd.Env = append(cmd.Env, extraEnv...)
	cmd.Stderr = &testWriter{t: t}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	s, err := c.Connect(t.Context(), &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	require.NoError(t, err)
	wait := func() error {
		select {
		case err := <-exited:
			return err
		case <-time.After(5 * time.Second):
			t.Fatal("askbridge mcp still running 5s later")
			return nil
		}
	}
	return cmd, s, wait, stdin
}

func callAsync(s *mcp.ClientSession, args map[string]any) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask_user", Arguments: args})
		done <- err
	}()
	return done
}

// waitStatus polls the fake until question id leaves pending.
func waitStatus(t *testing.T, api *fakeapi.Server, id string) *domain.Question {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if q := api.Question(id); q.Status != domain.StatusPending {
			return q
		}
		time.Sleep(20 * time.Millisecond)
	}
	return api.Question(id)
}

func TestMCPExitsOnSignalWhileCallPending(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			api := fakeapi.New(t, "")
			cmd, s, wait, _ := startMCP(t, api)
			callAsync(s, authArgs())
			q := api.WaitPending(t, 1)
			start := time.Now()
			require.NoError(t, cmd.Process.Signal(sig))
			_ = wait()
			assert.Less(t, time.Since(start), 3*time.Second, "askbridge mcp exits promptly on %v", sig)
			got := waitStatus(t, api, q.ID)
			assert.Equal(t, domain.StatusCancelled, got.Status, "the ended session withdraws its question")
			assert.Equal(t, domain.CancelAgent, got.CancelReason)
		})
	}
}

func TestMCPSessionEndWithdrawsPendingQuestions(t *testing.T) {
	api := fakeapi.New(t, "")
	_, s, wait, stdin := startMCP(t, api)
	callAsync(s, authArgs())
	q := api.WaitPending(t, 1)
	// A call the host cut (its own timeout) leaves the question pending for a
	// re-attach within the session...
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	args := authArgs()
	args["questions"].([]any)[0].(map[string]any)["question"] = "Which region?"
	_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "ask_user", Arguments: args})
	cancel()
	require.Error(t, err)
	q2 := api.WaitPending(t, 2)
	time.Sleep(200 * time.Millisecond)
	assert.Equal(t, domain.StatusPending, api.Question(q2.ID).Status)
	// ...but when the session ends (stdin closed), nobody is left to receive
	// an answer: both are withdrawn.
	require.NoError(t, stdin.Close())
	_ = wait()
	for _, id := range []string{q.ID, q2.ID} {
		got := api.Question(id)
		assert.Equal(t, domain.StatusCancelled, got.Status, id)
		assert.Equal(t, domain.CancelAgent, got.CancelReason, id)
	}
}

func TestMCPSessionEndKeepsPinnedRunsQuestions(t *testing.T) {
	api := fakeapi.New(t, "")
	_, s, wait, stdin := startMCP(t, api, "BRIDGE_RUN_ID=run-pinned")
	callAsync(s, authArgs())
	q := api.WaitPending(t, 1)
	require.NoError(t, stdin.Close())
	_ = wait()
	assert.Equal(t, domain.StatusPending, api.Question(q.ID).Status,
		"a pinned run outlives the process: the next process re-attaches")

	_, s2, _, _ := startMCP(t, api, "BRIDGE_RUN_ID=run-pinned")
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		r, err := s2.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: authArgs()})
		assert.NoError(t, err)
		done <- r
	}()
	time.Sleep(300 * time.Millisecond)
	api.Answer(t, q.ID, []string{"OAuth 2.0"})
	select {
	case r := <-done:
		assert.Contains(t, text(r), `"Which auth method?"="OAuth 2.0"`)
	case <-time.After(5 * time.Second):
		t.Fatal("the new process did not re-attach")
	}
	assert.Len(t, api.Questions(), 1)
}

func TestMCPConcurrentCallsEachGetTheirOwnAnswer(t *testing.T) {
	api := fakeapi.New(t, "")
	s, _ := connect(t, api, "BRIDGE_RUN_ID=", "BRIDGE_ROUTE=")
	type res struct {
		r   *mcp.CallToolResult
		err error
	}
	call := func(question string) <-chan res {
		ch := make(chan res, 1)
		go func() {
			args := authArgs()
			args["questions"].([]any)[0].(map[string]any)["question"] = question
			r, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: args})
			ch <- res{r, err}
		}()
		return ch
	}
	first := call("Which auth method for the API?")
	api.WaitPending(t, 1)
	second := call("Which auth method for the admin UI?")
	api.WaitPending(t, 2)
	qs := api.Questions()
	require.Len(t, qs, 2)
	for _, q := range qs {
		require.Equal(t, domain.StatusPending, api.Question(q.ID).Status, "no call supersedes the other: %s", q.Questions[0].Question)
	}
	api.Answer(t, qs[1].ID, []string{"API key"})
	api.Answer(t, qs[0].ID, []string{"OAuth 2.0"})
	for ch, want := range map[<-chan res]string{first: `"Which auth method for the API?"="OAuth 2.0"`, second: `"Which auth method for the admin UI?"="API key"`} {
		select {
		case r := <-ch:
			require.NoError(t, r.err)
			assert.False(t, r.r.IsError, text(r.r))
			assert.Contains(t, text(r.r), want)
		case <-time.After(5 * time.Second):
			t.Fatal("a concurrent call got no answer")
		}
	}
}
