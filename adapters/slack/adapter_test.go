package slack

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSingleSelectClickAnswersAndUpdatesEveryCopy(t *testing.T) {
	e := newEnv(t)
	q := e.ask(authQuestion())
	c1, c2 := e.copyOn(q, "C1"), e.copyOn(q, "C2")
	require.NotEqual(t, "", c2.MessageTS)

	m, _ := e.fake.Message("C1", c1.MessageTS)
	for _, want := range []string{"Auth", "Deploy bot", "run-1", "expires in 5 min", "Standard", "Simple", "OAuth 2.0", "Other…", "Dismiss"} {
		assert.Contains(t, string(m.Blocks), want)
	}

	e.click(alice, "C2", c2.MessageTS, "API key", nil)
	got := e.final(q)
	assert.Equal(t, domain.StatusAnswered, got.Status)
	assert.Equal(t, map[string]string{"Which auth method?": "API key"}, got.Answers)
	assert.Equal(t, map[string][]string{"Which auth method?": {"API key"}}, got.Selections)
	assert.Equal(t, "apikey", got.Response)
	assert.Equal(t, "U1", got.RespondedBy.ID)

	for _, msg := range e.edited(q) {
		assert.NotContains(t, string(msg.Blocks), `"actions"`, "controls removed on %s", msg.Channel)
		assert.Contains(t, msg.Texts(), "Answered by <@U1>: API key")
	}
	assert.Len(t, e.fake.Calls("chat.update"), 2)
}

func TestMultiSelectTicksAndSubmit(t *testing.T) {
	e := newEnv(t)
	req := authQuestion()
	req.Questions = []domain.Item{{Question: "Which features?", Header: "Features", MultiSelect: true, Options: []domain.Option{
		{Label: "Login"}, {Label: "Dashboard"}, {Label: "Billing"}}}}
	req.Targets = req.Targets[:1]
	q := e.ask(req)
	c := e.copyOn(q, "C1")
	bid, el := e.element("C1", c.MessageTS, actPick)
	assert.Equal(t, "checkboxes", el["type"])

	state := map[string]any{bid: map[string]any{el["action_id"].(string): map[string]any{"type": "checkboxes",
		"selected_options": []any{map[string]any{"value": "0"}, map[string]any{"value": "2"}}}}}
	e.click(alice, "C1", c.MessageTS, "Submit", state)
	got := e.final(q)
	assert.Equal(t, "Login, Billing", got.Answers["Which features?"])
	assert.Equal(t, []string{"Login", "Billing"}, got.Selections["Which features?"])
	assert.Equal(t, "Login, Billing", got.Response)
	e.edited(q)
}

func TestSeveralItemsAllOrNothing(t *testing.T) {
	e := newEnv(t)
	req := authQuestion()
	req.Targets = req.Targets[:1]
	req.Questions = []domain.Item{
		{Question: "Which auth method?", Header: "Auth", Options: []domain.Option{{Label: "OAuth 2.0", Value: "oauth"}, {Label: "API key"}}},
		{Question: "Which features?", Header: "Features", MultiSelect: true, Options: []domain.Option{{Label: "Login"}, {Label: "Dashboard"}}},
		{Question: "Anything else?", Header: "Notes"},
	}
	q := e.ask(req)
	ts := e.copyOn(q, "C1").MessageTS
	b0, r0 := e.element("C1", ts, actPick+":0")
	b1, r1 := e.element("C1", ts, actPick+":1")
	assert.Equal(t, "radio_buttons", r0["type"])
	assert.Equal(t, "checkboxes", r1["type"])

	radio := map[string]any{r0["action_id"].(string): map[string]any{"type": "radio_buttons", "selected_option": map[string]any{"value": "1"}}}
	boxes := map[string]any{r1["action_id"].(string): map[string]any{"type": "checkboxes", "selected_options": []any{map[string]any{"value": "1"}}}}

	// Submit with two parts unanswered: a private hint naming them, nothing recorded.
	e.click(bob, "C1", ts, "Submit", map[string]any{b0: radio})
	e.wait("hint", func() bool { return len(e.ephemeralsTo(bob)) == 1 })
	hint := e.ephemeralsTo(bob)[0]
	assert.Contains(t, hint, "Features")
	assert.Contains(t, hint, "Notes")
	assert.NotContains(t, hint, "Auth")
	assert.Equal(t, domain.StatusPending, e.get(q).Status)

	// The open-ended part: modal, empty text refused inline, then saved.
	e.click(bob, "C1", ts, "Write answer…", nil)
	e.wait("modal", func() bool { return len(e.fake.Views()) == 1 })
	rec := e.submitView(bob, "   ")
	assert.Contains(t, rec.Body.String(), `"response_action":"errors"`)
	assert.Contains(t, rec.Body.String(), modalBlock)
	rec = e.submitView(bob, "Ship it on Friday")
	assert.Empty(t, strings.TrimSpace(rec.Body.String()))
	e.wait("saved", func() bool { return len(e.ephemeralsTo(bob)) == 2 })
	assert.Equal(t, domain.StatusPending, e.get(q).Status)

	e.click(bob, "C1", ts, "Submit", map[string]any{b0: radio, b1: boxes})
	got := e.final(q)
	assert.Equal(t, map[string]string{"Which auth method?": "API key", "Which features?": "Dashboard",
		"Anything else?": "Ship it on Friday"}, got.Answers)
	assert.Equal(t, "API key; Dashboard; Ship it on Friday", got.Response)
	e.edited(q)
}

func TestOpenEndedModal(t *testing.T) {
	e := newEnv(t)
	req := authQuestion()
	req.Targets = req.Targets[:1]
	req.Questions = []domain.Item{{Question: "What should the release be called?", Header: "Name"}}
	q := e.ask(req)
	ts := e.copyOn(q, "C1").MessageTS
	e.click(alice, "C1", ts, "Answer…", nil)
	e.wait("modal", func() bool { return len(e.fake.Views()) == 1 })
	assert.Contains(t, string(e.fake.Views()[0].View), "What should the release be called?")

	rec := e.submitView(alice, "")
	var resp map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &resp))
	assert.Equal(t, "errors", resp["response_action"])
	assert.Equal(t, domain.StatusPending, e.get(q).Status)

	e.submitView(alice, "Aurora")
	got := e.final(q)
	assert.Equal(t, "Aurora", got.Response)
	assert.Equal(t, "Aurora", got.Answers["What should the release be called?"])
}

func TestOtherOpensModalAndAnswersWithText(t *testing.T) {
	e := newEnv(t)
	req := authQuestion()
	req.Targets = req.Targets[:1]
	q := e.ask(req)
	ts := e.copyOn(q, "C1").MessageTS
	e.click(alice, "C1", ts, "Other…", nil)
	e.wait("modal", func() bool { return len(e.fake.Views()) == 1 })
	e.submitView(alice, "Mutual TLS")
	got := e.final(q)
	assert.Equal(t, "Mutual TLS", got.Answers["Which auth method?"])
	assert.Equal(t, "Mutual TLS", got.Response)
}

func TestExpiredTriggerIsExplained(t *testing.T) {
	e := newEnv(t)
	req := authQuestion()
	req.Targets = req.Targets[:1]
	q := e.ask(req)
	ts := e.copyOn(q, "C1").MessageTS
	p := e.clickPayload(alice, "C1", ts, "Other…", nil)
	p["trigger_id"] = "trig.unknown"
	e.interact(p)
	e.wait("explanation", func() bool { return len(e.ephemeralsTo(alice)) == 1 })
	assert.Contains(t, e.ephemeralsTo(alice)[0], "invalid_trigger_id")
}

func TestDismissCancelsWithConfirm(t *testing.T) {
	e := newEnv(t)
	q := e.ask(authQuestion())
	ts := e.copyOn(q, "C1").MessageTS
	_, el := e.element("C1", ts, "Dismiss")
	require.NotNil(t, el["confirm"], "Dismiss asks for confirmation")
	e.click(carol, "C1", ts, "Dismiss", nil)
	got := e.final(q)
	assert.Equal(t, domain.StatusCancelled, got.Status)
	assert.Equal(t, domain.CancelUser, got.CancelReason)
	for _, m := range e.edited(q) {
		assert.Contains(t, m.Texts(), "Dismissed by <@U3>")
	}
}

func TestRespondersUsersAndGroups(t *testing.T) {
	e := newEnv(t)
	e.fake.SetGroup("S1", "U3", "U9")
	req := authQuestion()
	req.Targets = req.Targets[:1]
	req.Responders = &domain.Responders{Users: []string{"slack:U1"}, Groups: map[string][]string{"slack_usergroups": {"S1"}}}
	q := e.ask(req)
	ts := e.copyOn(q, "C1").MessageTS

	e.click(bob, "C1", ts, "API key", nil)
	e.wait("refusal", func() bool { return len(e.ephemeralsTo(bob)) == 1 })
	msg := e.ephemeralsTo(bob)[0]
	assert.Contains(t, msg, "<@U1>")
	assert.Contains(t, msg, "<!subteam^S1>")
	assert.Equal(t, domain.StatusPending, e.get(q).Status)

	// Alice's click is built from the message as she sees it before carol
	// answers: it arrives late, whenever the copy gets updated.
	late := e.clickPayload(alice, "C1", ts, "API key", nil)
	e.click(carol, "C1", ts, "OAuth 2.0", nil)
	got := e.final(q)
	assert.Equal(t, "U3", got.RespondedBy.ID)
	assert.Len(t, e.fake.Calls("usergroups.users.list"), 1, "members are cached")

	// A late click from an allowed person: already answered by carol.
	e.interact(late)
	e.wait("late notice", func() bool { return len(e.ephemeralsTo(alice)) == 1 })
	assert.Contains(t, e.ephemeralsTo(alice)[0], "This question was already answered by <@U3>: OAuth 2.0. This changed nothing.")
	assert.Equal(t, "OAuth 2.0", e.get(q).Answers["Which auth method?"])
}

func TestSignaturesRefused(t *testing.T) {
	e := newEnv(t)
	req := authQuestion()
	req.Targets = req.Targets[:1]
	q := e.ask(req)
	ts := e.copyOn(q, "C1").MessageTS
	body := formBody(e.clickPayload(alice, "C1", ts, "API key", nil))
	before := len(e.fake.Calls(""))
	cases := map[string]func(*http.Request){
		"unsigned": func(*http.Request) {},
		"forged": func(r *http.Request) {
			ts, sig := Sign("not-the-secret", time.Now(), body)
			r.Header.Set("X-Slack-Request-Timestamp", ts)
			r.Header.Set("X-Slack-Signature", sig)
		},
		"stale": func(r *http.Request) {
			ts, sig := Sign(testSecret, time.Now().Add(-6*time.Minute), body)
			r.Header.Set("X-Slack-Request-Timestamp", ts)
			r.Header.Set("X-Slack-Signature", sig)
		},
		"tampered": func(r *http.Request) {
			ts, sig := Sign(testSecret, time.Now(), append([]byte("x"), body...))
			r.Header.Set("X-Slack-Request-Timestamp", ts)
			r.Header.Set("X-Slack-Signature", sig)
		},
	}
	for name, sign := range cases {
		t.Run(name, func(t *testing.T) {
			for _, path := range []string{"/slack/interactions", "/slack/events"} {
				rec := e.post(path, body, sign)
				assert.Equal(t, http.StatusUnauthorized, rec.Code, path)
				assert.NotContains(t, rec.Body.String(), testSecret)
			}
		})
	}
	require.NoError(t, e.a.Close(context.Background()))
	assert.Equal(t, domain.StatusPending, e.get(q).Status)
	assert.Len(t, e.fake.Calls(""), before, "no Slack call was made")
}

func TestFinishOnEveryOutcome(t *testing.T) {
	cases := []struct {
		name string
		end  func(e *env, q *domain.Question)
		want string
	}{
		{"expired", func(e *env, q *domain.Question) {
			e.clock.Add(6 * time.Minute)
			n, err := e.router.ExpireDue(context.Background())
			require.NoError(t, err)
			require.Equal(t, 1, n)
		}, "Expired without an answer"},
		{"cancelled by the agent", func(e *env, q *domain.Question) {
			_, err := e.router.Cancel(context.Background(), q.ProjectID, q.ID, domain.CancelAgent, nil)
			require.NoError(t, err)
		}, "Withdrawn by the agent"},
		{"superseded", func(e *env, q *domain.Question) {
			next := authQuestion()
			next.Questions[0].Question = "Which auth method, really?"
			e.ask(next)
		}, "Replaced by a newer question"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			q := e.ask(authQuestion())
			c.end(e, q)
			msgs := e.edited(q)
			require.Len(t, msgs, 2)
			for _, m := range msgs {
				assert.Contains(t, m.Texts(), c.want)
				assert.NotContains(t, string(m.Blocks), `"actions"`)
			}
		})
	}
}

func TestNewNamesMissingSettingsWithoutSecrets(t *testing.T) {
	r := lifecycle.NewRouter(lifecycle.RouterConfig{Store: newTestStore(t)})
	_, err := New(Config{SigningSecret: "s3cr3t-value"}, r, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "SLACK_BOT_TOKEN")
	assert.NotContains(t, err.Error(), "s3cr3t-value")

	_, err = New(Config{BotToken: "xoxb-very-secret"}, r, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "SLACK_SIGNING_SECRET")
	assert.NotContains(t, err.Error(), "xoxb-very-secret")

	_, err = New(Config{BotToken: "xoxb-very-secret", AppToken: "wrong-app-secret"}, r, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "SLACK_APP_TOKEN")
	assert.NotContains(t, err.Error(), "wrong-app-secret")

	a, err := New(Config{BotToken: "xoxb-x", AppToken: "xapp-y"}, r, nil)
	require.NoError(t, err, "Socket Mode needs no signing secret")
	mux := http.NewServeMux()
	a.Register(mux)
	_, pattern := mux.Handler(&http.Request{Method: "POST", URL: mustURL("/slack/interactions")})
	assert.Empty(t, pattern, "no HTTP endpoints in Socket Mode")
}
