package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/webhook"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bridgeBin is the binary built once for the process tests.
var bridgeBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bridge-bin")
	if err != nil {
		panic(err)
	}
	bridgeBin = filepath.Join(dir, "askbridge")
	out, err := exec.Command("go", "build", "-o", bridgeBin, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building bridge: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a running `askbridge serve`.
type proc struct {
	t    *testing.T
	cmd  *exec.Cmd
	URL  string
	logs *bytes.Buffer
	mu   *sync.Mutex
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

type syncBuf struct {
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (s syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

// startBridge runs the built binary with env and waits until it is ready.
func startBridge(t *testing.T, env ...string) *proc {
	t.Helper()
	addr := freeAddr(t)
	p := &proc{t: t, URL: "http://" + addr, logs: &bytes.Buffer{}, mu: &sync.Mutex{}}
	p.cmd = exec.Command(bridgeBin, "serve", "--addr", addr)
	// Each bridge has its own data directory (never the user's); env may
	// name another.
	p.cmd.Env = append(append(os.Environ(), "BRIDGE_DATA_DIR="+t.TempDir()), env...)
	w := syncBuf{p.mu, p.logs}
	p.cmd.Stdout, p.cmd.Stderr = w, w
	require.NoError(t, p.cmd.Start())
	t.Cleanup(p.stop)
	ok := storetest.WaitFor(context.Background(), 15*time.Second, func() bool {
		res, err := http.Get(p.URL + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == 200
	})
	if !ok {
		t.Fatalf("bridge did not become ready:\n%s", p.output())
	}
	return p
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.String()
}

func (p *proc) stop() {
	if p.cmd.Process != nil && p.cmd.ProcessState == nil {
		p.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-done
		}
	}
}

func (p *proc) kill() {
	p.cmd.Process.Kill()
	p.cmd.Wait()
}

func (p *proc) call(method, path string, body any) (int, map[string]any) {
	p.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, p.URL+path, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(p.t, err)
	defer res.Body.Close()
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

func TestWaiterOnOneProcessWokenByAnswerOnAnother(t *testing.T) {
	srv := storetest.Redis(t)
	a := startBridge(t, "REDIS_URL="+srv.URL)
	b := startBridge(t, "REDIS_URL="+srv.URL)
	code, q := a.call("POST", "/api/projects/ops/agent-questions", map[string]any{"run_id": "r1", "question": "Ship?",
		"options": []map[string]any{{"label": "Yes"}, {"label": "No"}}})
	require.Equal(t, 201, code)
	id := q["id"].(string)
	woken := make(chan map[string]any, 1)
	go func() {
		_, rec := a.call("GET", "/api/projects/ops/agent-questions/"+id+"/wait?timeout=60s", nil)
		woken <- rec
	}()
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	code, _ = b.call("POST", "/api/projects/ops/agent-questions/"+id+"/respond", map[string]any{"response": "yes"})
	require.Equal(t, 202, code)
	select {
	case rec := <-woken:
		assert.Equal(t, "answered", rec["status"])
		assert.Equal(t, "Yes", rec["response"])
		assert.Less(t, time.Since(start), time.Second, "woken promptly, not by a poll")
	case <-time.After(15 * time.Second):
		t.Fatal("the waiter on process A was not woken by the answer on process B")
	}
}

func TestShortTimeoutExpiresOnceWithinOneSecondWithTwoSweepers(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a 10 s deadline")
	}
	srv := storetest.Redis(t)
	a := startBridge(t, "REDIS_URL="+srv.URL)
	b := startBridge(t, "REDIS_URL="+srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := sseEvents(t, ctx, b.URL+"/api/projects/ops/events")
	code, q := a.call("POST", "/api/projects/ops/agent-questions", map[string]any{"run_id": "r1", "question": "Quick?", "timeout": "10s"})
	require.Equal(t, 201, code)
	id := q["id"].(string)
	deadline, _ := time.Parse(time.RFC3339Nano, q["expires_at"].(string))
	_, rec := a.call("GET", "/api/projects/ops/agent-questions/"+id+"/wait?timeout=20s", nil)
	seen := time.Now()
	assert.Equal(t, "expired", rec["status"])
	assert.Less(t, seen.Sub(deadline), time.Second, "expired within 1 s of its deadline")
	updated, _ := time.Parse(time.RFC3339Nano, rec["updated_at"].(string))
	assert.False(t, updated.Before(deadline), "not before its deadline")
	time.Sleep(1500 * time.Millisecond) // both sweepers have run several more times
	cancel()
	expired := 0
	for e := range events {
		if e == "question.expired" {
			expired++
		}
	}
	assert.Equal(t, 1, expired, "exactly one expiry event with two sweepers")
}

// sseEvents collects event names until ctx ends.
func sseEvents(t *testing.T, ctx context.Context, url string) <-chan string {
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	out := make(chan string, 100)
	go func() {
		defer close(out)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				out <- v
			}
		}
	}()
	return out
}

// TestDeliveryOfAKilledProcessIsSentByAnother: process A takes the answer
// and starts the webhook; the receiver hangs; A is killed mid-flight; B
// delivers it once A's lease runs out, with the same delivery id.
func TestDeliveryOfAKilledProcessIsSentByAnother(t *testing.T) {
	srv := storetest.Redis(t)
	var mu sync.Mutex
	var deliveries []string
	var verified int
	hang := make(chan struct{})
	first := true
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		deliveries = append(deliveries, r.Header.Get(webhook.HeaderDelivery))
		if webhook.Verify([]byte("s3cret"), r.Header.Get(webhook.HeaderSignature), body, 0, time.Now()) == nil {
			verified++
		}
		isFirst := first
		first = false
		mu.Unlock()
		if isFirst {
			<-hang // process A's attempt never completes
			return
		}
		w.WriteHeader(200)
	}))
	defer func() { close(hang); receiver.Close() }()
	env := []string{"REDIS_URL=" + srv.URL, "BRIDGE_WEBHOOK_SECRET=s3cret", "BRIDGE_WEBHOOK_LEASE=2s"}
	a := startBridge(t, env...)
	code, q := a.call("POST", "/api/projects/ops/agent-questions", map[string]any{"run_id": "r1", "question": "Go?",
		"resume": map[string]any{"url": receiver.URL}})
	require.Equal(t, 201, code)
	id := q["id"].(string)
	a.call("POST", "/api/projects/ops/agent-runs/r1/pause", nil)
	code, resp := a.call("POST", "/api/projects/ops/agent-questions/"+id+"/respond", map[string]any{"response": "yes please"})
	require.Equal(t, 202, code)
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(deliveries) == 1 }, 10*time.Second, 20*time.Millisecond)
	a.kill()
	b := startBridge(t, env...)
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(deliveries) == 2 }, 15*time.Second, 50*time.Millisecond,
		"process B delivers the webhook A was sending when it died\n%s", b.output())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, deliveries[0], deliveries[1], "same X-Askbridge-Delivery, so the receiver can drop a duplicate")
	assert.Equal(t, 2, verified, "signatures verify")
	_, run := b.call("GET", "/api/projects/ops/agent-runs/"+resp["run_id"].(string), nil)
	assert.Equal(t, "r1", run["resumed_from"])
}

func TestServeRefusesNonLoopbackWithoutTokens(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"serve", "--addr", "0.0.0.0:0"}, func(string) string { return "" }, nil, &out, &errb)
	assert.Equal(t, 1, code)
	assert.Contains(t, errb.String(), "refusing to listen on 0.0.0.0:0 without tokens")
}

func TestConfigErrorsNameLineAndKey(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	cases := map[string]struct{ body, want string }{
		"unknown key":      {"defaults:\n  timeout: 5m\n  colour: red\n", "line 3: defaults.colour: unknown key"},
		"bad duration":     {"defaults:\n  timeout: soon\n", "line 2"},
		"agent no token":   {"agents:\n  - {id: bot, project: ops, tools: [ask_user]}\n", "agents[0].token: required"},
		"unknown tool":     {"agents:\n  - {id: bot, project: ops, token: t, tools: [rm_rf]}\n", `unknown tool "rm_rf"`},
		"unknown route":    {"agents:\n  - {id: bot, project: ops, token: t, route: nope}\n", `no route named "nope"`},
		"two defaults":     {"routes:\n  - {name: a, default: true}\n  - {name: b, default: true}\n", "2 routes are marked default"},
		"slack no token":   {"routes:\n  - {name: a, targets: [{platform: slack, channel: C1}]}\n", "no Slack bot token is set"},
		"bad thread":       {"routes:\n  - {name: a, thread: always}\n", `"always" is not a thread mode`},
		"secret and file":  {"webhooks: {secret: x, secret_file: /nope}\n", "webhooks.secret and webhooks.secret_file are both set"},
		"missing file":     {"webhooks: {secret_file: /nonexistent/secret}\n", "webhooks.secret_file"},
		"bad platform":     {"routes:\n  - {name: a, targets: [{platform: irc, channel: x}]}\n", `"irc" is not configured on this bridge`},
		"operator no proj": {"operators:\n  - {id: alice, token: t}\n", "operators[0].projects"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := loadConfig(write(strings.ReplaceAll(name, " ", "_")+".yaml", c.body), func(string) string { return "" })
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	// Secrets never appear in errors; env overrides the file.
	p := write("ok.yaml", "webhooks: {secret: file-secret}\nslack: {bot_token: xoxb-very-secret}\nagents:\n  - {id: bot, project: ops, token: tok-1, tools: [ask_user]}\nrouting: x\n")
	_, err := loadConfig(p, func(string) string { return "" })
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "xoxb-very-secret")
	p = write("ok2.yaml", "webhooks: {secret: file-secret}\nagents:\n  - {id: bot, project: ops, token: tok-1, tools: [ask_user], webhook_secret: own}\n")
	s, err := loadConfig(p, func(k string) string {
		if k == "BRIDGE_WEBHOOK_SECRET" {
			return "env-secret"
		}
		return ""
	})
	require.NoError(t, err)
	assert.Equal(t, "env-secret", string(s.WebhookSecretFor("other")))
	assert.Equal(t, "own", string(s.WebhookSecretFor("bot")))
}

func TestUnknownCommand(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, 2, run(context.Background(), []string{"frobnicate"}, func(string) string { return "" }, nil, &out, &errb))
	assert.Contains(t, errb.String(), `unknown command "frobnicate"`)
}

// cli runs the built binary as a client of p.
func (p *proc) cli(args ...string) (int, string, string) {
	p.t.Helper()
	cmd := exec.Command(bridgeBin, args...)
	cmd.Env = append(os.Environ(), "BRIDGE_URL="+p.URL, "BRIDGE_PROJECT=demo")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		p.t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// TestWholeFlowThroughTheBinary: the embedded default, each shape asked
// over HTTP, waited on, answered with the CLI; the waiter gets the exact
// answer forms of docs/openapi.yaml.
func TestWholeFlowThroughTheBinary(t *testing.T) {
	b := startBridge(t)
	opt := func(labels ...string) []map[string]any {
		var out []map[string]any
		for _, l := range labels {
			out = append(out, map[string]any{"label": l, "description": "about " + l, "value": strings.ToLower(l)})
		}
		return out
	}
	cases := []struct {
		name       string
		questions  []map[string]any
		answer     []string
		answers    map[string]any
		selections map[string]any
		response   string
	}{
		{"single-select", []map[string]any{{"question": "Which auth method?", "header": "Auth", "options": opt("OAuth", "API key")}},
			[]string{"2"}, map[string]any{"Which auth method?": "API key"},
			map[string]any{"Which auth method?": []any{"API key"}}, "api key"},
		{"multi-select", []map[string]any{{"question": "Which features?", "header": "Features", "multiSelect": true, "options": opt("Login", "Dashboard", "Reports")}},
			[]string{"1,3"}, map[string]any{"Which features?": "Login, Reports"},
			map[string]any{"Which features?": []any{"Login", "Reports"}}, "login, reports"},
		{"open-ended", []map[string]any{{"question": "Anything else?"}},
			[]string{"-m", "ship it friday"}, map[string]any{"Anything else?": "ship it friday"},
			map[string]any{"Anything else?": []any{"ship it friday"}}, "ship it friday"},
		{"four items", []map[string]any{
			{"question": "Q1?", "header": "One", "options": opt("A", "B")},
			{"question": "Q2?", "header": "Two", "multiSelect": true, "options": opt("C", "D", "E")},
			{"question": "Q3?", "header": "Three", "options": opt("F", "G")},
			{"question": "Q4?", "header": "Four", "options": opt("H", "I")}},
			[]string{"1", "2,3", "2", "1"},
			map[string]any{"Q1?": "A", "Q2?": "D, E", "Q3?": "G", "Q4?": "H"},
			map[string]any{"Q1?": []any{"A"}, "Q2?": []any{"D", "E"}, "Q3?": []any{"G"}, "Q4?": []any{"H"}}, "a; d, e; g; h"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, q := b.call("POST", "/api/projects/demo/agent-questions", map[string]any{
				"run_id": fmt.Sprint("run-", i), "agent_id": "e2e", "questions": c.questions, "timeout": "5m"})
			require.Equal(t, 201, code, "%v", q)
			id := q["id"].(string)
			waited := make(chan map[string]any, 1)
			go func() {
				_, rec := b.call("GET", "/api/projects/demo/agent-questions/"+id+"/wait?timeout=60s", nil)
				waited <- rec
			}()
			code, out, errs := b.cli("questions", "show", id)
			require.Equal(t, 0, code, errs)
			assert.Contains(t, out, c.questions[0]["question"])
			code, _, errs = b.cli(append([]string{"questions", "answer", id}, c.answer...)...)
			require.Equal(t, 0, code, errs)
			select {
			case rec := <-waited:
				assert.Equal(t, "answered", rec["status"])
				assert.Equal(t, c.answers, rec["answers"])
				assert.Equal(t, c.selections, rec["selections"])
				assert.Equal(t, c.response, rec["response"])
			case <-time.After(20 * time.Second):
				t.Fatal("the waiter did not get the answer")
			}
			code, _, errs = b.cli(append([]string{"questions", "answer", id}, c.answer...)...)
			assert.Equal(t, 1, code, "a second answer is refused")
			assert.Contains(t, errs, "already answered")
		})
	}
}

// TestTwoOfThreeApprovalsAcrossTwoProcesses: three people vote at once,
// through two bridge processes on one Redis: two votes count, the question
// is answered once, the third is told it is already answered.
func TestTwoOfThreeApprovalsAcrossTwoProcesses(t *testing.T) {
	srv := storetest.Redis(t)
	a := startBridge(t, "REDIS_URL="+srv.URL)
	b := startBridge(t, "REDIS_URL="+srv.URL)
	for round := range 10 {
		code, q := a.call("POST", "/api/projects/ops/agent-questions", map[string]any{
			"run_id": fmt.Sprint("gate-", round), "kind": "approval", "approvals_required": 2,
			"question": "Deploy api v2?", "options": []map[string]any{{"label": "Approve"}, {"label": "Reject"}, {"label": "Block", "veto": true}}})
		require.Equal(t, 201, code, "%v", q)
		id := q["id"].(string)
		codes := make([]int, 3)
		var wg sync.WaitGroup
		for i, who := range []string{"alice", "bob", "carol"} {
			p := []*proc{a, b}[i%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes[i], _ = p.call("POST", "/api/projects/ops/agent-questions/"+id+"/respond", map[string]any{
					"response": "Approve", "responded_by": map[string]any{"platform": "slack", "id": who, "name": who}})
			}()
		}
		wg.Wait()
		assert.ElementsMatch(t, []int{202, 202, 409}, codes, "round %d", round)
		_, rec := b.call("GET", "/api/projects/ops/agent-questions/"+id, nil)
		assert.Equal(t, "answered", rec["status"])
		assert.Len(t, rec["votes"], 2, "round %d", round)
		assert.Equal(t, float64(2), rec["approvals_required"])
	}
	// A veto decides at the first vote.
	code, q := b.call("POST", "/api/projects/ops/agent-questions", map[string]any{"run_id": "gate-veto", "approvals_required": 2,
		"question": "Deploy api v3?", "options": []map[string]any{{"label": "Approve"}, {"label": "Block", "veto": true}}})
	require.Equal(t, 201, code)
	code, _ = a.call("POST", "/api/projects/ops/agent-questions/"+q["id"].(string)+"/respond", map[string]any{
		"response": "Block", "responded_by": map[string]any{"platform": "slack", "id": "dave"}})
	assert.Equal(t, 202, code)
	_, rec := b.call("GET", "/api/projects/ops/agent-questions/"+q["id"].(string), nil)
	assert.Equal(t, "answered", rec["status"])
	assert.Equal(t, "Block", rec["response"])
}
