package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/store/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// taskClient is an MCP client written to the wire format of the tasks
// extension (io.modelcontextprotocol/tasks, SEP-2663): raw JSON-RPC over
// Streamable HTTP, the extension declared in each request's
// _meta["io.modelcontextprotocol/clientCapabilities"].
type taskClient struct {
	t       *testing.T
	url     string
	token   string
	session string
	declare bool
	next    int
	// stateless: a 2026-07-28 client (SEP-2575): no session, each request
	// carries its protocol version, client info and capabilities (caps).
	stateless bool
	caps      map[string]any
}

// rpcError is a JSON-RPC error.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// newTaskClient opens a 2025-11-25 session (the protocol /mcp serves
// statefully); declare says whether its requests declare the extension.
func newTaskClient(t *testing.T, url, token string, declare bool) *taskClient {
	t.Helper()
	c, _ := openTaskSession(t, url, token, map[string]any{})
	c.declare = declare
	return c
}

// openTaskSession initializes a session with the capabilities caps and
// returns the server's initialize result.
func openTaskSession(t *testing.T, url, token string, caps map[string]any) (*taskClient, map[string]any) {
	t.Helper()
	c := &taskClient{t: t, url: url, token: token}
	res, rerr, err := c.send(t.Context(), "initialize", map[string]any{"protocolVersion": "2025-11-25",
		"capabilities": caps, "clientInfo": map[string]any{"name": "task-host", "version": "1"}})
	require.NoError(t, err)
	require.Nil(t, rerr)
	require.NotNil(t, res)
	_, _, err = c.send(t.Context(), "notifications/initialized", nil)
	require.NoError(t, err)
	return c, res
}

// call sends a request and waits for its response.
func (c *taskClient) call(ctx context.Context, method string, params map[string]any) (map[string]any, *rpcError, error) {
	if c.stateless {
		if params == nil {
			params = map[string]any{}
		}
		params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "task-host", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": c.caps}
		return c.send(ctx, method, params)
	}
	if c.declare {
		if params == nil {
			params = map[string]any{}
		}
		params["_meta"] = map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{
			"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}
	}
	return c.send(ctx, method, params)
}

func (c *taskClient) send(ctx context.Context, method string, params map[string]any) (map[string]any, *rpcError, error) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	id := 0
	if !strings.HasPrefix(method, "notifications/") {
		c.next++
		id = c.next
		msg["id"] = id
	}
	body, _ := json.Marshal(msg)
	req, _ := http.NewRequestWithContext(ctx, "POST", c.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Method", method)
	if id, ok := params["taskId"].(string); ok {
		req.Header.Set("Mcp-Name", id) // the extension's routing header
	} else if name, ok := params["name"].(string); ok && method == "tools/call" {
		req.Header.Set("Mcp-Name", name) // SEP-2243
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.stateless {
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	}
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	if s := res.Header.Get("Mcp-Session-Id"); s != "" {
		c.session = s
	}
	if id == 0 {
		return nil, nil, nil
	}
	var reply struct {
		ID     int             `json:"id"`
		Result map[string]any  `json:"result"`
		Error  *rpcError       `json:"error"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		raw, _ := io.ReadAll(res.Body)
		if err := json.Unmarshal(raw, &reply); err != nil {
			return nil, nil, fmt.Errorf("HTTP %d: %s", res.StatusCode, bytes.TrimSpace(raw))
		}
		return reply.Result, reply.Error, nil
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		reply.ID, reply.Result, reply.Error = 0, nil, nil
		if json.Unmarshal([]byte(strings.TrimSpace(data)), &reply) == nil && reply.ID == id && reply.Method == "" {
			return reply.Result, reply.Error, nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	return nil, nil, context.DeadlineExceeded
}

// askTask calls ask_user and expects a task back at once.
func (c *taskClient) askTask(question string) map[string]any {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), 5*time.Second)
	defer cancel()
	res, rerr, err := c.call(ctx, "tools/call", map[string]any{"name": "ask_user", "arguments": askArgs(question)})
	require.NoError(c.t, err, "tools/call did not return at once: it blocked until the host's 5 s timeout")
	require.Nil(c.t, rerr)
	require.Equal(c.t, "task", res["resultType"], "%v", res)
	return res
}

// get polls a task once.
func (c *taskClient) get(taskID string) (map[string]any, *rpcError) {
	c.t.Helper()
	res, rerr, err := c.call(c.t.Context(), "tasks/get", map[string]any{"taskId": taskID})
	require.NoError(c.t, err)
	return res, rerr
}

func tasksConfig(t *testing.T) string {
	cfg := filepath.Join(t.TempDir(), "bridge.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`agents:
  - {id: deploy-bot, project: ops, token: agent-secret, tools: [ask_user]}
  - {id: other-bot, project: ops, token: other-secret, tools: [ask_user]}
operators:
  - {id: alice, projects: [ops], token: op-secret}
`), 0o600))
	return cfg
}

// TestMCPTaskPolledAcrossRestartAndAnswered: a host that declares the tasks
// extension gets ask_user as a task at once; the task is its question, so
// a new bridge process on the same data directory serves it; only the
// credential that created it reads it; the person's answer through the
// HTTP API is the task's result.
func TestMCPTaskPolledAcrossRestartAndAnswered(t *testing.T) {
	dir := t.TempDir()
	cfg := tasksConfig(t)
	a := startBridge(t, "BRIDGE_DATA_DIR="+dir, "BRIDGE_CONFIG="+cfg)
	c := newTaskClient(t, a.URL+"/mcp", "agent-secret", true)
	created := c.askTask("Which auth method?")
	id, _ := created["taskId"].(string)
	require.NotEmpty(t, id)
	assert.Equal(t, "working", created["status"])
	assert.Equal(t, "waiting for an answer in the web inbox — expires in 5 min", created["statusMessage"])
	assert.EqualValues(t, 5000, created["pollIntervalMs"])
	// The task is bound to its question and lives at least as long.
	_, q := authed(t, "GET", a.URL+"/api/projects/ops/agent-questions/"+id, "op-secret", nil)
	require.Equal(t, "pending", q["status"], "the task id is the question's id")
	made, _ := time.Parse(time.RFC3339Nano, q["created_at"].(string))
	expires, _ := time.Parse(time.RFC3339Nano, q["expires_at"].(string))
	assert.GreaterOrEqual(t, created["ttlMs"].(float64), float64(expires.Sub(made).Milliseconds()))

	got, rerr := c.get(id)
	require.Nil(t, rerr)
	assert.Equal(t, "complete", got["resultType"])
	assert.Equal(t, "working", got["status"])
	assert.Equal(t, id, got["taskId"])

	// The bridge that created it stops; a new process serves the task.
	a.stop()
	b := startBridge(t, "BRIDGE_DATA_DIR="+dir, "BRIDGE_CONFIG="+cfg)
	c = newTaskClient(t, b.URL+"/mcp", "agent-secret", true)
	got, rerr = c.get(id)
	require.Nil(t, rerr, "the task outlives the process that created it")
	assert.Equal(t, "working", got["status"])

	// Another credential gets the extension's not-found, even one that may
	// read every question of the project; its cancel changes nothing.
	for _, tok := range []string{"op-secret", "other-secret"} {
		o := newTaskClient(t, b.URL+"/mcp", tok, true)
		_, rerr := o.get(id)
		require.NotNil(t, rerr, tok)
		assert.Equal(t, -32602, rerr.Code, tok)
		assert.Contains(t, rerr.Message, "task not found")
		_, rerr, err := o.call(t.Context(), "tasks/cancel", map[string]any{"taskId": id})
		require.NoError(t, err)
		require.NotNil(t, rerr, tok)
		assert.Equal(t, -32602, rerr.Code)
	}
	_, q = authed(t, "GET", b.URL+"/api/projects/ops/agent-questions/"+id, "op-secret", nil)
	require.Equal(t, "pending", q["status"])

	// A person answers in the web inbox (the HTTP respond path).
	code, _ := authed(t, "POST", b.URL+"/api/projects/ops/agent-questions/"+id+"/respond", "op-secret", map[string]any{"response": "API key"})
	require.Equal(t, http.StatusAccepted, code)
	got, rerr = c.get(id)
	require.Nil(t, rerr)
	assert.Equal(t, "completed", got["status"])
	result, _ := got["result"].(map[string]any)
	require.NotNil(t, result, "%v", got)
	assert.NotEqual(t, true, result["isError"], "not an error result")
	content := result["content"].([]any)
	assert.Equal(t, `User has answered your questions: "Which auth method?"="API key". You can now continue with the user's answers in mind.`,
		content[0].(map[string]any)["text"], "the same result as the blocking call")
	assert.Equal(t, "answered", result["structuredContent"].(map[string]any)["status"])
}

// TestMCPTaskCancelledAndDismissed: tasks/cancel withdraws the question as
// the agent; a question a person dismisses ends the task completed with
// the no-answer result, so the model continues.
func TestMCPTaskCancelledAndDismissed(t *testing.T) {
	b := startBridge(t, "BRIDGE_CONFIG="+tasksConfig(t))
	c := newTaskClient(t, b.URL+"/mcp", "agent-secret", true)
	id := c.askTask("Which region?")["taskId"].(string)
	res, rerr, err := c.call(t.Context(), "tasks/cancel", map[string]any{"taskId": id})
	require.NoError(t, err)
	require.Nil(t, rerr)
	assert.Equal(t, map[string]any{"resultType": "complete"}, res)
	_, q := authed(t, "GET", b.URL+"/api/projects/ops/agent-questions/"+id, "op-secret", nil)
	assert.Equal(t, "cancelled", q["status"])
	assert.Equal(t, "agent", q["cancel_reason"])
	got, rerr := c.get(id)
	require.Nil(t, rerr)
	assert.Equal(t, "cancelled", got["status"])

	id = c.askTask("Which database?")["taskId"].(string)
	code, _ := authed(t, "POST", b.URL+"/api/projects/ops/agent-questions/"+id+"/cancel", "op-secret", map[string]any{"reason": "user"})
	require.Equal(t, http.StatusOK, code)
	got, rerr = c.get(id)
	require.Nil(t, rerr)
	assert.Equal(t, "completed", got["status"])
	result := got["result"].(map[string]any)
	assert.Equal(t, true, result["isError"])
	assert.Contains(t, result["content"].([]any)[0].(map[string]any)["text"], "dismissed the question without answering. Continue without the answer")
}

// TestMCPWithoutTasksKeepsTheBlockingCall: a host that does not declare
// the extension keeps the call that waits for the answer, and the tasks
// methods tell it which capability they need.
func TestMCPWithoutTasksKeepsTheBlockingCall(t *testing.T) {
	b := startBridge(t, "BRIDGE_CONFIG="+tasksConfig(t))
	c := newTaskClient(t, b.URL+"/mcp", "agent-secret", false)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	_, _, err := c.call(ctx, "tools/call", map[string]any{"name": "ask_user", "arguments": askArgs("Which auth method?")})
	cancel()
	require.Error(t, err, "the call waits for the answer")
	_, rerr, err := c.call(t.Context(), "tasks/get", map[string]any{"taskId": "any"})
	require.NoError(t, err)
	require.NotNil(t, rerr)
	assert.Equal(t, -32021, rerr.Code)
	assert.JSONEq(t, `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`, string(rerr.Data))
}

// TestMCPTasksDeclaredForTheSession: the server advertises the extension,
// and a 2025-11-25 client may declare it once, when its session starts.
func TestMCPTasksDeclaredForTheSession(t *testing.T) {
	b := startBridge(t, "BRIDGE_CONFIG="+tasksConfig(t))
	c, init := openTaskSession(t, b.URL+"/mcp", "agent-secret",
		map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}})
	ext, _ := init["capabilities"].(map[string]any)["extensions"].(map[string]any)
	assert.Contains(t, ext, "io.modelcontextprotocol/tasks")
	id := c.askTask("Which auth method?")["taskId"].(string)
	got, rerr := c.get(id)
	require.Nil(t, rerr)
	assert.Equal(t, "working", got["status"])
}

// TestMCPTaskServedByEveryReplica: two bridges on one Redis, no session
// affinity: the task created on one is polled, cancelled and refused to
// another credential on the other.
func TestMCPTaskServedByEveryReplica(t *testing.T) {
	rdb := storetest.Redis(t)
	cfg := tasksConfig(t)
	a := startBridge(t, "REDIS_URL="+rdb.URL, "BRIDGE_CONFIG="+cfg)
	b := startBridge(t, "REDIS_URL="+rdb.URL, "BRIDGE_CONFIG="+cfg)
	id := newTaskClient(t, a.URL+"/mcp", "agent-secret", true).askTask("Which auth method?")["taskId"].(string)

	c := newTaskClient(t, b.URL+"/mcp", "agent-secret", true)
	got, rerr := c.get(id)
	require.Nil(t, rerr)
	assert.Equal(t, "working", got["status"])
	_, rerr = newTaskClient(t, b.URL+"/mcp", "op-secret", true).get(id)
	require.NotNil(t, rerr)
	assert.Equal(t, -32602, rerr.Code)

	_, rerr, err := c.call(t.Context(), "tasks/cancel", map[string]any{"taskId": id})
	require.NoError(t, err)
	require.Nil(t, rerr)
	got, rerr = newTaskClient(t, a.URL+"/mcp", "agent-secret", true).get(id)
	require.Nil(t, rerr)
	assert.Equal(t, "cancelled", got["status"])
}
