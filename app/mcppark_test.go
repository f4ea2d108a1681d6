package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/app"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mcpCall is a blocking ask_user call of a 2026-07-28 host over one POST
// to /mcp (query: ?run=…&timeout=…): its JSON-RPC response arrives on
// result (closed without one if the POST ends first), its progress
// messages on progress; cut ends the POST (the host gives up).
type mcpCall struct {
	result   chan map[string]any
	progress chan string
	comments chan string // SSE comment lines
	header   chan http.Header
	cut      context.CancelFunc
}

func callMCP(t *testing.T, base, query string, id any, question string, progressToken any) *mcpCall {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	c := &mcpCall{result: make(chan map[string]any, 1), progress: make(chan string, 100), comments: make(chan string, 100),
		header: make(chan http.Header, 1), cut: cancel}
	meta := map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "park-host", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{}}
	if progressToken != nil {
		meta["progressToken"] = progressToken
	}
	args := map[string]any{"questions": []any{map[string]any{"question": question, "header": "Deploy",
		"options": []any{map[string]any{"label": "Ship it", "description": "Roll out"}, map[string]any{"label": "Hold", "description": "Keep the current version"}}}}}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": "ask_user", "arguments": args, "_meta": meta}})
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/mcp"+query, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "ask_user")
	go func() {
		defer close(c.result)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		defer res.Body.Close()
		c.header <- res.Header
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), ":") {
				select {
				case c.comments <- sc.Text():
				default:
				}
			}
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				t.Errorf("an event that is not JSON: %s", data)
				return
			}
			if m["method"] == "notifications/progress" {
				p := m["params"].(map[string]any)
				c.progress <- fmt.Sprint(p["progressToken"], " ", p["progress"], " ", p["message"])
				continue
			}
			c.result <- m
		}
	}()
	return c
}

func (c *mcpCall) wait(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m, ok := <-c.result:
		require.True(t, ok, "the call ended without a result")
		return m
	case <-time.After(20 * time.Second):
		t.Fatal("no result within 20 s")
	}
	return nil
}

// pendingMCP waits for the question of project default asking text.
func pendingMCP(t *testing.T, b *opsBridge, text string) map[string]any {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var out struct{ Questions []map[string]any }
		b.do("GET", "/api/projects/default/agent-questions", nil, nil, &out)
		for _, q := range out.Questions {
			if strings.Contains(fmt.Sprint(q["questions"]), text) {
				return q
			}
		}
		require.True(t, time.Now().Before(end), "no question %q", text)
	}
}

// TestParkedMCPCallGetsTheSameResult: a 2026-07-28 host's blocking call
// waits parked (no goroutine: BenchmarkWaitingMCPCall), gets its progress
// at the configured interval, and then the very response the SDK writes
// for the same call whose question is already final: same JSON-RPC id,
// same result.
func TestParkedMCPCallGetsTheSameResult(t *testing.T) {
	b := newOpsBridge(t, func(s *app.Settings) { s.MCPProgressEvery = 150 * time.Millisecond })
	call := callMCP(t, b.url, "?run=r1", "call-1", "Ship build 7?", "tok-1")
	q := pendingMCP(t, b, "Ship build 7?")
	for i := 1; i <= 2; i++ {
		select {
		case p := <-call.progress:
			assert.Regexp(t, fmt.Sprintf(`^tok-1 %d waiting for an answer in the web inbox — expires in `, i), p)
		case <-time.After(5 * time.Second):
			t.Fatalf("no progress notification %d", i)
		}
	}
	assert.Equal(t, "text/event-stream", (<-call.header).Get("Content-Type"))
	require.Equal(t, http.StatusAccepted, b.do("POST", "/api/projects/default/agent-questions/"+q["id"].(string)+"/respond",
		map[string]any{"response": "Ship it"}, nil, nil))
	parked := call.wait(t)
	assert.Equal(t, "call-1", parked["id"])
	res := parked["result"].(map[string]any)
	assert.NotEqual(t, true, res["isError"])
	sc := res["structuredContent"].(map[string]any)
	assert.Equal(t, "answered", sc["status"])
	assert.Equal(t, q["id"], sc["question_id"])
	assert.Equal(t, map[string]any{"Ship build 7?": "Ship it"}, sc["answers"])

	// The same call again re-attaches to the answered question and is
	// answered at once by the SDK, unparked: the same result.
	again := callMCP(t, b.url, "?run=r1", "call-1", "Ship build 7?", nil).wait(t)
	assert.Equal(t, again, parked)
}

// TestParkedMCPCallWithoutProgressIsKeptAlive: a parked call whose host
// gave no progress token gets its response headers at once and an SSE
// comment at the progress interval until its answer. Without them the host
// saw nothing until the answer: a Node host's fetch gives up waiting for
// headers after 5 minutes, and a proxy closes a connection idle for 60 s.
func TestParkedMCPCallWithoutProgressIsKeptAlive(t *testing.T) {
	b := newOpsBridge(t, func(s *app.Settings) { s.MCPProgressEvery = 150 * time.Millisecond })
	call := callMCP(t, b.url, "?run=k1", 9, "Ship build 9?", nil)
	q := pendingMCP(t, b, "Ship build 9?")
	select {
	case h := <-call.header:
		assert.Equal(t, "text/event-stream", h.Get("Content-Type"))
	case <-time.After(5 * time.Second):
		t.Fatal("no response headers before the answer")
	}
	for i := 1; i <= 2; i++ {
		select {
		case c := <-call.comments:
			assert.Equal(t, ": waiting for an answer", c)
		case <-time.After(5 * time.Second):
			t.Fatalf("no keep-alive comment %d", i)
		}
	}
	assert.Empty(t, call.progress, "progress notifications for a call without a progress token")
	require.Equal(t, http.StatusAccepted, b.do("POST", "/api/projects/default/agent-questions/"+q["id"].(string)+"/respond",
		map[string]any{"response": "Hold"}, nil, nil))
	res := call.wait(t)
	assert.EqualValues(t, 9, res["id"])
	assert.Equal(t, map[string]any{"Ship build 9?": "Hold"}, res["result"].(map[string]any)["structuredContent"].(map[string]any)["answers"])
}

// parkEnding is one way a parked call's question ends without an answer:
// the call's query (its run), what ends it, and the result's status and
// text.
type parkEnding struct {
	name, query, status, text string
	end                       func(id string)
}

// parkEndings are the ways a parked call's question ends, each in a run of
// its own (run names prefixed with prefix; agent asks the superseding
// question).
func parkEndings(t *testing.T, b *opsBridge, prefix, agent string) []parkEnding {
	cancel := func(reason string) func(id string) {
		return func(id string) {
			require.Equal(t, http.StatusOK, b.do("POST", "/api/projects/default/agent-questions/"+id+"/cancel",
				map[string]any{"reason": reason}, nil, nil))
		}
	}
	return []parkEnding{
		{"expired", "?run=" + prefix + "e1&timeout=10s", "expired", "No answer: the question expired", func(string) {}},
		{"dismissed", "?run=" + prefix + "d1", "cancelled", "dismissed the question without answering", cancel("user")},
		{"withdrawn", "?run=" + prefix + "w1", "cancelled", "No answer: the question was withdrawn", cancel("agent")},
		{"superseded", "?run=" + prefix + "s1", "cancelled", "replaced by a newer question of this run", func(string) {
			var out any
			require.Equal(t, http.StatusCreated, b.do("POST", "/api/projects/default/agent-questions",
				map[string]any{"run_id": prefix + "s1", "agent_id": agent, "question": "Newer?"}, nil, &out), "%v", out)
		}},
	}
}

// TestParkedMCPCallEndings: every way a parked call's question ends gives
// the host its result (the same text as an unparked call's: the encoding
// is TestParkedMCPCallGetsTheSameResult's): expired, dismissed,
// superseded, withdrawn.
func TestParkedMCPCallEndings(t *testing.T) {
	b := newOpsBridge(t, nil)
	for _, c := range parkEndings(t, b, "", "park-host") {
		t.Run(c.name, func(t *testing.T) {
			call := callMCP(t, b.url, c.query, 42, "Ship build "+c.name+"?", nil)
			select {
			case m := <-call.result:
				t.Fatalf("the call ended at once: %v", m)
			case <-time.After(300 * time.Millisecond):
			}
			q := pendingMCP(t, b, "Ship build "+c.name+"?")
			c.end(q["id"].(string))
			m := call.wait(t)
			assert.EqualValues(t, 42, m["id"])
			res := m["result"].(map[string]any)
			assert.Equal(t, true, res["isError"])
			assert.Contains(t, res["content"].([]any)[0].(map[string]any)["text"], c.text)
			sc := res["structuredContent"].(map[string]any)
			assert.Equal(t, c.status, sc["status"])
			assert.Equal(t, q["id"], sc["question_id"])
		})
	}
}

// TestParkedMCPCallCutByTheHost: a host that gives up on its call (closes
// the POST) leaves the question pending, and the same call again
// re-attaches to it and gets its answer.
func TestParkedMCPCallCutByTheHost(t *testing.T) {
	b := newOpsBridge(t, nil)
	call := callMCP(t, b.url, "?run=c1", 1, "Ship build 9?", nil)
	q := pendingMCP(t, b, "Ship build 9?")
	time.Sleep(300 * time.Millisecond) // parked
	call.cut()
	_, got := <-call.result
	assert.False(t, got, "a cut call has no result")
	time.Sleep(200 * time.Millisecond)
	var now map[string]any
	b.do("GET", "/api/projects/default/agent-questions/"+q["id"].(string), nil, nil, &now)
	assert.Equal(t, "pending", now["status"], "the question outlives the cut call")

	again := callMCP(t, b.url, "?run=c1", 2, "Ship build 9?", nil)
	time.Sleep(300 * time.Millisecond)
	require.Equal(t, http.StatusAccepted, b.do("POST", "/api/projects/default/agent-questions/"+q["id"].(string)+"/respond",
		map[string]any{"response": "Hold"}, nil, nil))
	m := again.wait(t)
	sc := m["result"].(map[string]any)["structuredContent"].(map[string]any)
	assert.Equal(t, q["id"], sc["question_id"], "re-attached")
	assert.Equal(t, "answered", sc["status"])
}

// TestParkedMCPCallOnShutdown: a replica shutting down answers its parked
// calls at once, telling the host the question is still open (the call
// again, on another replica, keeps waiting); nothing is withdrawn.
func TestParkedMCPCallOnShutdown(t *testing.T) {
	b := newOpsBridge(t, nil)
	call := callMCP(t, b.url, "?run=x1", 5, "Ship build 11?", nil)
	q := pendingMCP(t, b, "Ship build 11?")
	time.Sleep(200 * time.Millisecond)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- b.app.Close(ctx)
	}()
	m := call.wait(t)
	res := m["result"].(map[string]any)
	sc := res["structuredContent"].(map[string]any)
	assert.Equal(t, "pending", sc["status"])
	assert.Equal(t, q["id"], sc["question_id"])
	assert.Contains(t, res["content"].([]any)[0].(map[string]any)["text"], "The question is still open; you may call ask_user again")
	require.NoError(t, <-done)
}
