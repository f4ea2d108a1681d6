package slack

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRateLimitHonoursRetryAfterPerMethodAndChannel(t *testing.T) {
	e := newEnv(t)
	e.fake.RateLimit("chat.postMessage", 1)
	req := authQuestion()
	req.Targets = req.Targets[:1]
	start := time.Now()
	q := e.ask(req)
	assert.NotEmpty(t, e.copyOn(q, "C1").MessageTS)
	calls := e.fake.Calls("chat.postMessage")
	require.Len(t, calls, 2)
	assert.Equal(t, 429, calls[0].Status)
	assert.GreaterOrEqual(t, calls[1].At.Sub(calls[0].At), time.Second, "waited for Retry-After")
	assert.GreaterOrEqual(t, time.Since(start), time.Second)

	// The limit held back that method on that channel only.
	e.fake.RateLimit("chat.postMessage", 30)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	other := time.Now()
	_, err := e.a.Post(ctx, q, domain.Target{Platform: "slack", Channel: "C1"})
	require.Error(t, err, "a 30 s Retry-After is beyond what a post waits")
	assert.Equal(t, "ratelimited", ErrorCode(err))
	assert.Less(t, time.Since(other), 500*time.Millisecond, "failed at once instead of waiting past the deadline")
	other = time.Now()
	_, err = e.a.Post(ctx, q, domain.Target{Platform: "slack", Channel: "C2"})
	require.NoError(t, err)
	assert.Less(t, time.Since(other), 500*time.Millisecond, "C2 was not held back")
}

func TestServerErrorsAndNetworkErrorsRetried(t *testing.T) {
	e := newEnv(t)
	e.fake.Fail("chat.postMessage", 500, 503)
	req := authQuestion()
	req.Targets = req.Targets[:1]
	q := e.ask(req)
	assert.NotEmpty(t, e.copyOn(q, "C1").MessageTS)
	assert.Len(t, e.fake.Calls("chat.postMessage"), 3)

	// A Slack that is gone: the post fails after its retries (that no
	// secret is in the error or the log is checked by channeltest,
	// PlatformUnreachable).
	a, err := New(Config{BotToken: "xoxb-secret-bot-token", SigningSecret: testSecret, APIURL: "http://127.0.0.1:1/api/"}, e.router, nil)
	require.NoError(t, err)
	a.retry.base = 10 * time.Millisecond
	_, err = a.Post(context.Background(), q, domain.Target{Platform: "slack", Channel: "C1"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "gave up after 5 attempts")
}

func TestQuestionThatCannotBePostedIsReported(t *testing.T) {
	var logs bytes.Buffer
	e := newEnv(t, func(_ *Config, rc *lifecycle.RouterConfig) { rc.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	req := authQuestion()
	req.Targets = []domain.Target{{Platform: "slack", Channel: "CGONE"}}
	res, err := e.router.Ask(context.Background(), "ops", &req, "")
	require.NoError(t, err)
	assert.Contains(t, res.Message, "channel_not_found", "the waiter is told")
	assert.Contains(t, res.Question.Targets[0].Error, "channel_not_found")
	assert.Len(t, e.fake.Calls("chat.postMessage"), 1, "ok:false is not retried")
	assert.Contains(t, logs.String(), "could not be posted to any target")
	evs, err := e.store.Events(context.Background(), "ops", "", 100)
	require.NoError(t, err)
	var types []string
	for _, ev := range evs {
		types = append(types, ev.Type)
	}
	assert.Contains(t, types, domain.EventPostFailed)
}

func TestLongTextsStayWithinSlackLimits(t *testing.T) {
	e := newEnv(t)
	long := strings.Repeat("Ünïcødé & <b> 🚀 ", 200)
	req := domain.AskRequest{RunID: "run-" + strings.Repeat("r", 150), AgentID: "bot", AgentName: strings.Repeat("Agent ", 33),
		Context:   strings.Repeat("**Bold** [link](https://example.com/x?a=1&b=2) <!channel> @here <@U999> ", 100),
		Targets:   []domain.Target{{Platform: "slack", Channel: "C1"}},
		Questions: []domain.Item{},
	}
	for i := range 4 {
		it := domain.Item{Question: long[:1990] + string(rune('A'+i)), Header: "Header 12345", MultiSelect: i == 1}
		if i < 3 {
			for j := range 4 {
				it.Options = append(it.Options, domain.Option{Label: strings.Repeat("L", 190) + string(rune('a'+j)),
					Description: strings.Repeat("d&", 499), Value: strings.Repeat("v", 1000), Recommended: j == 0})
			}
		}
		req.Questions = append(req.Questions, it)
	}
	q := e.ask(req)
	c := e.copyOn(q, "C1")
	require.Empty(t, c.Error)
	m, _ := e.fake.Message("C1", c.MessageTS)
	texts := m.Texts()
	assert.NotContains(t, texts, "<!channel>")
	assert.NotContains(t, texts, "<@U999>")
	assert.NotContains(t, texts, "@here")
	assert.Contains(t, texts, "…")

	// The modal of the long open-ended item, and the final state, fit too.
	e.click(alice, "C1", c.MessageTS, "Write answer…", nil)
	e.wait("modal", func() bool { return len(e.fake.Views()) == 1 })
	_, err := e.router.Cancel(context.Background(), q.ProjectID, q.ID, domain.CancelAgent, nil)
	require.NoError(t, err)
	e.edited(q)
	for _, call := range append(e.fake.Calls("chat.update"), e.fake.Calls("views.open")...) {
		assert.Empty(t, call.Error, call.Method)
	}
}

func TestEscapeNeverMentions(t *testing.T) {
	for _, s := range []string{"<!channel>", "<!here|here>", "<@U123>", "<!subteam^S1>", "@channel", "@Everyone!", "<#C1>"} {
		out := escape(s)
		assert.NotContains(t, out, "<", s)
		assert.NotRegexp(t, `(?i)@(channel|here|everyone)\b`, out, s)
		clipped := escClip(strings.Repeat(s, 100), 50)
		assert.LessOrEqual(t, textLen(clipped), 50)
		assert.NotContains(t, clipped, "<")
		assert.NotRegexp(t, `&[a-z]*…$`, clipped, "no entity cut in half")
	}
	assert.Equal(t, "*Title*\n*Bold* and a link (<https://example.com/x?a=1&amp;b=2>) &lt;!channel&gt;",
		markdown("# Title\n**Bold** and [a link](https://example.com/x?a=1&b=2) <!channel>", 3000))
	assert.Equal(t, "abc", clip("abc", 3))
	assert.Equal(t, "ab…", clip("abcd", 3))
	assert.Equal(t, 2, textLen("🚀"), "UTF-16 units")
}
