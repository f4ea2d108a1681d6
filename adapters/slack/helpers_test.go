package slack

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/domain"
)

const testSecret = "test-signing-secret-value"

// testClock is a settable clock for the Router.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type env struct {
	t      testing.TB
	fake   *fakeslack.Server
	store  lifecycle.Store
	router *lifecycle.Router
	a      *Adapter
	mux    *http.ServeMux
	clock  *testClock
}

type envOpt func(*Config, *lifecycle.RouterConfig)

func newEnv(t testing.TB, opts ...envOpt) *env {
	t.Helper()
	fake := fakeslack.New("C1", "C2")
	t.Cleanup(fake.Close)
	return newReplica(t, fake, opts...)
}

// newReplica is one bridge replica talking to fake; replicas given the
// same store URL share their data.
func newReplica(t testing.TB, fake *fakeslack.Server, opts ...envOpt) *env {
	t.Helper()
	clock := &testClock{t: time.Now().UTC()}
	rc := lifecycle.RouterConfig{Clock: clock,
		Routes: []domain.Route{
			{Name: "oncall", Targets: []domain.Target{{Platform: "slack", Channel: "C1"}}, Thread: "per-run"},
			{Name: "two", Targets: []domain.Target{{Platform: "slack", Channel: "C1"}, {Platform: "slack", Channel: "C2"}}},
		},
		HasWebhookSecret: func(string) bool { return true }, PauseWait: 2 * time.Second}
	cfg := Config{BotToken: fake.BotToken, SigningSecret: testSecret, APIURL: fake.APIURL()}
	for _, o := range opts {
		o(&cfg, &rc)
	}
	if rc.Store == nil {
		rc.Store = newTestStore(t)
	}
	st := rc.Store
	router := lifecycle.NewRouter(rc)
	a, err := New(cfg, router, nil)
	if err != nil {
		t.Fatal(err)
	}
	router.AddChannel(a)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = a.Close(ctx)
		_ = router.Close(ctx)
	})
	mux := http.NewServeMux()
	a.Register(mux)
	return &env{t: t, fake: fake, store: st, router: router, a: a, mux: mux, clock: clock}
}

func (e *env) ask(req domain.AskRequest) *domain.Question {
	e.t.Helper()
	res, err := e.router.Ask(context.Background(), "ops", &req, "")
	if err != nil {
		e.t.Fatalf("ask: %v", err)
	}
	return res.Question
}

// copyOn returns the question's posted copy on channel.
func (e *env) copyOn(q *domain.Question, channel string) domain.Target {
	e.t.Helper()
	fresh, err := e.store.Get(context.Background(), q.ProjectID, q.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, t := range fresh.Targets {
		if t.Channel == channel && t.MessageTS != "" {
			return t
		}
	}
	e.t.Fatalf("no copy of %s on %s: %+v", q.ID, channel, fresh.Targets)
	return domain.Target{}
}

// element finds, in the posted message, the interactive element whose
// visible text (button) or action id prefix matches, and its block id.
func (e *env) element(channel, ts, match string) (blockID string, el map[string]any) {
	e.t.Helper()
	m, ok := e.fake.Message(channel, ts)
	if !ok {
		e.t.Fatalf("no message %s/%s", channel, ts)
	}
	var blocks []map[string]any
	if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
		e.t.Fatal(err)
	}
	for _, b := range blocks {
		els, _ := b["elements"].([]any)
		if acc, ok := b["accessory"]; ok {
			els = append(els, acc)
		}
		for _, ev := range els {
			el, _ := ev.(map[string]any)
			text := ""
			if tx, ok := el["text"].(map[string]any); ok {
				text, _ = tx["text"].(string)
			}
			aid, _ := el["action_id"].(string)
			if text == match || strings.HasPrefix(aid, match) {
				bid, _ := b["block_id"].(string)
				return bid, el
			}
		}
	}
	e.t.Fatalf("no element %q in message %s", match, m.Blocks)
	return "", nil
}

type user struct{ id, name string }

var (
	alice = user{"U1", "alice"}
	bob   = user{"U2", "bob"}
	carol = user{"U3", "carol"}
)

// clickPayload builds a block_actions payload as Slack sends it.
func (e *env) clickPayload(u user, channel, ts, buttonText string, state map[string]any) map[string]any {
	bid, el := e.element(channel, ts, buttonText)
	act := map[string]any{"action_id": el["action_id"], "block_id": bid, "type": el["type"],
		"value": el["value"], "action_ts": "1.1"}
	p := map[string]any{"type": "block_actions", "trigger_id": e.fake.Trigger(),
		"user":      map[string]any{"id": u.id, "username": u.name, "name": u.name},
		"container": map[string]any{"type": "message", "channel_id": channel, "message_ts": ts},
		"channel":   map[string]any{"id": channel}, "actions": []any{act}}
	if state != nil {
		p["state"] = map[string]any{"values": state}
	}
	return p
}

// post sends a signed request to the adapter's HTTP handlers.
func (e *env) post(path string, body []byte, sign func(*http.Request)) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(string(body)))
	if strings.HasSuffix(path, "interactions") {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req.Header.Set("Content-Type", "application/json")
	}
	if sign == nil {
		ts, sig := Sign(testSecret, time.Now(), body)
		req.Header.Set("X-Slack-Request-Timestamp", ts)
		req.Header.Set("X-Slack-Signature", sig)
	} else {
		sign(req)
	}
	rec := httptest.NewRecorder()
	e.mux.ServeHTTP(rec, req)
	return rec
}

func formBody(payload map[string]any) []byte {
	b, _ := json.Marshal(payload)
	return []byte(url.Values{"payload": {string(b)}}.Encode())
}

func (e *env) interact(payload map[string]any) *httptest.ResponseRecorder {
	e.t.Helper()
	rec := e.post("/slack/interactions", formBody(payload), nil)
	if rec.Code != http.StatusOK {
		e.t.Fatalf("interaction answered %d: %s", rec.Code, rec.Body)
	}
	return rec
}

func (e *env) click(u user, channel, ts, buttonText string, state map[string]any) {
	e.t.Helper()
	e.interact(e.clickPayload(u, channel, ts, buttonText, state))
}

// submitView sends a view_submission of the last opened modal with text.
func (e *env) submitView(u user, text string) *httptest.ResponseRecorder {
	e.t.Helper()
	views := e.fake.Views()
	if len(views) == 0 {
		e.t.Fatal("no modal was opened")
	}
	var v map[string]any
	_ = json.Unmarshal(views[len(views)-1].View, &v)
	payload := map[string]any{"type": "view_submission",
		"user": map[string]any{"id": u.id, "username": u.name, "name": u.name},
		"view": map[string]any{"id": views[len(views)-1].ID, "callback_id": v["callback_id"],
			"private_metadata": v["private_metadata"],
			"state": map[string]any{"values": map[string]any{modalBlock: map[string]any{
				modalAction: map[string]any{"type": "plain_text_input", "value": text}}}}}}
	return e.interact(payload)
}

// wait polls cond for up to 5 s.
func (e *env) wait(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// final waits for the question to leave pending and returns it.
func (e *env) final(q *domain.Question) *domain.Question {
	e.t.Helper()
	got, err := e.router.Wait(context.Background(), q.ProjectID, q.ID, 5*time.Second)
	if err != nil {
		e.t.Fatal(err)
	}
	if !got.Status.Final() {
		e.t.Fatalf("question still %s", got.Status)
	}
	return got
}

func (e *env) get(q *domain.Question) *domain.Question {
	e.t.Helper()
	got, err := e.store.Get(context.Background(), q.ProjectID, q.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

// edited waits until every copy of q was updated and returns their texts.
func (e *env) edited(q *domain.Question) []fakeslack.Message {
	e.t.Helper()
	var out []fakeslack.Message
	e.wait("every copy updated", func() bool {
		out = out[:0]
		for _, t := range e.get(q).Targets {
			m, ok := e.fake.Message(t.Channel, t.MessageTS)
			if !ok || m.Edits == 0 {
				return false
			}
			out = append(out, m)
		}
		return len(out) > 0
	})
	return out
}

func (e *env) ephemeralsTo(u user) []string {
	var out []string
	for _, m := range e.fake.Ephemerals(u.id) {
		out = append(out, m.Text)
	}
	return out
}

func authQuestion() domain.AskRequest {
	return domain.AskRequest{RunID: "run-1", AgentID: "deploy-bot", AgentName: "Deploy bot",
		Questions: []domain.Item{{Question: "Which auth method?", Header: "Auth", Options: []domain.Option{
			{Label: "OAuth 2.0", Description: "Standard", Value: "oauth", Recommended: true},
			{Label: "API key", Description: "Simple", Value: "apikey"}}}},
		Targets: []domain.Target{{Platform: "slack", Channel: "C1"}, {Platform: "slack", Channel: "C2"}}}
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}
