package api_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/server/api"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dialLive opens the project's live WebSocket with a real client.
func (b *bridge) dialLive(project, token string, h http.Header) (*websocket.Conn, *http.Response, error) {
	if h == nil {
		h = http.Header{}
	}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	path := "/api/projects/" + project + "/live"
	conn, res, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(b.srv.URL, "http")+path, h)
	if res != nil { // the handshake's answer, checked against the document as do checks
		raw, _ := io.ReadAll(res.Body)
		res.Body = io.NopCloser(bytes.NewReader(raw))
		req, _ := http.NewRequest("GET", b.srv.URL+path, nil)
		checkSpec(b.t, req, res, raw)
	}
	return conn, res, err
}

func readLive(t *testing.T, c *websocket.Conn) map[string]any {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var m map[string]any
	require.NoError(t, c.ReadJSON(&m))
	return m
}

// TestLiveWebSocket: pending questions on connecting, new questions as they
// are asked, answers taken like respond (same rules, same principal), and
// the final state pushed to every client.
func TestLiveWebSocket(t *testing.T) {
	ops := api.Operator{ID: "alice", Projects: []string{"ops"}, Token: "op-token"}
	bot := api.Agent{ID: "bot", Project: "ops", Token: "bot-token", Tools: []string{"ask_user"}}
	b := newBridge(t, opts{operators: []api.Operator{ops}, agents: []api.Agent{bot}})
	first := b.ask("ops", "bot-token", yesNo("run-1"))

	c, res, err := b.dialLive("ops", "op-token", nil)
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, http.StatusSwitchingProtocols, res.StatusCode)
	m := readLive(t, c)
	assert.Equal(t, "question", m["type"])
	assert.Equal(t, first, m["id"])
	assert.Equal(t, "Deploy run-1?", m["questions"].([]any)[0].(map[string]any)["question"])

	second := b.ask("ops", "bot-token", map[string]any{"run_id": "run-2", "questions": []map[string]any{
		{"question": "Which region?", "options": []map[string]any{{"label": "EU"}, {"label": "US"}}}}})
	m = readLive(t, c)
	assert.Equal(t, "question", m["type"])
	assert.Equal(t, second, m["id"])

	// An answer that breaks respond's rules is refused the same way.
	require.NoError(t, c.WriteJSON(map[string]any{"type": "answer", "question_id": second, "answers": map[string]any{"Which region?": []string{"EU", "US"}}}))
	m = readLive(t, c)
	assert.Equal(t, "error", m["type"])
	assert.Equal(t, "invalid_answer", m["error"].(map[string]any)["code"])

	require.NoError(t, c.WriteJSON(map[string]any{"type": "answer", "question_id": second, "answers": map[string]any{"Which region?": "EU"}}))
	got := map[string]map[string]any{}
	for len(got) < 2 {
		m = readLive(t, c)
		got[m["type"].(string)] = m
	}
	assert.Equal(t, "answered", got["result"]["status"])
	assert.Equal(t, "run-2", got["result"]["run_id"])
	assert.Equal(t, second, got["answered"]["id"])
	q := got["answered"]["question"].(map[string]any)
	assert.Equal(t, "EU", q["response"])
	assert.Equal(t, "alice", q["responded_by"].(map[string]any)["id"], "answered as the socket's operator")

	// An answer given elsewhere reaches the socket; a second answer is 409's code.
	r := b.do("POST", "/api/projects/ops/agent-questions/"+first+"/cancel", "op-token", map[string]any{"reason": "user", "note": "not today"})
	require.Equal(t, 200, r.status, string(r.raw))
	m = readLive(t, c)
	assert.Equal(t, "cancelled", m["type"])
	assert.Equal(t, "not today", m["question"].(map[string]any)["cancel_note"])
	require.NoError(t, c.WriteJSON(map[string]any{"type": "answer", "question_id": first, "response": "y"}))
	m = readLive(t, c)
	assert.Equal(t, "question_cancelled", m["error"].(map[string]any)["code"])

	require.NoError(t, c.WriteJSON(map[string]any{"type": "hello"}))
	m = readLive(t, c)
	assert.Equal(t, "error", m["type"])
	assert.Equal(t, "invalid", m["error"].(map[string]any)["code"])
}

// TestLiveWebSocketRefusals: no token, an agent token, another project, and
// a page of another site are refused before the upgrade, as JSON errors.
func TestLiveWebSocketRefusals(t *testing.T) {
	ops := api.Operator{ID: "alice", Projects: []string{"ops"}, Token: "op-token"}
	bot := api.Agent{ID: "bot", Project: "ops", Token: "bot-token", Tools: []string{"ask_user"}}
	b := newBridge(t, opts{operators: []api.Operator{ops}, agents: []api.Agent{bot}})
	for _, c := range []struct {
		name, project, token, origin string
		status                       int
	}{
		{"no token", "ops", "", "", 401},
		{"agent token", "ops", "bot-token", "", 403},
		{"other project", "dev", "op-token", "", 403},
		{"other site", "ops", "op-token", "https://evil.example", 403},
	} {
		h := http.Header{}
		if c.origin != "" {
			h.Set("Origin", c.origin)
		}
		conn, res, err := b.dialLive(c.project, c.token, h)
		if conn != nil {
			conn.Close()
		}
		require.Error(t, err, c.name)
		require.NotNil(t, res, c.name)
		assert.Equal(t, c.status, res.StatusCode, c.name)
		assert.Equal(t, "application/json", res.Header.Get("Content-Type"), c.name)
	}
	// Same-origin pages may open it.
	h := http.Header{"Origin": {b.srv.URL}}
	conn, _, err := b.dialLive("ops", "op-token", h)
	require.NoError(t, err)
	conn.Close()
}
