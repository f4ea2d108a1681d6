package executor_test

import (
	"os"
	"sync"
	"testing"

	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/agent/executor"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPauseGate(t *testing.T) {
	var g executor.PauseGate
	_, paused := g.Paused()
	assert.False(t, paused, "the zero gate is open")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); g.Pause(&domain.Question{ID: "q1"}); g.Paused() }()
	}
	wg.Wait()
	q, paused := g.Paused()
	assert.True(t, paused)
	assert.Equal(t, "q1", q.ID)
	g.Reset()
	_, paused = g.Paused()
	assert.False(t, paused)
}

func TestResumeMessageIsTheWebhookOne(t *testing.T) {
	q := &domain.Question{Status: domain.StatusAnswered, Questions: []domain.Item{{Question: "Which auth method?"}},
		Answers: map[string]string{"Which auth method?": "OAuth 2.0"}}
	assert.Equal(t, "Previously you asked: \"Which auth method?\"\nThe user responded: \"OAuth 2.0\"\n\nContinue from where you left off.", executor.ResumeMessage(q))
}

func TestAskerNeedsResumeURL(t *testing.T) {
	a := &executor.Asker{Client: client.New("http://127.0.0.1:1", "", "p")}
	_, err := a.Ask(t.Context(), "run", &domain.AskRequest{Question: "Q?"})
	assert.ErrorIs(t, err, executor.ErrNoResumeURL)
}

// TestAskerPauseProtocol checks the webhook-mode contract on the real
// bridge: an answer before the run pauses is refused (409 run_not_paused),
// after the pause it is accepted and names the continuation run.
func TestAskerPauseProtocol(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bridge binary")
	}
	srv := bridgetest.Serve(t, "BRIDGE_WEBHOOK_SECRET=x")
	c := client.New(srv.URL, "", "default")
	gate := &executor.PauseGate{}
	a := &executor.Asker{Client: c, ResumeURL: "http://127.0.0.1:1/resume", AgentID: "bot", Gate: gate}
	asked, err := a.Ask(t.Context(), "run-9", &domain.AskRequest{Question: "Ship it?",
		Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}})
	require.NoError(t, err)
	q, paused := gate.Paused()
	require.True(t, paused)
	assert.Equal(t, asked.ID, q.ID)
	assert.Contains(t, asked.Message, "resumes through the webhook")

	_, err = c.RespondText(t.Context(), asked.ID, "Yes")
	assert.Equal(t, domain.ERunNotPaused, domain.ErrorCode(err), "the run has not reported its pause yet")

	run, err := a.Paused(t.Context(), "run-9")
	require.NoError(t, err)
	assert.Equal(t, domain.RunPaused, run.Status)
	res, err := c.RespondText(t.Context(), asked.ID, "Yes")
	require.NoError(t, err)
	assert.NotEqual(t, "run-9", res.RunID)
	cont, err := c.Run(t.Context(), res.RunID)
	require.NoError(t, err)
	assert.Equal(t, "run-9", cont.ResumedFrom)
	assert.Equal(t, domain.RunRunning, cont.Status)
}

func TestMain(m *testing.M) { os.Exit(bridgetest.Main(m)) }
