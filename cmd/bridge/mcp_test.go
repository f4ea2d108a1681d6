package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/store/storetest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bearer adds a token to every request of an HTTP client.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// mcpConnect connects to url with token as the SDK's newest protocol
// (2026-07-28: stateless, no session on the server).
func mcpConnect(t *testing.T, url, token string) *mcp.ClientSession {
	return mcpConnectVersion(t, url, token, "")
}

// mcpConnectVersion connects with a protocol version: 2025-11-25 and older
// open a Streamable HTTP session.
func mcpConnectVersion(t *testing.T, url, token, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "remote-host", Version: "1"}, nil)
	s, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearer{token}}}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func askArgs(question string) map[string]any {
	return map[string]any{"questions": []any{map[string]any{
		"question": question, "header": "Auth",
		"options": []any{
			map[string]any{"label": "OAuth 2.0", "description": "Standard"},
			map[string]any{"label": "API key", "description": "Simple"},
		},
	}}}
}

// authed sends an API request with token and decodes the JSON answer.
func authed(t *testing.T, method, url, token string, body any) (int, map[string]any) {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, url, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// pending waits for n pending questions in project and returns them.
func pending(t *testing.T, base, project, token string, n int) []map[string]any {
	t.Helper()
	var qs []any
	ok := storetest.WaitFor(context.Background(), 10*time.Second, func() bool {
		_, out := authed(t, "GET", base+"/api/projects/"+project+"/agent-questions?status=pending", token, nil)
		qs, _ = out["questions"].([]any)
		return len(qs) >= n
	})
	require.True(t, ok, "no %d pending questions in %s", n, project)
	var res []map[string]any
	for _, q := range qs {
		res = append(res, q.(map[string]any))
	}
	return res
}

func firstText(r *mcp.CallToolResult) string {
	if len(r.Content) == 0 {
		return ""
	}
	tc, _ := r.Content[0].(*mcp.TextContent)
	if tc == nil {
		return ""
	}
	return tc.Text
}

func TestRemoteMCPWithTokens(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "bridge.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`agents:
  - {id: deploy-bot, project: ops, token: agent-secret, tools: [ask_user]}
  - {id: mute-bot, project: ops, token: mute-secret, tools: []}
operators:
  - {id: alice, projects: [ops], token: op-secret}
`), 0o600))
	b := startBridge(t, "BRIDGE_CONFIG="+cfg)

	// No token, a wrong token: refused before any MCP handling, in plain words.
	for _, tok := range []string{"", "nope"} {
		code, out := authed(t, "POST", b.URL+"/mcp", tok, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize"})
		assert.Equal(t, http.StatusUnauthorized, code)
		assert.Contains(t, out["error"].(map[string]any)["message"], "token")
	}
	// Another project than the agent token's: refused.
	code, out := authed(t, "POST", b.URL+"/mcp?project=other", "agent-secret", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize"})
	assert.Equal(t, http.StatusForbidden, code)
	assert.Contains(t, out["error"].(map[string]any)["message"], "project ops")
	// The same for a stateless (2026-07-28) request.
	for _, c := range []struct {
		query, token string
		code         int
	}{{"", "", http.StatusUnauthorized}, {"", "nope", http.StatusUnauthorized}, {"?project=other", "agent-secret", http.StatusForbidden}} {
		req, _ := http.NewRequest("POST", b.URL+"/mcp"+c.query, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "server/discover")
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, c.code, res.StatusCode, "2026-07-28 request, token %q %s", c.token, c.query)
	}
	// A cross-site page cannot drive it, token or not.
	req, _ := http.NewRequest("POST", b.URL+"/mcp", strings.NewReader(`{}`))
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Authorization", "Bearer agent-secret")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusForbidden, res.StatusCode)

	// The agent token asks as its own agent, in its own project.
	s := mcpConnect(t, b.URL+"/mcp", "agent-secret")
	tools, err := s.ListTools(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 1)
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		r, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: askArgs("Which auth method?")})
		assert.NoError(t, err)
		done <- r
	}()
	q := pending(t, b.URL, "ops", "op-secret", 1)[0]
	assert.Equal(t, "deploy-bot", q["agent_id"])
	code, _ = authed(t, "POST", b.URL+"/api/projects/ops/agent-questions/"+q["id"].(string)+"/respond", "op-secret", map[string]any{"response": "API key"})
	require.Equal(t, http.StatusAccepted, code)
	select {
	case r := <-done:
		assert.False(t, r.IsError, firstText(r))
		assert.Equal(t, `User has answered your questions: "Which auth method?"="API key". You can now continue with the user's answers in mind.`, firstText(r))
	case <-time.After(10 * time.Second):
		t.Fatal("the remote call did not return the answer")
	}

	// An agent without ask_user gets the API's refusal as a tool error.
	s2 := mcpConnect(t, b.URL+"/mcp", "mute-secret")
	r, err := s2.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: askArgs("Which region?")})
	require.NoError(t, err)
	assert.True(t, r.IsError)
	assert.Contains(t, firstText(r), "does not have the ask_user tool")
}

// TestRemoteMCPSessionsAndRuns: sessions of 2025-11-25 clients.
func TestRemoteMCPSessionsAndRuns(t *testing.T) {
	b := startBridge(t)
	// Open mode: ?project= names the project.
	s := mcpConnectVersion(t, b.URL+"/mcp?project=ops", "", "2025-11-25")
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "ask_user", Arguments: askArgs("Which auth method?")})
	cancel()
	require.Error(t, err, "the host's timeout cuts the call")
	q := pending(t, b.URL, "ops", "", 1)[0]
	// The identical call in the same session re-attaches.
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		r, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: askArgs("Which auth method?")})
		assert.NoError(t, err)
		done <- r
	}()
	time.Sleep(300 * time.Millisecond)
	code, _ := authed(t, "POST", b.URL+"/api/projects/ops/agent-questions/"+q["id"].(string)+"/respond", "", map[string]any{"response": "OAuth 2.0"})
	require.Equal(t, http.StatusAccepted, code)
	select {
	case r := <-done:
		assert.Contains(t, firstText(r), `"Which auth method?"="OAuth 2.0"`)
	case <-time.After(10 * time.Second):
		t.Fatal("the repeated call did not re-attach")
	}

	// A session that ends (the client closes it) withdraws its questions.
	s2 := mcpConnectVersion(t, b.URL+"/mcp?project=ops", "", "2025-11-25")
	go func() {
		_, _ = s2.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask_user", Arguments: askArgs("Which region?")})
	}()
	q2 := pending(t, b.URL, "ops", "", 1)[0]
	del, _ := http.NewRequest("DELETE", b.URL+"/mcp?project=ops", nil)
	del.Header.Set("Mcp-Session-Id", s2.ID())
	res, err := http.DefaultClient.Do(del)
	require.NoError(t, err)
	res.Body.Close()
	ok := storetest.WaitFor(context.Background(), 10*time.Second, func() bool {
		_, got := authed(t, "GET", b.URL+"/api/projects/ops/agent-questions/"+q2["id"].(string), "", nil)
		return got["status"] == "cancelled" && got["cancel_reason"] == "agent"
	})
	assert.True(t, ok, "the ended session's question is withdrawn")

	// A run the client names outlives its session: a new session re-attaches.
	s3 := mcpConnectVersion(t, b.URL+"/mcp?project=ops&run=run-77", "", "2025-11-25")
	ctx, cancel = context.WithTimeout(t.Context(), 500*time.Millisecond)
	_, err = s3.CallTool(ctx, &mcp.CallToolParams{Name: "ask_user", Arguments: askArgs("Which database?")})
	cancel()
	require.Error(t, err)
	q3 := pending(t, b.URL, "ops", "", 1)[0]
	assert.Equal(t, "run-77", q3["run_id"])
	del, _ = http.NewRequest("DELETE", b.URL+"/mcp?project=ops&run=run-77", nil)
	del.Header.Set("Mcp-Session-Id", s3.ID())
	res, err = http.DefaultClient.Do(del)
	require.NoError(t, err)
	res.Body.Close()
	time.Sleep(300 * time.Millisecond)
	s4 := mcpConnectVersion(t, b.URL+"/mcp?project=ops&run=run-77", "", "2025-11-25")
	go func() {
		r, err := s4.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: askArgs("Which database?")})
		assert.NoError(t, err)
		done <- r
	}()
	time.Sleep(300 * time.Millisecond)
	code, _ = authed(t, "POST", b.URL+"/api/projects/ops/agent-questions/"+q3["id"].(string)+"/respond", "", map[string]any{"response": "API key"})
	require.Equal(t, http.StatusAccepted, code)
	select {
	case r := <-done:
		assert.Contains(t, firstText(r), `"Which database?"="API key"`)
	case <-time.After(10 * time.Second):
		t.Fatal("the new session did not re-attach to the named run's question")
	}
}
