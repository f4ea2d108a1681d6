package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/agent/webhook"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/server/api"
	"github.com/askbridge/askbridge/server/egress"
	"github.com/askbridge/askbridge/server/resume"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// localReceivers admits the tests' httptest receivers on loopback, as the
// local default (no tokens, loopback address) does.
var localReceivers = egress.MustNew(egress.Config{AllowLoopback: true})

const secret = "whsec-test"

type bridge struct {
	t      *testing.T
	srv    *httptest.Server
	store  *store.Store
	router *lifecycle.Router
}

type opts struct {
	redisURL  string
	agents    []api.Agent
	operators []api.Operator
	routes    []domain.Route
}

func newBridge(t *testing.T, o opts) *bridge {
	t.Helper()
	st, err := store.Open(context.Background(), store.Options{URL: o.redisURL})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	metrics := api.NewMetrics()
	router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st, Routes: o.routes, Observers: []lifecycle.Observer{metrics},
		HasWebhookSecret: func(string) bool { return true }})
	mux := http.NewServeMux()
	api.New(api.Config{Router: router, Auth: api.NewAuth(o.agents, o.operators), Metrics: metrics}).Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &bridge{t: t, srv: srv, store: st, router: router}
}

type resp struct {
	status int
	body   map[string]any
	raw    []byte
}

func (r resp) code() string {
	e, _ := r.body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func (r resp) fields() []string {
	e, _ := r.body["error"].(map[string]any)
	ds, _ := e["details"].([]any)
	var out []string
	for _, d := range ds {
		out = append(out, d.(map[string]any)["field"].(string))
	}
	return out
}

func (b *bridge) do(method, path, token string, body any) resp {
	b.t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(v)
	default:
		j, _ := json.Marshal(v)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, b.srv.URL+path, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(b.t, err)
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	checkSpec(b.t, req, res, raw)
	out := resp{status: res.StatusCode, raw: raw}
	_ = json.Unmarshal(raw, &out.body)
	return out
}

func (b *bridge) ask(project, token string, body map[string]any) string {
	b.t.Helper()
	r := b.do("POST", "/api/projects/"+project+"/agent-questions", token, body)
	require.Equal(b.t, 201, r.status, string(r.raw))
	return r.body["id"].(string)
}

func yesNo(run string) map[string]any {
	return map[string]any{"run_id": run, "question": "Deploy " + run + "?", "options": []map[string]any{{"label": "Yes", "value": "y"}, {"label": "No"}}}
}

func TestCreateReturnsRecordAndMessage(t *testing.T) {
	b := newBridge(t, opts{})
	r := b.do("POST", "/api/projects/ops/agent-questions", "", map[string]any{
		"run_id": "run-42", "agent_id": "deploy-bot", "agent_name": "Deploy bot", "context": "Release 1.2",
		"questions": []map[string]any{{"question": "Which auth method?", "header": "Auth",
			"options": []map[string]any{{"label": "OAuth 2.0", "description": "Standard", "value": "oauth"}, {"label": "API key", "description": "Simple"}}}},
		"timeout": "30m",
	})
	require.Equal(t, 201, r.status, string(r.raw))
	assert.Equal(t, "pending", r.body["status"])
	assert.Equal(t, "ops", r.body["project_id"])
	assert.Equal(t, "question", r.body["kind"])
	assert.Contains(t, r.body["message"], "expires in 30 min")
	opts := r.body["questions"].([]any)[0].(map[string]any)["options"].([]any)
	assert.Equal(t, "API key", opts[1].(map[string]any)["value"], "value defaults to label")
	created, _ := time.Parse(time.RFC3339, r.body["created_at"].(string))
	expires, _ := time.Parse(time.RFC3339, r.body["expires_at"].(string))
	assert.Equal(t, 30*time.Minute, expires.Sub(created).Round(time.Second))
}

// TestStatusCodes walks the endpoint table of docs/openapi.yaml.
func TestStatusCodes(t *testing.T) {
	b := newBridge(t, opts{
		agents: []api.Agent{{ID: "bot", Project: "ops", Token: "agent-tok", Tools: []string{"ask_user"}},
			{ID: "mute", Project: "ops", Token: "mute-tok"}},
		operators: []api.Operator{{ID: "alice", Projects: []string{"ops"}, Token: "op-tok"},
			{ID: "eve", Projects: []string{"other"}, Token: "eve-tok"}},
	})
	base := "/api/projects/ops/agent-questions"

	// 401 without or with a wrong token.
	assert.Equal(t, 401, b.do("POST", base, "", yesNo("r0")).status)
	assert.Equal(t, 401, b.do("GET", base, "nope", nil).status)
	// 403: another project, a sub-agent, a tool not enabled.
	assert.Equal(t, 403, b.do("POST", "/api/projects/other/agent-questions", "agent-tok", yesNo("r0")).status)
	sub := yesNo("r0")
	sub["parent_run_id"] = "run-parent"
	r := b.do("POST", base, "agent-tok", sub)
	assert.Equal(t, 403, r.status)
	assert.Equal(t, "subagent_not_allowed", r.code())
	assert.Contains(t, string(r.raw), "only parent conversations can ask user questions")
	r = b.do("POST", base, "mute-tok", yesNo("r0"))
	assert.Equal(t, 403, r.status)
	assert.Equal(t, "tool_not_enabled", r.code())
	// 400 invalid.
	r = b.do("POST", base, "agent-tok", `{"question": ""}`)
	assert.Equal(t, 400, r.status)
	assert.Equal(t, "invalid", r.code())
	assert.Equal(t, 400, b.do("POST", base, "agent-tok", `{not json`).status)

	// 201, then 200 on idempotent replay.
	body := yesNo("r1")
	body["idempotency_key"] = "toolu_01"
	r = b.do("POST", base, "agent-tok", body)
	require.Equal(t, 201, r.status)
	id := r.body["id"].(string)
	r = b.do("POST", base, "agent-tok", body)
	assert.Equal(t, 200, r.status)
	assert.Equal(t, id, r.body["id"])

	// GET list and one; 404 for another project's question, also for an
	// operator of that other project.
	r = b.do("GET", base+"?status=pending", "op-tok", nil)
	assert.Equal(t, 200, r.status)
	assert.Len(t, r.body["questions"], 1)
	assert.Equal(t, 200, b.do("GET", base+"/"+id, "op-tok", nil).status)
	assert.Equal(t, 404, b.do("GET", "/api/projects/other/agent-questions/"+id, "eve-tok", nil).status)
	assert.Equal(t, 403, b.do("GET", base+"/"+id, "eve-tok", nil).status)
	assert.Equal(t, 404, b.do("GET", base+"/00000000-0000-0000-0000-000000000000", "op-tok", nil).status)

	// wait times out with the pending record.
	r = b.do("GET", base+"/"+id+"/wait?timeout=1s", "agent-tok", nil)
	assert.Equal(t, 200, r.status)
	assert.Equal(t, "pending", r.body["status"])

	// respond: 400 invalid_answer, 403 for agents, 202, 409 already_answered.
	r = b.do("POST", base+"/"+id+"/respond", "op-tok", map[string]any{"answers": map[string]any{"Nope": "x"}})
	assert.Equal(t, 400, r.status)
	assert.Equal(t, "invalid_answer", r.code())
	assert.Equal(t, 403, b.do("POST", base+"/"+id+"/respond", "agent-tok", map[string]any{"response": "y"}).status)
	assert.Equal(t, 404, b.do("POST", base+"/missing/respond", "op-tok", map[string]any{"response": "y"}).status)
	r = b.do("POST", base+"/"+id+"/respond", "op-tok", map[string]any{"response": "y"})
	require.Equal(t, 202, r.status, string(r.raw))
	assert.Equal(t, map[string]any{"id": id, "status": "answered", "run_id": "r1"}, r.body)
	r = b.do("POST", base+"/"+id+"/respond", "op-tok", map[string]any{"response": "No"})
	assert.Equal(t, 409, r.status)
	assert.Equal(t, "already_answered", r.code())
	assert.Contains(t, string(r.raw), "alice")
	r = b.do("POST", base+"/"+id+"/cancel", "op-tok", map[string]any{"reason": "user"})
	assert.Equal(t, 409, r.status, "cancel on a final question")

	// The record carries the three answer forms.
	r = b.do("GET", base+"/"+id, "agent-tok", nil)
	assert.Equal(t, map[string]any{"Deploy r1?": "Yes"}, r.body["answers"])
	assert.Equal(t, map[string]any{"Deploy r1?": []any{"Yes"}}, r.body["selections"])
	assert.Equal(t, "y", r.body["response"])
	assert.Equal(t, map[string]any{"platform": "api", "id": "alice", "name": "alice"}, r.body["responded_by"])

	// 409 question_cancelled.
	id2 := b.ask("ops", "agent-tok", yesNo("r2"))
	r = b.do("POST", base+"/"+id2+"/cancel", "agent-tok", nil)
	require.Equal(t, 200, r.status, string(r.raw))
	assert.Equal(t, "cancelled", r.body["status"])
	assert.Equal(t, "agent", r.body["cancel_reason"])
	r = b.do("POST", base+"/"+id2+"/respond", "op-tok", map[string]any{"response": "y"})
	assert.Equal(t, 409, r.status)
	assert.Equal(t, "question_cancelled", r.code())
	assert.Equal(t, 400, b.do("POST", base+"/"+id2+"/cancel", "op-tok", map[string]any{"reason": "bored"}).status)

	// 409 question_expired.
	q3 := b.ask("ops", "agent-tok", map[string]any{"run_id": "r3", "question": "Soon?", "timeout": "10s"})
	_, err := b.store.Transition(context.Background(), "ops", q3, lifecycle.Transition{To: domain.StatusExpired})
	require.NoError(t, err)
	r = b.do("POST", base+"/"+q3+"/respond", "op-tok", map[string]any{"response": "now"})
	assert.Equal(t, 409, r.status)
	assert.Equal(t, "question_expired", r.code())

	// Runs: 200 and 404; run questions in creation order.
	assert.Equal(t, 200, b.do("GET", "/api/projects/ops/agent-runs/r1", "agent-tok", nil).status)
	assert.Equal(t, 404, b.do("GET", "/api/projects/ops/agent-runs/none", "agent-tok", nil).status)
	r = b.do("POST", "/api/projects/ops/agent-runs/r1/pause", "agent-tok", nil)
	assert.Equal(t, 200, r.status)
	assert.Equal(t, "paused", r.body["status"])
	r = b.do("GET", "/api/projects/ops/agent-runs/r1/questions", "op-tok", nil)
	assert.Equal(t, 200, r.status)
	assert.Len(t, r.body["questions"], 1)

	// Tools: the enabled agent gets ask_user, the other an empty list.
	r = b.do("GET", "/api/projects/ops/agents/bot/tools", "agent-tok", nil)
	require.Equal(t, 200, r.status)
	tools := r.body["tools"].([]any)
	require.Len(t, tools, 1)
	assert.Equal(t, "ask_user", tools[0].(map[string]any)["name"])
	assert.NotNil(t, tools[0].(map[string]any)["input_schema"])
	r = b.do("GET", "/api/projects/ops/agents/mute/tools", "op-tok", nil)
	assert.Equal(t, 200, r.status)
	assert.Empty(t, r.body["tools"])
	assert.Equal(t, 404, b.do("GET", "/api/projects/ops/agents/ghost/tools", "op-tok", nil).status)

	// Notifications.
	r = b.do("GET", "/api/projects/ops/notifications", "op-tok", nil)
	require.Equal(t, 200, r.status)
	ns := r.body["notifications"].([]any)
	assert.Len(t, ns, 3)
	r = b.do("POST", "/api/projects/ops/notifications/"+id2+"/read", "op-tok", nil)
	assert.Equal(t, 200, r.status)
	assert.Equal(t, true, r.body["read"])
	assert.Equal(t, 404, b.do("POST", "/api/projects/ops/notifications/none/read", "op-tok", nil).status)

	// Health.
	assert.Equal(t, 200, b.do("GET", "/healthz", "", nil).status)
	assert.Equal(t, 200, b.do("GET", "/readyz", "", nil).status)
	m := b.do("GET", "/metrics", "", nil)
	for _, want := range []string{`askbridge_questions_total{outcome="answered",project="ops"} 1`,
		`askbridge_questions_total{outcome="cancelled_agent",project="ops"} 1`,
		`askbridge_questions_asked_total{project="ops"} 3`,
		`askbridge_time_to_answer_seconds_count{project="ops"} 1`} {
		assert.True(t, strings.Contains(string(m.raw), want), "/metrics lacks %s", want)
	}
}

func TestAgentsSeeOnlyTheirOwnQuestions(t *testing.T) {
	b := newBridge(t, opts{agents: []api.Agent{
		{ID: "a", Project: "ops", Token: "a-tok", Tools: []string{"ask_user"}},
		{ID: "b", Project: "ops", Token: "b-tok", Tools: []string{"ask_user"}}}})
	id := b.ask("ops", "a-tok", yesNo("r1"))
	assert.Equal(t, 404, b.do("GET", "/api/projects/ops/agent-questions/"+id, "b-tok", nil).status)
	assert.Equal(t, 404, b.do("POST", "/api/projects/ops/agent-questions/"+id+"/cancel", "b-tok", nil).status)
	r := b.do("GET", "/api/projects/ops/agent-questions", "b-tok", nil)
	assert.Empty(t, r.body["questions"])
	r = b.do("POST", "/api/projects/ops/agent-questions", "b-tok", map[string]any{"agent_id": "a", "question": "Spoof?"})
	assert.Equal(t, 403, r.status)
}

func TestEveryValidationLimitGets400WithItsField(t *testing.T) {
	b := newBridge(t, opts{})
	item := func(mut func(m map[string]any)) map[string]any {
		m := map[string]any{"question": "Q?", "header": "H", "options": []map[string]any{{"label": "A"}, {"label": "B"}}}
		mut(m)
		return m
	}
	five := []map[string]any{{"label": "1"}, {"label": "2"}, {"label": "3"}, {"label": "4"}, {"label": "5"}}
	cases := map[string]struct {
		body  map[string]any
		field string
	}{
		"no questions":       {map[string]any{"questions": []any{}}, "questions"},
		"five questions":     {map[string]any{"questions": []any{item(func(m map[string]any) { m["question"] = "1" }), item(func(m map[string]any) { m["question"] = "2" }), item(func(m map[string]any) { m["question"] = "3" }), item(func(m map[string]any) { m["question"] = "4" }), item(func(m map[string]any) { m["question"] = "5" })}}, "questions"},
		"header over 12":     {map[string]any{"questions": []any{item(func(m map[string]any) { m["header"] = "thirteen char" })}}, "questions[0].header"},
		"one option":         {map[string]any{"questions": []any{item(func(m map[string]any) { m["options"] = []map[string]any{{"label": "A"}} })}}, "questions[0].options"},
		"five options":       {map[string]any{"questions": []any{item(func(m map[string]any) { m["options"] = five })}}, "questions[0].options"},
		"duplicate labels":   {map[string]any{"questions": []any{item(func(m map[string]any) { m["options"] = []map[string]any{{"label": "A"}, {"label": "a"}} })}}, "questions[0].options[1].label"},
		"duplicate items":    {map[string]any{"questions": []any{item(func(m map[string]any) {}), item(func(m map[string]any) {})}}, "questions[1].question"},
		"timeout under 10s":  {map[string]any{"question": "Q?", "timeout": "9s"}, "timeout"},
		"timeout over 30d":   {map[string]any{"question": "Q?", "timeout": "721h"}, "timeout"},
		"timeout not a time": {map[string]any{"question": "Q?", "timeout": "soon"}, ""},
		"unknown field":      {map[string]any{"question": "Q?", "colour": "red"}, "colour"},
		"unknown route":      {map[string]any{"question": "Q?", "route": "nowhere"}, "route"},
		"unknown platform":   {map[string]any{"question": "Q?", "targets": []map[string]any{{"platform": "irc", "channel": "#x"}}}, "targets[0].platform"},
		"relative resume":    {map[string]any{"question": "Q?", "resume": map[string]any{"url": "/x"}}, "resume.url"},
		// Telegram's names are read (the chat fills channel), and a bridge
		// without Telegram refuses the platform, not the channel.
		"telegram not configured": {map[string]any{"question": "Q?", "targets": []map[string]any{{"platform": "telegram", "chat": "-1001", "thread": 42}}}, "targets[0].platform"},
		"telegram thread a flag":  {map[string]any{"question": "Q?", "targets": []map[string]any{{"platform": "telegram", "chat": "-1001", "thread": true}}}, "targets[0].thread"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := b.do("POST", "/api/projects/ops/agent-questions", "", c.body)
			assert.Equal(t, 400, r.status, string(r.raw))
			assert.Equal(t, "invalid", r.code())
			if c.field != "" {
				assert.Contains(t, r.fields(), c.field, string(r.raw))
			}
			if name == "telegram not configured" {
				assert.NotContains(t, r.fields(), "targets[0].channel", string(r.raw))
			}
		})
	}
	// Nothing was stored by any refused ask.
	r := b.do("GET", "/api/projects/ops/agent-questions", "", nil)
	assert.Empty(t, r.body["questions"])
}

func TestWaitWakesOnAnswer(t *testing.T) {
	b := newBridge(t, opts{})
	id := b.ask("ops", "", yesNo("r1"))
	got := make(chan resp, 1)
	go func() { got <- b.do("GET", "/api/projects/ops/agent-questions/"+id+"/wait?timeout=30s", "", nil) }()
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	require.Equal(t, 202, b.do("POST", "/api/projects/ops/agent-questions/"+id+"/respond", "", map[string]any{"response": "no"}).status)
	select {
	case r := <-got:
		assert.Equal(t, "answered", r.body["status"])
		assert.Equal(t, "No", r.body["response"])
		assert.Less(t, time.Since(start), 2*time.Second)
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter was not woken")
	}
}

func TestSupersedeAndReattachThroughAPI(t *testing.T) {
	b := newBridge(t, opts{})
	first := b.ask("ops", "", yesNo("r1"))
	r := b.do("POST", "/api/projects/ops/agent-questions", "", yesNo("r1"))
	assert.Equal(t, 200, r.status, "identical re-ask re-attaches")
	assert.Equal(t, first, r.body["id"])
	second := b.ask("ops", "", map[string]any{"run_id": "r1", "question": "Something else?"})
	r = b.do("GET", "/api/projects/ops/agent-questions/"+first, "", nil)
	assert.Equal(t, "cancelled", r.body["status"])
	assert.Equal(t, "superseded", r.body["cancel_reason"])
	r = b.do("GET", "/api/projects/ops/agent-runs/r1/questions", "", nil)
	qs := r.body["questions"].([]any)
	require.Len(t, qs, 2)
	assert.Equal(t, second, qs[1].(map[string]any)["id"])
}

func TestConcurrentAnswersOnTwoReplicasExactlyOneWins(t *testing.T) {
	srv := storetest.Redis(t)
	a := newBridge(t, opts{redisURL: srv.URL})
	b := newBridge(t, opts{redisURL: srv.URL})
	for i := 0; i < 100; i++ {
		id := a.ask("ops", "", yesNo(fmt.Sprint("run-", i)))
		codes := make([]resp, 2)
		var wg sync.WaitGroup
		for j, br := range []*bridge{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes[j] = br.do("POST", "/api/projects/ops/agent-questions/"+id+"/respond", "", map[string]any{"response": []string{"Yes", "No"}[j]})
			}()
		}
		wg.Wait()
		statuses := []int{codes[0].status, codes[1].status}
		require.ElementsMatch(t, []int{202, 409}, statuses, "round %d", i)
		for _, c := range codes {
			if c.status == 409 {
				require.Equal(t, "already_answered", c.code())
			}
		}
	}
}

// TestWebhookMode: 409 run_not_paused, then pause, answer, continuation run
// and a signed webhook the receiver can verify, retried through a receiver
// that fails first.
func TestWebhookMode(t *testing.T) {
	b := newBridge(t, opts{})
	var mu sync.Mutex
	var got []*http.Request
	var bodies [][]byte
	fails := 2
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r)
		bodies = append(bodies, body)
		if fails > 0 {
			fails--
			w.WriteHeader(503)
			return
		}
		if err := webhook.Verify([]byte(secret), r.Header.Get(webhook.HeaderSignature), body, 0, time.Now()); err != nil {
			w.WriteHeader(401)
			return
		}
		w.WriteHeader(204)
	}))
	defer receiver.Close()
	ask := yesNo("run-7")
	ask["agent_id"] = "deploy-bot"
	ask["resume"] = map[string]any{"url": receiver.URL + "/resume"}
	id := b.ask("ops", "", ask)
	base := "/api/projects/ops/agent-questions/" + id

	r := b.do("POST", base+"/respond", "", map[string]any{"response": "y"})
	assert.Equal(t, 409, r.status)
	assert.Equal(t, "run_not_paused", r.code())
	r = b.do("POST", "/api/projects/ops/agent-runs/run-7/pause", "", nil)
	require.Equal(t, 200, r.status)
	r = b.do("POST", base+"/respond", "", map[string]any{"response": "y"})
	require.Equal(t, 202, r.status, string(r.raw))
	newRun := r.body["run_id"].(string)
	assert.NotEqual(t, "run-7", newRun)
	r = b.do("GET", "/api/projects/ops/agent-runs/"+newRun, "", nil)
	assert.Equal(t, "running", r.body["status"])
	assert.Equal(t, "run-7", r.body["resumed_from"])
	r = b.do("GET", "/api/projects/ops/agent-runs/run-7", "", nil)
	assert.Equal(t, "resumed", r.body["status"])

	d := resume.New(resume.Config{Store: b.store, Egress: localReceivers, Secret: func(string) []byte { return []byte(secret) },
		MinBackoff: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go d.Run(ctx)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == 3
	}, 10*time.Second, 20*time.Millisecond, "delivered after two failures")
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 3, "not sent again after a 2xx")
	assert.Equal(t, got[0].Header.Get(webhook.HeaderDelivery), got[2].Header.Get(webhook.HeaderDelivery), "the same delivery id on every retry")
	assert.Equal(t, "question.answered", got[2].Header.Get(webhook.HeaderEvent))
	assert.Equal(t, "application/json", got[2].Header.Get("Content-Type"))
	var p map[string]any
	require.NoError(t, json.Unmarshal(bodies[2], &p))
	assert.Equal(t, "question.answered", p["event"])
	assert.Equal(t, map[string]any{"id": newRun, "resumed_from": "run-7", "agent_id": "deploy-bot", "project_id": "ops"}, p["run"])
	assert.Equal(t, "Previously you asked: \"Deploy run-7?\"\nThe user responded: \"Yes\"\n\nContinue from where you left off.", p["user_message"])
	assert.Equal(t, id, p["question"].(map[string]any)["id"])
}

func TestWebhookPermanentFailureIsReported(t *testing.T) {
	b := newBridge(t, opts{})
	var calls int
	var mu sync.Mutex
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		mu.Unlock()
		w.WriteHeader(410)
	}))
	defer receiver.Close()
	ask := yesNo("run-1")
	ask["resume"] = map[string]any{"url": receiver.URL}
	id := b.ask("ops", "", ask)
	b.do("POST", "/api/projects/ops/agent-runs/run-1/pause", "", nil)
	require.Equal(t, 202, b.do("POST", "/api/projects/ops/agent-questions/"+id+"/respond", "", map[string]any{"response": "y"}).status)
	d := resume.New(resume.Config{Store: b.store, Egress: localReceivers, Secret: func(string) []byte { return []byte(secret) }})
	for i := 0; i < 3; i++ {
		d.Once(context.Background())
	}
	assert.Equal(t, 1, calls, "a 410 is not retried")
	evs, _ := b.store.Events(context.Background(), "ops", "", 100)
	var failed bool
	for _, e := range evs {
		failed = failed || e.Type == domain.EventResumeFailed
	}
	assert.True(t, failed, "resume.failed event")
}

func TestSSEEventsAndLastEventID(t *testing.T) {
	b := newBridge(t, opts{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", b.srv.URL+"/api/projects/ops/events", nil)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	checkStatus(t, req.Method, req.URL.Path, res.StatusCode)
	assert.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	id := b.ask("ops", "", yesNo("r1"))
	b.do("POST", "/api/projects/ops/agent-questions/"+id+"/respond", "", map[string]any{"response": "y"})
	var events, ids []string
	timeout := time.After(5 * time.Second)
	for len(events) < 2 {
		select {
		case l := <-lines:
			if v, ok := strings.CutPrefix(l, "event: "); ok {
				events = append(events, v)
			}
			if v, ok := strings.CutPrefix(l, "id: "); ok {
				ids = append(ids, v)
			}
		case <-timeout:
			t.Fatalf("got events %v", events)
		}
	}
	assert.Equal(t, []string{"question.created", "question.answered"}, events)
	cancel()

	// Reconnecting with Last-Event-ID replays what came after it.
	req, _ = http.NewRequest("GET", b.srv.URL+"/api/projects/ops/events", nil)
	req.Header.Set("Last-Event-ID", ids[0])
	ctx2, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel2()
	res2, err := http.DefaultClient.Do(req.WithContext(ctx2))
	require.NoError(t, err)
	defer res2.Body.Close()
	checkStatus(t, req.Method, req.URL.Path, res2.StatusCode)
	sc := bufio.NewScanner(res2.Body)
	var replay []string
	for sc.Scan() && len(replay) < 1 {
		if v, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			replay = append(replay, v)
		}
	}
	assert.Equal(t, []string{"question.answered"}, replay)
	assert.Equal(t, 400, b.do("GET", "/api/projects/ops/events?last_event_id=bogus", "", nil).status)
}

func TestTokensNeverLeakInRecords(t *testing.T) {
	b := newBridge(t, opts{})
	id := b.ask("ops", "", yesNo("r1"))
	// A copy whose refs hold a platform interaction token.
	require.NoError(t, b.store.AttachCopy(context.Background(), "ops", id, domain.Target{Platform: "discord", Channel: "1",
		MessageTS: "2", Refs: map[string]string{"token": "secret-interaction-token"}}))
	r := b.do("GET", "/api/projects/ops/agent-questions/"+id, "", nil)
	assert.NotContains(t, string(r.raw), "secret-interaction-token")
	assert.Contains(t, string(r.raw), `"message_ts":"2"`)
}

// TestDrainAnswersParkedWaits: on shutdown every waiting long-poll gets the
// current record at once, so callers re-poll another replica.
func TestDrainAnswersParkedWaits(t *testing.T) {
	st, err := store.Open(context.Background(), store.Options{})
	require.NoError(t, err)
	defer st.Close()
	router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st})
	a := api.New(api.Config{Router: router})
	mux := http.NewServeMux()
	a.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	b := &bridge{t: t, srv: srv, store: st, router: router}
	var ids []string
	for i := range 5 {
		ids = append(ids, b.ask("ops", "", yesNo(fmt.Sprint("r", i))))
	}
	got := make(chan resp, len(ids))
	for _, id := range ids {
		go func() { got <- b.do("GET", "/api/projects/ops/agent-questions/"+id+"/wait?timeout=100s", "", nil) }()
	}
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	a.Drain()
	for range ids {
		select {
		case r := <-got:
			assert.Equal(t, 200, r.status)
			assert.Equal(t, "pending", r.body["status"])
		case <-time.After(5 * time.Second):
			t.Fatal("a parked wait was not answered on drain")
		}
	}
	assert.Less(t, time.Since(start), 2*time.Second)
}
