package slack

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSocketModeSameHandlers(t *testing.T) {
	var fakeApp string
	e := newEnv(t, func(c *Config, _ *lifecycle.RouterConfig) { c.AppToken, c.SigningSecret = "xapp-fake-app-token", "" })
	fakeApp = e.fake.AppToken
	require.Equal(t, fakeApp, e.a.cfg.AppToken)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.a.Start(ctx) }()
	sock, err := e.fake.AcceptSocket(5 * time.Second)
	require.NoError(t, err)
	defer sock.Close()

	// An open-ended question: a click opens the modal, an empty submission
	// gets an inline error in the acknowledgement, a real one answers.
	req := authQuestion()
	req.Targets = req.Targets[:1]
	req.Questions = []domain.Item{{Question: "Release name?"}}
	q := e.ask(req)
	ts := e.copyOn(q, "C1").MessageTS
	ack, err := sock.Send("interactive", e.clickPayload(alice, "C1", ts, "Answer…", nil), 3*time.Second)
	require.NoError(t, err)
	assert.True(t, len(ack) == 0 || string(ack) == "null", "a click is acknowledged with an empty payload: %s", ack)
	e.wait("modal", func() bool { return len(e.fake.Views()) == 1 })

	var v map[string]any
	require.NoError(t, json.Unmarshal(e.fake.Views()[0].View, &v))
	submission := func(text string) map[string]any {
		return map[string]any{"type": "view_submission", "user": map[string]any{"id": alice.id, "name": alice.name},
			"view": map[string]any{"callback_id": v["callback_id"], "private_metadata": v["private_metadata"],
				"state": map[string]any{"values": map[string]any{modalBlock: map[string]any{modalAction: map[string]any{"value": text}}}}}}
	}
	ack, err = sock.Send("interactive", submission(""), 3*time.Second)
	require.NoError(t, err)
	assert.Contains(t, string(ack), `"response_action":"errors"`)
	assert.Equal(t, domain.StatusPending, e.get(q).Status)

	_, err = sock.Send("interactive", submission("Borealis"), 3*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "Borealis", e.final(q).Response)
	e.edited(q)

	// Events arrive over the socket too: a thread reply answers.
	q2 := e.ask(authQuestion())
	root := e.copyOn(q2, "C1").MessageTS
	replyTS := e.fake.Seed("C1", root, alice.id, "2")
	_, err = sock.Send("events_api", map[string]any{"type": "event_callback", "event_id": "EvS1",
		"event": map[string]any{"type": "message", "user": alice.id, "text": "2", "ts": replyTS, "thread_ts": root, "channel": "C1"}},
		3*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "apikey", e.final(q2).Response)

	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Start did not return after its context ended")
	}
}

func TestStartWithoutAppTokenReturnsAtOnce(t *testing.T) {
	e := newEnv(t)
	assert.NoError(t, e.a.Start(context.Background()))
}
