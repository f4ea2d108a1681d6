package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/discord"
	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"

	"github.com/askbridge/askbridge/store/storetest"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const slackSecret = "ops-test-signing-secret"

// opsBridge is one bridge with Slack and Discord against their fakes and a
// resume webhook receiver, behind a test server.
type opsBridge struct {
	t        *testing.T
	app      *app.App
	url      string // where the bridge serves (App.Run, with its sweeper and deliverer)
	slack    *fakeslack.Server
	received atomic.Int64
	recv     *httptest.Server
	// webhook, when set, sees every resume webhook request.
	webhook func(r *http.Request, body []byte)
}

func newOpsBridge(t *testing.T, edit func(s *app.Settings)) *opsBridge {
	t.Helper()
	b := &opsBridge{t: t, slack: fakeslack.New("C1")}
	t.Cleanup(b.slack.Close)
	fd := fakediscord.New(t)
	b.recv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if b.webhook != nil {
			b.webhook(r, body)
		}
		b.received.Add(1)
	}))
	t.Cleanup(b.recv.Close)
	s := app.Settings{Addr: "127.0.0.1:0", WebhookSecret: "ops-test-webhook-secret",
		Slack:   slack.Config{BotToken: b.slack.BotToken, SigningSecret: slackSecret, APIURL: b.slack.APIURL()},
		Discord: discord.Config{BotToken: fd.BotToken, ApplicationID: fd.AppID, PublicKey: fd.PublicKey(), APIURL: fd.APIURL()}}
	if edit != nil {
		edit(&s)
	}
	a, err := app.New(context.Background(), s)
	require.NoError(t, err)
	b.app = a
	addr, err := a.Listen()
	require.NoError(t, err)
	b.url = "http://" + addr.String()
	fd.Target = b.url + "/discord/interactions"
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- a.Run(ctx) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stop()
		_ = a.Close(ctx)
		<-ran
	})
	return b
}

// do sends a JSON request to the bridge and decodes the answer into out.
func (b *opsBridge) do(method, path string, body any, header http.Header, out any) int {
	b.t.Helper()
	var rd io.Reader
	if body != nil {
		buf, _ := json.Marshal(body)
		rd = bytes.NewReader(buf)
	}
	req, _ := http.NewRequest(method, b.url+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(b.t, err)
	defer res.Body.Close()
	if out != nil {
		_ = json.NewDecoder(res.Body).Decode(out)
	}
	return res.StatusCode
}

// askWebhook asks on Slack and Discord in webhook mode and pauses the run.
// extra adds fields to the ask.
func (b *opsBridge) askWebhook(header http.Header, extra ...map[string]any) *domain.Question {
	b.t.Helper()
	var q domain.Question
	body := map[string]any{"run_id": "run-1", "agent_id": "deploy-bot",
		"questions": []map[string]any{{"question": "Ship the secret-plan release?", "options": []map[string]any{{"label": "Ship it"}, {"label": "Hold"}}}},
		"targets":   []map[string]any{{"platform": "slack", "channel": "C1"}, {"platform": "discord", "channel": "1000"}},
		"resume":    map[string]any{"url": b.recv.URL + "/resume"}}
	for _, e := range extra {
		for k, v := range e {
			body[k] = v
		}
	}
	code := b.do("POST", "/api/projects/ops/agent-questions", body, header, &q)
	require.Equal(b.t, http.StatusCreated, code)
	require.Equal(b.t, http.StatusOK, b.do("POST", "/api/projects/ops/agent-runs/run-1/pause", nil, nil, nil))
	return &q
}

// slackTS is the ts of the question's Slack copy.
func slackTS(t *testing.T, q *domain.Question) string {
	for _, tg := range q.Targets {
		if tg.Platform == "slack" {
			require.Empty(t, tg.Error)
			return tg.MessageTS
		}
	}
	t.Fatal("no Slack copy")
	return ""
}

// click clicks the button labelled label on the Slack copy, signed as
// Slack signs it (secret: slackSecret, or a forged one); it returns the
// status the bridge answered.
func (b *opsBridge) click(userID, ts, label, secret string, header http.Header) int {
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
		"user":      map[string]any{"id": userID, "username": "alice", "name": "alice"},
		"container": map[string]any{"type": "message", "channel_id": "C1", "message_ts": ts},
		"channel":   map[string]any{"id": "C1"}, "actions": []any{action}})
	body := url.Values{"payload": {string(payload)}}.Encode()
	req, _ := http.NewRequest(http.MethodPost, b.url+"/slack/interactions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	stamp, sig := slack.Sign(secret, time.Now(), []byte(body))
	req.Header.Set("X-Slack-Request-Timestamp", stamp)
	req.Header.Set("X-Slack-Signature", sig)
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(b.t, err)
	res.Body.Close()
	return res.StatusCode
}

// scrape reads /metrics.
func (b *opsBridge) scrape() []byte {
	b.t.Helper()
	res, err := http.Get(b.url + "/metrics")
	require.NoError(b.t, err)
	defer res.Body.Close()
	require.Equal(b.t, http.StatusOK, res.StatusCode)
	body, err := io.ReadAll(res.Body)
	require.NoError(b.t, err)
	return body
}

// series finds the value of the sample of family name whose labels include
// want (a histogram's count); false if there is none.
func series(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// TestOperationalMetricsAfterARealAsk drives one ask through Slack (rate
// limited once), a forged click, a real click and the resume webhook, then
// reads /metrics as Prometheus would: every dependency and queue shows, and
// the Prometheus client's own linter finds no problem.
func TestOperationalMetricsAfterARealAsk(t *testing.T) {
	// On Redis, so its command metrics are served too (the native store has
	// no Redis commands).
	srv := storetest.Redis(t)
	b := newOpsBridge(t, func(s *app.Settings) { s.RedisURL = srv.URL })
	b.slack.RateLimit("chat.postMessage", 1)
	q := b.askWebhook(nil)
	ts := slackTS(t, q)

	fams := parse(t, b.scrape())
	v, ok := series(fams, "askbridge_questions_pending", map[string]string{"project": "ops"})
	assert.True(t, ok && v == 1, "one question pending in ops: %v %v", v, ok)

	assert.Equal(t, http.StatusUnauthorized, b.click("U1", ts, "Ship it", "forged-secret", nil))
	assert.Equal(t, http.StatusOK, b.click("U1", ts, "Ship it", slackSecret, nil))
	require.Eventually(t, func() bool { return b.received.Load() == 1 }, 10*time.Second, 10*time.Millisecond, "the run was resumed")
	var final domain.Question
	require.Equal(t, http.StatusOK, b.do("GET", "/api/projects/ops/agent-questions/"+q.ID+"/wait?timeout=5s", nil, nil, &final))
	require.Equal(t, domain.StatusAnswered, final.Status)

	body := b.scrape()
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	require.NoError(t, err)
	assert.Empty(t, problems, "promlint finds no problem in /metrics")

	fams = parse(t, body)
	for _, c := range []struct {
		name   string
		labels map[string]string
	}{
		{"askbridge_outbound_requests_total", map[string]string{"platform": "slack", "method": "chat.postMessage", "outcome": "rate_limited"}},
		{"askbridge_outbound_requests_total", map[string]string{"platform": "slack", "method": "chat.postMessage", "outcome": "ok"}},
		{"askbridge_outbound_requests_total", map[string]string{"platform": "discord", "method": "POST /api/v10/channels/{id}/messages", "outcome": "ok"}},
		{"askbridge_outbound_requests_total", map[string]string{"platform": "webhook", "method": "POST", "outcome": "ok"}},
		{"askbridge_outbound_request_duration_seconds", map[string]string{"platform": "slack", "method": "chat.update"}},
		{"askbridge_outbound_retry_after_seconds", map[string]string{"platform": "slack"}},
		{"askbridge_interactions_total", map[string]string{"platform": "slack", "result": "answered"}},
		{"askbridge_interactions_total", map[string]string{"platform": "slack", "result": "bad_signature"}},
		{"askbridge_interaction_ack_seconds", map[string]string{"platform": "slack"}},
		{"askbridge_http_requests_total", map[string]string{"route": "POST /api/projects/{p}/agent-questions", "code": "2xx"}},
		{"askbridge_http_requests_total", map[string]string{"route": "POST /slack/interactions", "code": "4xx"}},
		{"askbridge_redis_command_duration_seconds", map[string]string{"kind": "command"}},
		{"askbridge_questions_total", map[string]string{"project": "ops", "outcome": "answered"}},
		{"askbridge_webhook_deliveries_total", map[string]string{"outcome": "delivered"}},
		{"askbridge_store_stats_up", nil},
	} {
		v, ok := series(fams, c.name, c.labels)
		assert.True(t, ok && v > 0, "%s%v is served and counted (%v)", c.name, c.labels, v)
	}
	v, ok = series(fams, "askbridge_questions_pending", map[string]string{"project": "ops"})
	assert.True(t, ok && v == 0, "nothing pending once answered: %v", v)
	v, ok = series(fams, "askbridge_webhook_queue_deliveries", map[string]string{"project": "ops"})
	assert.True(t, ok && v == 0, "the resume queue is empty once delivered: %v", v)
	v, ok = series(fams, "askbridge_delivery_queue_deliveries", map[string]string{"project": "ops", "sender": "webhook"})
	assert.True(t, ok && v == 0, "no resume webhook queued by sender once delivered: %v", v)

	// No label carries a question id, a person or free text.
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				for _, leak := range []string{q.ID, "U1", "alice", "secret-plan", "Ship it", "run-1", b.slack.BotToken} {
					assert.NotContains(t, l.GetValue(), leak, "%s{%s} leaks %q", f.GetName(), l.GetName(), leak)
				}
			}
		}
	}
}

func parse(t *testing.T, body []byte) map[string]*dto.MetricFamily {
	t.Helper()
	tp := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := tp.TextToMetricFamilies(bytes.NewReader(body))
	require.NoError(t, err)
	return fams
}
