package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/agent/webhook"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestAgentLoopEndToEnd runs the example against the real bridge: ask →
// pause → answer → signed webhook → continuation with resumed_from.
func TestAgentLoopEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bridge binary")
	}
	const secret = "example-secret"
	srv := bridgetest.Serve(t, "BRIDGE_WEBHOOK_SECRET="+secret)
	c := client.New(srv.URL, "", "default")

	var deliveries sync.Map
	var out syncBuf
	var agent *Agent
	recv := &webhook.Receiver{Secret: []byte(secret), Handle: func(ctx context.Context, r webhook.Resume) error {
		deliveries.Store(r.DeliveryID, r)
		return agent.HandleResume(ctx, r)
	}}
	hs := httptest.NewServer(http.HandlerFunc(recv.ServeHTTP))
	defer hs.Close()
	agent = NewAgent(c, hs.URL+"/resume", t.TempDir(), &out, slog.New(slog.DiscardHandler))

	outcome, err := agent.Run(t.Context(), "run-1", []Message{{Role: "user", Content: "Deploy the service."}})
	require.NoError(t, err)
	require.Equal(t, Paused, outcome, "the loop stops before its next model call")
	assert.Contains(t, out.String(), "[run-1] paused: waiting for an answer to question")

	run, err := c.Run(t.Context(), "run-1")
	require.NoError(t, err)
	assert.Equal(t, domain.RunPaused, run.Status, "the runtime reported the pause")
	qs, err := c.RunQuestions(t.Context(), "run-1")
	require.NoError(t, err)
	require.Len(t, qs, 1)
	assert.Equal(t, hs.URL+"/resume", qs[0].Resume.URL)

	res, err := c.RespondText(t.Context(), qs[0].ID, "us-east-1")
	require.NoError(t, err)
	assert.NotEqual(t, "run-1", res.RunID, "respond names the continuation run")

	var finished string
	select {
	case finished = <-agent.Finished():
	case <-time.After(20 * time.Second):
		t.Fatalf("the continuation did not finish; output:\n%s", out.String())
	}
	assert.Equal(t, res.RunID, finished)
	assert.Contains(t, out.String(), "["+res.RunID+"] resumed from run-1 after question.answered")
	assert.Contains(t, out.String(), "["+res.RunID+"] Deploying to us-east-1.")

	cont, err := c.Run(t.Context(), res.RunID)
	require.NoError(t, err)
	assert.Equal(t, "run-1", cont.ResumedFrom)
	old, err := c.Run(t.Context(), "run-1")
	require.NoError(t, err)
	assert.Equal(t, domain.RunResumed, old.Status)

	n := 0
	deliveries.Range(func(_, v any) bool {
		n++
		r := v.(webhook.Resume)
		assert.Equal(t, "run-1", r.Run.ResumedFrom)
		assert.Equal(t, res.RunID, r.Run.ID)
		assert.True(t, strings.HasPrefix(r.UserMessage, `Previously you asked: "Which region should I deploy to?"`))
		return true
	})
	assert.Equal(t, 1, n)
}

func TestMain(m *testing.M) { os.Exit(bridgetest.Main(m)) }
