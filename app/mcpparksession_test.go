package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/server/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sessionHost is a 2025-11-25 host's session on /mcp (its url may carry
// ?run=…).
type sessionHost struct {
	t           *testing.T
	url         string
	token, id   string
	protocolVer string
}

func openSession(t *testing.T, base, query, token string) *sessionHost {
	t.Helper()
	h := &sessionHost{t: t, url: base + "/mcp" + query, token: token, protocolVer: "2025-11-25"}
	res := h.post(context.Background(), map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize",
		"params": map[string]any{"protocolVersion": h.protocolVer, "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "session-host", "version": "1"}}})
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	h.id = res.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, h.id)
	res = h.post(context.Background(), map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	res.Body.Close()
	return h
}

// sign gives req the session's id and protocol version, once it has a
// session, and the host's token, if any.
func (h *sessionHost) sign(req *http.Request) {
	if h.id != "" {
		req.Header.Set("Mcp-Session-Id", h.id)
		req.Header.Set("MCP-Protocol-Version", h.protocolVer)
	}
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
}

func (h *sessionHost) post(ctx context.Context, msg any) *http.Response {
	h.t.Helper()
	body, _ := json.Marshal(msg)
	req, _ := http.NewRequestWithContext(ctx, "POST", h.url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	h.sign(req)
	res, err := http.DefaultClient.Do(req)
	require.NoError(h.t, err)
	return res
}

// sessionCall is a blocking ask_user call in a session: its SSE events
// arrive on events as they are read ("prime <id>", "progress <token> <n>
// <message>", "result <id>"), its JSON-RPC response on result (closed
// without one when the stream ends first).
type sessionCall struct {
	events chan string
	result chan map[string]any
	cut    context.CancelFunc
}

func (h *sessionHost) call(id any, question string, progressToken any) *sessionCall {
	h.t.Helper()
	ctx, cancel := context.WithCancel(h.t.Context())
	c := &sessionCall{events: make(chan string, 100), result: make(chan map[string]any, 1), cut: cancel}
	params := map[string]any{"name": "ask_user", "arguments": map[string]any{"questions": []any{map[string]any{
		"question": question, "header": "Deploy", "options": []any{map[string]any{"label": "Ship it", "description": "Roll out"},
			map[string]any{"label": "Hold", "description": "Keep the current version"}}}}}}
	if progressToken != nil {
		params["_meta"] = map[string]any{"progressToken": progressToken}
	}
	res := h.post(ctx, map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
	return h.read(res, c)
}

// resume resumes a call's stream after lastID, as a host whose stream
// dropped does (GET with Last-Event-ID).
func (h *sessionHost) resume(lastID string) *sessionCall {
	h.t.Helper()
	ctx, cancel := context.WithCancel(h.t.Context())
	c := &sessionCall{events: make(chan string, 100), result: make(chan map[string]any, 1), cut: cancel}
	req, _ := http.NewRequestWithContext(ctx, "GET", h.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", h.id)
	req.Header.Set("MCP-Protocol-Version", h.protocolVer)
	req.Header.Set("Last-Event-ID", lastID)
	res, err := http.DefaultClient.Do(req)
	require.NoError(h.t, err)
	require.Equal(h.t, http.StatusOK, res.StatusCode)
	return h.read(res, c)
}

func (h *sessionHost) read(res *http.Response, c *sessionCall) *sessionCall {
	require.Equal(h.t, "text/event-stream", res.Header.Get("Content-Type"))
	go func() {
		defer close(c.result)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var name, eid string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "id: "):
				eid = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				data := strings.TrimPrefix(line, "data: ")
				if name == "prime" {
					c.events <- "prime " + eid
					break
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(data), &m); err != nil {
					h.t.Errorf("an event that is not JSON: %s", data)
					return
				}
				if m["method"] == "notifications/progress" {
					p := m["params"].(map[string]any)
					c.events <- fmt.Sprint("progress ", p["progressToken"], " ", p["progress"], " ", p["message"])
					break
				}
				c.events <- "result " + eid
				c.result <- m
			case line == "":
				name, eid = "", ""
			}
		}
	}()
	return c
}

func (c *sessionCall) wait(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m, ok := <-c.result:
		require.True(t, ok, "the call's stream ended without a result")
		return m
	case <-time.After(20 * time.Second):
		t.Fatal("no result within 20 s")
	}
	return nil
}

// ended asserts that the call's stream ends without a result.
func (c *sessionCall) ended(t *testing.T) {
	t.Helper()
	select {
	case m, ok := <-c.result:
		assert.False(t, ok, "the call got a result: %v", m)
	case <-time.After(10 * time.Second):
		t.Fatal("the call's stream is still open")
	}
}

// stillWaits asserts that the call has no result for a while.
func (c *sessionCall) stillWaits(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case m, ok := <-c.result:
		t.Fatalf("the call ended (result %v, %v)", m, ok)
	case <-time.After(d):
	}
}

func (h *sessionHost) end() {
	req, _ := http.NewRequest("DELETE", h.url, nil)
	h.sign(req)
	res, err := http.DefaultClient.Do(req)
	require.NoError(h.t, err)
	res.Body.Close()
	require.Less(h.t, res.StatusCode, 300)
}

func questionNow(t *testing.T, b *opsBridge, id string, header http.Header) map[string]any {
	t.Helper()
	var now map[string]any
	b.do("GET", "/api/projects/default/agent-questions/"+id, nil, header, &now)
	return now
}

// TestParkedSessionCallGetsTheSameResult: a 2025-11-25 host's blocking
// call in its session waits parked (no goroutine: BenchmarkWaitingMCPCall),
// its stream opening with the SDK's priming event, gets its progress at
// the configured interval, then the very response the SDK writes for the
// same call whose question is already final (same id, same result, the
// event id following the priming event's).
func TestParkedSessionCallGetsTheSameResult(t *testing.T) {
	b := newOpsBridge(t, func(s *app.Settings) { s.MCPProgressEvery = 150 * time.Millisecond })
	h := openSession(t, b.url, "?run=p1", "")
	call := h.call(7, "Ship build 21?", "tok-s")
	q := pendingMCP(t, b, "Ship build 21?")
	prime := <-call.events
	require.Regexp(t, `^prime \S+_0$`, prime)
	for i := 1; i <= 2; i++ {
		select {
		case p := <-call.events:
			assert.Regexp(t, fmt.Sprintf(`^progress tok-s %d waiting for an answer in the web inbox — expires in `, i), p)
		case <-time.After(5 * time.Second):
			t.Fatalf("no progress notification %d", i)
		}
	}
	require.Equal(t, http.StatusAccepted, b.do("POST", "/api/projects/default/agent-questions/"+q["id"].(string)+"/respond",
		map[string]any{"response": "Ship it"}, nil, nil))
	parked := call.wait(t)
	for ev := range call.events {
		if strings.HasPrefix(ev, "result ") {
			assert.Equal(t, "result "+strings.TrimSuffix(strings.TrimPrefix(prime, "prime "), "_0")+"_1", ev)
			break
		}
	}
	assert.EqualValues(t, 7, parked["id"])
	sc := parked["result"].(map[string]any)["structuredContent"].(map[string]any)
	assert.Equal(t, "answered", sc["status"])
	assert.Equal(t, map[string]any{"Ship build 21?": "Ship it"}, sc["answers"])

	// The same call again in another session of the run re-attaches to the
	// answered question and is answered at once by the SDK, unparked.
	again := openSession(t, b.url, "?run=p1", "").call(7, "Ship build 21?", nil)
	assert.Equal(t, parked, again.wait(t))
	assert.Regexp(t, `^prime \S+_0$`, <-again.events)
	assert.Regexp(t, `^result \S+_1$`, <-again.events)
}

// TestParkedSessionCallEndings: every way a parked session call's question
// ends gives the host its result.
func TestParkedSessionCallEndings(t *testing.T) {
	b := newOpsBridge(t, nil)
	for _, c := range parkEndings(t, b, "s", "session-host") {
		t.Run(c.name, func(t *testing.T) {
			call := openSession(t, b.url, c.query, "").call("call-"+c.name, "Ship build s-"+c.name+"?", nil)
			call.stillWaits(t, 300*time.Millisecond)
			q := pendingMCP(t, b, "Ship build s-"+c.name+"?")
			c.end(q["id"].(string))
			m := call.wait(t)
			assert.Equal(t, "call-"+c.name, m["id"])
			res := m["result"].(map[string]any)
			assert.Equal(t, true, res["isError"])
			assert.Contains(t, res["content"].([]any)[0].(map[string]any)["text"], c.text)
			sc := res["structuredContent"].(map[string]any)
			assert.Equal(t, c.status, sc["status"])
			assert.Equal(t, q["id"], sc["question_id"])
		})
	}
}

// TestParkedSessionCallCancelledOrCut: a host that cancels its parked call
// (notifications/cancelled) or cuts its stream gets no result and leaves
// the question pending, as a waiting call does; the session still owns the
// question, and withdraws it when it ends.
func TestParkedSessionCallCancelledOrCut(t *testing.T) {
	b := newOpsBridge(t, nil)
	h := openSession(t, b.url, "", "")
	cancelled := h.call(3, "Ship build 31?", nil)
	q1 := pendingMCP(t, b, "Ship build 31?")
	cancelled.stillWaits(t, 300*time.Millisecond)
	res := h.post(context.Background(), map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled",
		"params": map[string]any{"requestId": 3, "reason": "the user pressed Esc"}})
	res.Body.Close()
	cancelled.ended(t)

	cut := h.call(4, "Ship build 32?", nil)
	q2 := pendingMCP(t, b, "Ship build 32?")
	cut.stillWaits(t, 300*time.Millisecond)
	cut.cut()
	time.Sleep(300 * time.Millisecond)
	for _, q := range []map[string]any{q1, q2} {
		assert.Equal(t, "pending", questionNow(t, b, q["id"].(string), nil)["status"], "the question outlives its call")
	}

	// The cut call again in the session re-attaches to its question.
	again := h.call(5, "Ship build 32?", nil)
	again.stillWaits(t, 300*time.Millisecond)
	require.Equal(t, http.StatusAccepted, b.do("POST", "/api/projects/default/agent-questions/"+q2["id"].(string)+"/respond",
		map[string]any{"response": "Hold"}, nil, nil))
	sc := again.wait(t)["result"].(map[string]any)["structuredContent"].(map[string]any)
	assert.Equal(t, q2["id"], sc["question_id"], "re-attached")

	h.end()
	require.Eventually(t, func() bool {
		now := questionNow(t, b, q1["id"].(string), nil)
		return now["status"] == "cancelled" && now["cancel_reason"] == "agent"
	}, 10*time.Second, 50*time.Millisecond, "the ended session withdraws the cancelled call's question")
}

// TestParkedSessionCallStreamResumed: a host whose parked call's stream
// drops resumes it (GET with the priming event's id as Last-Event-ID) and
// gets the progress and the result there, as on the stream it lost.
func TestParkedSessionCallStreamResumed(t *testing.T) {
	b := newOpsBridge(t, func(s *app.Settings) { s.MCPProgressEvery = 150 * time.Millisecond })
	h := openSession(t, b.url, "", "")
	call := h.call(9, "Ship build 61?", "tok-r")
	q := pendingMCP(t, b, "Ship build 61?")
	prime := strings.TrimPrefix(<-call.events, "prime ")
	require.Regexp(t, `_0$`, prime)
	assert.Regexp(t, `^progress tok-r 1 `, <-call.events)
	call.cut()
	time.Sleep(300 * time.Millisecond)
	assert.Equal(t, "pending", questionNow(t, b, q["id"].(string), nil)["status"])

	resumed := h.resume(prime)
	select {
	case p := <-resumed.events:
		assert.Regexp(t, `^progress tok-r [2-9] waiting for an answer`, p, "the progress goes on increasing")
	case <-time.After(5 * time.Second):
		t.Fatal("no progress on the resumed stream")
	}
	require.Equal(t, http.StatusAccepted, b.do("POST", "/api/projects/default/agent-questions/"+q["id"].(string)+"/respond",
		map[string]any{"response": "Ship it"}, nil, nil))
	m := resumed.wait(t)
	assert.EqualValues(t, 9, m["id"])
	assert.Equal(t, "answered", m["result"].(map[string]any)["structuredContent"].(map[string]any)["status"])
	for ev := range resumed.events {
		if strings.HasPrefix(ev, "result ") {
			assert.Equal(t, "result "+strings.TrimSuffix(prime, "_0")+"_1", ev)
			break
		}
	}
}

// TestParkedSessionCallSessionEnds: when the host ends its session (or the
// server shuts down), its parked calls' streams end without a result, as a
// waiting call's do; the session's questions are withdrawn, those of a run
// the host named stay open.
func TestParkedSessionCallSessionEnds(t *testing.T) {
	b := newOpsBridge(t, nil)
	h := openSession(t, b.url, "", "")
	call := h.call(1, "Ship build 41?", nil)
	q := pendingMCP(t, b, "Ship build 41?")
	pinned := openSession(t, b.url, "?run=keep-41", "")
	pcall := pinned.call(1, "Ship build 42?", nil)
	pq := pendingMCP(t, b, "Ship build 42?")
	call.stillWaits(t, 300*time.Millisecond)

	h.end()
	call.ended(t)
	now := questionNow(t, b, q["id"].(string), nil)
	assert.Equal(t, "cancelled", now["status"])
	assert.Equal(t, "agent", now["cancel_reason"])

	pinned.end()
	pcall.ended(t)
	assert.Equal(t, "pending", questionNow(t, b, pq["id"].(string), nil)["status"], "a named run's question outlives the session")

	last := openSession(t, b.url, "", "").call(1, "Ship build 43?", nil)
	pendingMCP(t, b, "Ship build 43?")
	last.stillWaits(t, 300*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, b.app.Close(ctx))
	last.ended(t)
}

// TestParkedSessionCallOutlivesIdleTimeout: a session whose only call is
// parked has no request in progress, yet does not idle out while the call
// waits (the bridge restarts its idle timeout);
// the answer reaches the call and the question is not withdrawn.
func TestParkedSessionCallOutlivesIdleTimeout(t *testing.T) {
	for _, tokens := range []bool{true, false} {
		t.Run(fmt.Sprint("tokens=", tokens), func(t *testing.T) { outlivesIdleTimeout(t, tokens) })
	}
}

func outlivesIdleTimeout(t *testing.T, tokens bool) {
	const token, operator = "agent-token-for-idle-session-0123456789", "operator-token-for-idle-session-0123456789"
	b := newOpsBridge(t, func(s *app.Settings) {
		s.MCPSessionTimeout = 600 * time.Millisecond
		if tokens {
			s.Agents = []api.Agent{{ID: "idle-host", Project: "default", Token: token, Tools: []string{"ask_user"}}}
			s.Operators = []api.Operator{{ID: "ops", Projects: []string{"*"}, Token: operator}}
		}
	})
	auth, hostToken := http.Header{"Authorization": {"Bearer " + operator}}, token
	if !tokens {
		auth, hostToken = nil, ""
	}
	h := openSession(t, b.url, "", hostToken)
	call := h.call(1, "Ship build 51?", nil)
	var q map[string]any
	require.Eventually(t, func() bool {
		var out struct{ Questions []map[string]any }
		b.do("GET", "/api/projects/default/agent-questions", nil, auth, &out)
		for _, x := range out.Questions {
			if strings.Contains(fmt.Sprint(x["questions"]), "Ship build 51?") {
				q = x
				return true
			}
		}
		return false
	}, 10*time.Second, 20*time.Millisecond)
	call.stillWaits(t, 2*time.Second) // over three idle timeouts
	assert.Equal(t, "pending", questionNow(t, b, q["id"].(string), auth)["status"])
	require.Equal(t, http.StatusAccepted, b.do("POST", "/api/projects/default/agent-questions/"+q["id"].(string)+"/respond",
		map[string]any{"response": "Ship it"}, auth, nil))
	sc := call.wait(t)["result"].(map[string]any)["structuredContent"].(map[string]any)
	assert.Equal(t, "answered", sc["status"])
}

// TestParkedSessionCallOn20250618: a 2025-06-18 host's session (no
// priming event) waits parked too, and gets its result.
func TestParkedSessionCallOn20250618(t *testing.T) {
	b := newOpsBridge(t, nil)
	h := &sessionHost{t: t, url: b.url + "/mcp", protocolVer: "2025-06-18"}
	res := h.post(context.Background(), map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize",
		"params": map[string]any{"protocolVersion": h.protocolVer, "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "older-host", "version": "1"}}})
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	h.id = res.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, h.id)
	res = h.post(context.Background(), map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	res.Body.Close()
	call := h.call(2, "Ship build 71?", nil)
	q := pendingMCP(t, b, "Ship build 71?")
	call.stillWaits(t, 300*time.Millisecond)
	require.Equal(t, http.StatusAccepted, b.do("POST", "/api/projects/default/agent-questions/"+q["id"].(string)+"/respond",
		map[string]any{"response": "Hold"}, nil, nil))
	m := call.wait(t)
	assert.EqualValues(t, 2, m["id"])
	assert.Equal(t, "answered", m["result"].(map[string]any)["structuredContent"].(map[string]any)["status"])
}
