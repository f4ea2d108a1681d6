// Package crosstest runs the real Slack and Discord adapters together,
// against their fake platforms, with one lifecycle.Router and the real store:
// what a person on one platform does must show on the other.
package crosstest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/discord"
	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const slackSecret = "cross-test-signing-secret"

// bridge is one replica with both adapters behind one HTTP server, as
// cmd/bridge wires them.
type bridge struct {
	t       *testing.T
	store   lifecycle.Store
	router  *lifecycle.Router
	slack   *fakeslack.Server
	discord *fakediscord.Server
	srv     *httptest.Server
}

func newBridge(t *testing.T) *bridge {
	t.Helper()
	fs := fakeslack.New("C1")
	t.Cleanup(fs.Close)
	fd := fakediscord.New(t)

	b := newApp(t, app.Settings{
		Slack:   slack.Config{BotToken: fs.BotToken, SigningSecret: slackSecret, APIURL: fs.APIURL()},
		Discord: discord.Config{BotToken: fd.BotToken, ApplicationID: fd.AppID, PublicKey: fd.PublicKey(), APIURL: fd.APIURL()},
	})
	fd.Target = b.srv.URL + "/discord/interactions"
	return &bridge{t: t, store: b.app.Store(), router: b.app.Router(), slack: fs, discord: fd, srv: b.srv}
}

// served is a bridge built by app.New (as `askbridge serve` builds it) behind
// a test server; the test drives the sweeper itself where it needs one.
type served struct {
	app *app.App
	srv *httptest.Server
}

func newApp(t *testing.T, s app.Settings) served {
	t.Helper()
	s.Addr = "127.0.0.1:0"
	a, err := app.New(context.Background(), s)
	require.NoError(t, err)
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
		srv.Close()
	})
	return served{a, srv}
}

// ask fans one question out to Slack channel C1 and Discord channel 1000.
func (b *bridge) ask() (q *domain.Question, slackTS, discordID string) {
	b.t.Helper()
	res, err := b.router.Ask(context.Background(), "ops", &domain.AskRequest{RunID: "run-1", AgentID: "deploy-bot",
		AgentName: "Deploy bot", Questions: []domain.Item{{Question: "Which auth method?", Header: "Auth",
			Options: []domain.Option{{Label: "OAuth 2.0", Value: "oauth"}, {Label: "API key", Value: "apikey"}}}},
		Targets: []domain.Target{{Platform: "slack", Channel: "C1"}, {Platform: "discord", Channel: "1000"}}}, "")
	require.NoError(b.t, err)
	q = res.Question
	for _, t := range q.Targets {
		require.Empty(b.t, t.Error, "posting to %s", t.Platform)
		switch t.Platform {
		case "slack":
			slackTS = t.MessageTS
		case "discord":
			discordID = t.MessageTS
		}
	}
	require.NotEmpty(b.t, slackTS)
	require.NotEmpty(b.t, discordID)
	return q, slackTS, discordID
}

// final is the agent's waiter.
func (b *bridge) final(q *domain.Question) *domain.Question {
	b.t.Helper()
	got, err := b.router.Wait(context.Background(), q.ProjectID, q.ID, 5*time.Second)
	require.NoError(b.t, err)
	require.True(b.t, got.Status.Final(), "question still %s", got.Status)
	return got
}

// slackClick clicks the button labelled label on the Slack copy.
func (b *bridge) slackClick(userID, userName, ts, label string) {
	b.t.Helper()
	b.sendSlack(b.slackClickBody(userID, userName, ts, label))
}

// slackClickBody is the signed-to-be body Slack sends for a click on the
// button labelled label, as the copy shows it now.
func (b *bridge) slackClickBody(userID, userName, ts, label string) string {
	b.t.Helper()
	m, ok := b.slack.Message("C1", ts)
	require.True(b.t, ok)
	var blocks []struct {
		BlockID  string           `json:"block_id"`
		Elements []map[string]any `json:"elements"`
	}
	require.NoError(b.t, json.Unmarshal(m.Blocks, &blocks))
	var action map[string]any
	for _, bl := range blocks {
		for _, el := range bl.Elements {
			if tx, ok := el["text"].(map[string]any); ok && tx["text"] == label {
				action = map[string]any{"action_id": el["action_id"], "block_id": bl.BlockID, "type": el["type"],
					"value": el["value"], "action_ts": "1.1"}
			}
		}
	}
	require.NotNil(b.t, action, "no button %q on the Slack copy", label)
	payload, _ := json.Marshal(map[string]any{"type": "block_actions", "trigger_id": b.slack.Trigger(),
		"user":      map[string]any{"id": userID, "username": userName, "name": userName},
		"container": map[string]any{"type": "message", "channel_id": "C1", "message_ts": ts},
		"channel":   map[string]any{"id": "C1"}, "actions": []any{action}})
	return url.Values{"payload": {string(payload)}}.Encode()
}

// sendSlack posts an interaction body to the bridge, signed as Slack does.
func (b *bridge) sendSlack(body string) {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.srv.URL+"/slack/interactions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	stamp, sig := slack.Sign(slackSecret, time.Now(), []byte(body))
	req.Header.Set("X-Slack-Request-Timestamp", stamp)
	req.Header.Set("X-Slack-Signature", sig)
	res, err := http.DefaultClient.Do(req)
	require.NoError(b.t, err)
	res.Body.Close()
	require.Equal(b.t, http.StatusOK, res.StatusCode)
}

// slackUpdated waits until the Slack copy was edited and returns it.
func (b *bridge) slackUpdated(ts string) fakeslack.Message {
	b.t.Helper()
	var m fakeslack.Message
	require.Eventually(b.t, func() bool {
		m, _ = b.slack.Message("C1", ts)
		return m.Edits > 0
	}, 5*time.Second, 5*time.Millisecond, "the Slack copy was never updated")
	return m
}

// discordFinished waits until the Discord copy shows outcome with every
// control disabled.
func (b *bridge) discordFinished(id, outcome string) {
	b.t.Helper()
	var m *fakediscord.Message
	ok := assert.Eventually(b.t, func() bool {
		m = b.discord.Message(id)
		if !strings.Contains(m.Content, outcome) {
			return false
		}
		for _, row := range m.Components {
			for _, c := range row.Components {
				if !c.Disabled {
					return false
				}
			}
		}
		return true
	}, 5*time.Second, 5*time.Millisecond)
	if !ok {
		b.t.Fatalf("the Discord copy does not show %q with its controls disabled: %q %+v", outcome, m.Content, m.Components)
	}
}

func TestAnsweredOnDiscordUpdatesTheSlackCopy(t *testing.T) {
	b := newBridge(t)
	q, ts, msg := b.ask()
	late := b.slackClickBody("U2", "erin", ts, "API key") // erin's Slack client still shows the buttons

	resp := b.discord.Click(fakediscord.User{ID: "4455", Name: "dana"}, msg, "OAuth 2.0")
	require.Contains(t, []int{6, 7}, resp.Type)
	got := b.final(q)
	assert.Equal(t, domain.StatusAnswered, got.Status)
	assert.Equal(t, "oauth", got.Response)
	assert.Equal(t, domain.Person{Platform: "discord", ID: "4455", Name: "dana"}, *got.RespondedBy)

	b.discordFinished(msg, "Answered by dana: OAuth 2.0")
	m := b.slackUpdated(ts)
	assert.Contains(t, m.Texts(), "Answered by *dana*: OAuth 2.0")
	assert.NotContains(t, string(m.Blocks), `"actions"`, "the Slack copy keeps no buttons")
	assert.Len(t, b.slack.Calls("chat.update"), 1)

	// A late click on Slack changes nothing and is told who answered.
	b.sendSlack(late)
	require.Eventually(t, func() bool { return len(b.slack.Ephemerals("U2")) == 1 }, 5*time.Second, 5*time.Millisecond)
	assert.Contains(t, b.slack.Ephemerals("U2")[0].Text, "This question was already answered by *dana*: OAuth 2.0.")
	assert.Equal(t, "oauth", b.final(q).Response)
}

func TestAnsweredOnSlackUpdatesTheDiscordCopy(t *testing.T) {
	b := newBridge(t)
	q, ts, msg := b.ask()
	oauth := b.discord.Button(b.discord.Message(msg), "OAuth 2.0").CustomID // as dana's client shows it

	b.slackClick("U1", "alice", ts, "API key")
	got := b.final(q)
	assert.Equal(t, "apikey", got.Response)
	assert.Equal(t, "slack", got.RespondedBy.Platform)
	assert.Equal(t, "U1", got.RespondedBy.ID)

	m := b.slackUpdated(ts)
	assert.Contains(t, m.Texts(), "Answered by <@U1>: API key")
	b.discordFinished(msg, "Answered by alice: API key")
	assert.Equal(t, 1, b.discord.Message(msg).Edits, "the Discord copy is edited once")

	// A late click on Discord is told who answered, privately.
	late := b.discord.ClickDisabledAnyway(fakediscord.User{ID: "4455", Name: "dana"}, msg, oauth)
	assert.Equal(t, 4, late.Type)
	assert.Contains(t, fakediscord.Deref(late.Data.Content), "This question was already answered by alice: API key.")
	assert.Equal(t, "apikey", b.final(q).Response)
}

// TestCancelNoteOnEveryCopy: the note given with a cancel is on the final
// line of the Slack and the Discord copy.
func TestCancelNoteOnEveryCopy(t *testing.T) {
	b := newBridge(t)
	q, ts, msg := b.ask()
	_, err := b.router.CancelWithNote(context.Background(), q.ProjectID, q.ID, domain.CancelAgent, "rolled back <b>", nil)
	require.NoError(t, err)
	assert.Equal(t, "rolled back <b>", b.final(q).CancelNote)
	b.discordFinished(msg, `Cancelled (withdrawn by the agent) — "rolled back <b>"`)
	m := b.slackUpdated(ts)
	assert.Contains(t, m.Texts(), `Withdrawn by the agent — "rolled back &lt;b&gt;".`)
}
