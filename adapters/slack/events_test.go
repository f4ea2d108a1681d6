package slack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func (e *env) reply(id string, u user, channel, threadTS, text string) (ts string, rec int) {
	e.t.Helper()
	ts = e.fake.Seed(channel, threadTS, u.id, text)
	body, _ := json.Marshal(map[string]any{"type": "event_callback", "event_id": id, "event": map[string]any{
		"type": "message", "user": u.id, "text": text, "ts": ts, "thread_ts": threadTS, "channel": channel}})
	return ts, e.post("/slack/events", body, nil).Code
}

func TestURLVerification(t *testing.T) {
	e := newEnv(t)
	rec := e.post("/slack/events", []byte(`{"type":"url_verification","challenge":"abc123","token":"x"}`), nil)
	require.Equal(t, http.StatusOK, rec.Code)
	assert.JSONEq(t, `{"challenge":"abc123"}`, rec.Body.String())
}

func TestThreadPerRunAndThreadReplies(t *testing.T) {
	e := newEnv(t)
	first := e.ask(domain.AskRequest{RunID: "run-7", AgentID: "bot", Route: "oncall",
		Questions: []domain.Item{{Question: "Name the release?"}}})
	root := e.copyOn(first, "C1").MessageTS

	// An open-ended answer in the thread.
	replyTS, code := e.reply("Ev1", alice, "C1", root, "Aurora")
	require.Equal(t, http.StatusOK, code)
	got := e.final(first)
	assert.Equal(t, "Aurora", got.Response)
	e.wait("reaction", func() bool { return len(e.fake.Reactions("C1", replyTS)) == 1 })

	// The run's next question joins the same thread.
	second := e.ask(domain.AskRequest{RunID: "run-7", AgentID: "bot", Route: "oncall",
		Questions: []domain.Item{{Question: "Which regions?", MultiSelect: true, Options: []domain.Option{
			{Label: "eu-west"}, {Label: "us-east"}, {Label: "ap-south"}}}}})
	c2 := e.copyOn(second, "C1")
	m, _ := e.fake.Message("C1", c2.MessageTS)
	assert.Equal(t, root, m.ThreadTS, "posted in the run's thread")

	// A reply it cannot read is explained; nothing is recorded.
	_, _ = e.reply("Ev2", alice, "C1", root, "hmm, not sure")
	e.wait("explanation", func() bool { return len(e.ephemeralsTo(alice)) == 1 })
	assert.Contains(t, e.ephemeralsTo(alice)[0], "option number (1–3)")
	assert.Equal(t, domain.StatusPending, e.get(second).Status)

	// Option numbers answer; a retried delivery of the same event counts once.
	body, _ := json.Marshal(map[string]any{"type": "event_callback", "event_id": "Ev3", "event": map[string]any{
		"type": "message", "user": alice.id, "text": "1, 3", "ts": e.fake.Seed("C1", root, alice.id, "1, 3"),
		"thread_ts": root, "channel": "C1"}})
	for range 3 {
		assert.Equal(t, http.StatusOK, e.post("/slack/events", body, nil).Code)
	}
	got = e.final(second)
	assert.Equal(t, []string{"eu-west", "ap-south"}, got.Selections["Which regions?"])
	require.NoError(t, e.a.Close(t.Context()))
	assert.Len(t, e.fake.Calls("reactions.add"), 2, "one confirmation per answer")
}

func TestThreadReplyFromOutsiderChangesNothing(t *testing.T) {
	e := newEnv(t)
	req := authQuestion()
	req.Targets = req.Targets[:1]
	req.Responders = &domain.Responders{Users: []string{"slack:U1"}}
	q := e.ask(req)
	root := e.copyOn(q, "C1").MessageTS
	e.reply("Ev1", bob, "C1", root, "looks fine to me") // chatter: ignored
	e.reply("Ev2", bob, "C1", root, "2")                // an answer: refused with who may answer
	e.wait("refusal", func() bool { return len(e.ephemeralsTo(bob)) == 1 })
	assert.Contains(t, e.ephemeralsTo(bob)[0], "<@U1>")
	e.reply("Ev3", alice, "C1", root, "api KEY")
	assert.Equal(t, "apikey", e.final(q).Response)
}

func TestBotMessagesAndTopLevelMessagesIgnored(t *testing.T) {
	e := newEnv(t)
	req := authQuestion()
	req.Targets = req.Targets[:1]
	q := e.ask(req)
	root := e.copyOn(q, "C1").MessageTS
	for i, ev := range []map[string]any{
		{"type": "message", "user": "U1", "bot_id": "B1", "text": "1", "ts": "9.1", "thread_ts": root, "channel": "C1"},
		{"type": "message", "user": "U1", "text": "1", "ts": "9.2", "channel": "C1"},
		{"type": "message", "subtype": "message_changed", "user": "U1", "text": "1", "ts": "9.3", "thread_ts": root, "channel": "C1"},
	} {
		body, _ := json.Marshal(map[string]any{"type": "event_callback", "event_id": fmt.Sprint("E", i), "event": ev})
		assert.Equal(t, http.StatusOK, e.post("/slack/events", body, nil).Code)
	}
	require.NoError(t, e.a.Close(t.Context()))
	assert.Equal(t, domain.StatusPending, e.get(q).Status)
	assert.Empty(t, e.fake.Calls("conversations.replies"))
}

func TestParseReply(t *testing.T) {
	single := &domain.Question{Questions: []domain.Item{{Question: "Q", Options: []domain.Option{
		{Label: "OAuth 2.0", Value: "oauth"}, {Label: "API key"}, {Label: "None"}}}}}
	multi := &domain.Question{Questions: []domain.Item{{Question: "Q", MultiSelect: true, Options: []domain.Option{
		{Label: "Login"}, {Label: "Dashboard"}, {Label: "Billing"}}}}}
	open := &domain.Question{Questions: []domain.Item{{Question: "Q"}}}
	cases := []struct {
		q       *domain.Question
		text    string
		want    []string
		problem string
	}{
		{single, "2", []string{"API key"}, ""},
		{single, " <@UBOT> 1 ", []string{"OAuth 2.0"}, ""},
		{single, "oauth", []string{"OAuth 2.0"}, ""},
		{single, "api KEY", []string{"API key"}, ""},
		{single, "Other: mutual TLS", []string{"mutual TLS"}, ""},
		{single, "1,2", nil, "Pick one option only"},
		{single, "4", nil, "There is no option 4"},
		{single, "0", nil, "There is no option 0"},
		{single, "maybe", nil, "option number (1–3)"},
		{single, "other:", nil, "option number"},
		{multi, "1,3", []string{"Login", "Billing"}, ""},
		{multi, "1 3", []string{"Login", "Billing"}, ""},
		{multi, "3, 3", []string{"Billing"}, ""},
		{multi, "login, billing", []string{"Login", "Billing"}, ""},
		{multi, "login, cake", nil, `several ("1,3")`},
		{open, "Ship &lt;it&gt; &amp; go", []string{"Ship <it> & go"}, ""},
		{open, "   ", nil, "empty"},
		{&domain.Question{Questions: []domain.Item{{Question: "A"}, {Question: "B"}}}, "x", nil, "several parts"},
	}
	for _, c := range cases {
		req, problem := parseReply(c.q, c.text)
		if c.problem != "" {
			assert.Contains(t, problem, c.problem, c.text)
			continue
		}
		assert.Empty(t, problem, c.text)
		assert.Equal(t, c.want, []string(req.Answers["Q"]), c.text)
	}
}

func FuzzParseReply(f *testing.F) {
	q := &domain.Question{Questions: []domain.Item{{Question: "Q", MultiSelect: true, Options: []domain.Option{
		{Label: "Login"}, {Label: "Dashboard"}}}}}
	for _, s := range []string{"1", "1,2", "other: x", "<@U1> 2", "999999999999999999999", "&amp;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		req, problem := parseReply(q, s)
		if problem == "" && len(req.Answers["Q"]) == 0 {
			t.Fatalf("%q: no answer and no problem", s)
		}
		if problem != "" && strings.TrimSpace(problem) == "" {
			t.Fatal("blank problem")
		}
	})
}

func TestRunNotPausedRetriedThenExplained(t *testing.T) {
	e := newEnv(t, func(_ *Config, rc *lifecycle.RouterConfig) { rc.PauseWait = 400 * time.Millisecond })
	req := authQuestion()
	req.Targets = req.Targets[:1]
	req.Resume = &domain.ResumeRequest{URL: "https://runtime.example/resume"}
	q := e.ask(req)
	ts := e.copyOn(q, "C1").MessageTS

	// The run never pauses: after the retry window the person is told.
	e.click(alice, "C1", ts, "API key", nil)
	e.wait("retry notice", func() bool { return len(e.ephemeralsTo(alice)) == 1 })
	assert.Contains(t, e.ephemeralsTo(alice)[0], "try again")
	assert.Equal(t, domain.StatusPending, e.get(q).Status)

	// The run pauses while the click is being retried: the answer goes through.
	e.click(alice, "C1", ts, "API key", nil)
	time.Sleep(100 * time.Millisecond)
	_, err := e.store.PauseRun(t.Context(), q.ProjectID, q.RunID, q.AgentID, time.Now())
	require.NoError(t, err)
	got := e.final(q)
	assert.Equal(t, "apikey", got.Response)
	assert.NotEmpty(t, got.ResumedRunID)
	assert.Len(t, e.ephemeralsTo(alice), 1)
}

func TestClicksWaitingForARunDoNotHoldUpOtherAnswers(t *testing.T) {
	e := newEnv(t) // runs are waited for 2 s
	// More webhook-mode clicks than there are workers, on runs that never pause.
	var waiting []*domain.Question
	for i := range maxWorkers + 4 {
		req := authQuestion()
		req.RunID = fmt.Sprintf("run-webhook-%d", i)
		req.Targets = req.Targets[:1]
		req.Resume = &domain.ResumeRequest{URL: "https://runtime.example/resume"}
		q := e.ask(req)
		e.click(alice, "C1", e.copyOn(q, "C1").MessageTS, "API key", nil)
		waiting = append(waiting, q)
	}
	// Meanwhile a click on an ordinary question is recorded at once.
	req := authQuestion()
	req.RunID = "run-wait-mode"
	req.Targets = req.Targets[:1]
	q := e.ask(req)
	start := time.Now()
	e.click(bob, "C1", e.copyOn(q, "C1").MessageTS, "OAuth 2.0", nil)
	assert.Equal(t, "oauth", e.final(q).Response)
	assert.Less(t, time.Since(start), time.Second, "the answer waited behind clicks retrying for their runs")
	for _, w := range waiting {
		assert.Equal(t, domain.StatusPending, e.get(w).Status)
	}
}

func TestTwoReplicasOnRedis(t *testing.T) {
	stores := redisReplicas(t, 2)
	fake := fakeslack.New("C1", "C2")
	t.Cleanup(fake.Close)
	on := func(i int) envOpt { return func(_ *Config, rc *lifecycle.RouterConfig) { rc.Store = stores[i] } }
	r1, r2 := newReplica(t, fake, on(0)), newReplica(t, fake, on(1))

	// Posted by replica 1, clicked through replica 2, the waiter on replica 1 wakes.
	q := r1.ask(authQuestion())
	ts := r1.copyOn(q, "C2").MessageTS
	r2.click(alice, "C2", ts, "API key", nil)
	assert.Equal(t, "apikey", r1.final(q).Response)
	assert.Len(t, r1.edited(q), 2, "both copies updated")

	// Slack delivers a thread reply to one replica and retries it on the
	// other: it counts once.
	req := authQuestion()
	req.RunID = "run-2"
	req.Targets = req.Targets[:1]
	q2 := r1.ask(req)
	root := r1.copyOn(q2, "C1").MessageTS
	body, _ := json.Marshal(map[string]any{"type": "event_callback", "event_id": "EvR", "event": map[string]any{
		"type": "message", "user": alice.id, "text": "1", "ts": fake.Seed("C1", root, alice.id, "1"),
		"thread_ts": root, "channel": "C1"}})
	require.Equal(t, http.StatusOK, r1.post("/slack/events", body, nil).Code)
	require.Equal(t, http.StatusOK, r2.post("/slack/events", body, nil).Code)
	assert.Equal(t, "oauth", r2.final(q2).Response)
	require.NoError(t, r1.a.Close(t.Context()))
	require.NoError(t, r2.a.Close(t.Context()))
	assert.Len(t, fake.Calls("reactions.add"), 1, "one confirmation for one answer")
	assert.Empty(t, fake.Ephemerals(alice.id), "no \"already answered\" notice from the retry")
}
