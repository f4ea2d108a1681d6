package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/askbridge/askbridge/agent/mcpserver"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// remoteMCP serves /mcp in-process in front of the fake bridge.
func remoteMCP(t *testing.T, api *fakeapi.Server) string {
	url, _ := remoteMCPServer(t, api, mcpserver.Config{})
	return url
}

func remoteMCPServer(t *testing.T, api *fakeapi.Server, cfg mcpserver.Config) (string, *mcpserver.Server) {
	t.Helper()
	u, err := url.Parse(api.URL)
	require.NoError(t, err)
	srv := mcpserver.New(cfg)
	ts := httptest.NewServer(srv.HTTPHandler(mcpserver.HTTPConfig{API: httputil.NewSingleHostReverseProxy(u), DefaultProject: "ops"}))
	t.Cleanup(func() { ts.Close(); srv.Close() })
	return ts.URL, srv
}

// post2026 sends one 2026-07-28 request (SEP-2575: no session, the protocol
// version, client info and capabilities in every request's _meta) and
// returns the status and the JSON-RPC messages of the answer.
func post2026(t *testing.T, endpoint, method string, params map[string]any) (int, []map[string]any) {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = meta2026()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	req, err := http.NewRequestWithContext(t.Context(), "POST", endpoint, strings.NewReader(string(b)))
	require.NoError(t, err)
	name, _ := params["name"].(string)
	header2026(req, method, name)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	return res.StatusCode, readMessages(t, res)
}

func meta2026() map[string]any {
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "stateless-host", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
}

func header2026(req *http.Request, method, name string) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
}

// readMessages reads the JSON-RPC messages of a JSON or SSE response.
func readMessages(t *testing.T, res *http.Response) []map[string]any {
	t.Helper()
	var out []map[string]any
	eachMessage(t, res, func(m map[string]any) { out = append(out, m) })
	return out
}

// eachMessage calls f with each JSON-RPC message of a JSON or SSE response
// as it arrives.
func eachMessage(t *testing.T, res *http.Response, f func(map[string]any)) {
	t.Helper()
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(res.Body)
		var m map[string]any
		if json.Unmarshal(b, &m) == nil {
			f(m)
		} else {
			t.Logf("non-JSON answer (HTTP %d): %s", res.StatusCode, b)
		}
		return
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && data != "" {
			var m map[string]any
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				t.Errorf("an event that is not JSON: %s", data)
				return
			}
			f(m)
		}
	}
}

// TestStatelessClientIsServed: a 2026-07-28 client, which has no session
// and no initialize, lists the tool and gets its answer over one POST.
func TestStatelessClientIsServed(t *testing.T) {
	api := fakeapi.New(t, "")
	endpoint := remoteMCP(t, api)

	code, msgs := post2026(t, endpoint, "tools/list", nil)
	require.NotEmpty(t, msgs)
	last := msgs[len(msgs)-1]
	require.Equal(t, http.StatusOK, code, "tools/list of a 2026-07-28 client: %v", last)
	require.Nil(t, last["error"], "tools/list of a 2026-07-28 client")
	tools := last["result"].(map[string]any)["tools"].([]any)
	assert.Equal(t, "ask_user", tools[0].(map[string]any)["name"])
}

// callAsync2026 calls ask_user as a 2026-07-28 client over one POST; cut
// ends the POST (the host's timeout).
// Progress notifications on the call's stream go to progress.
func callAsync2026(t *testing.T, endpoint string, args map[string]any, progress ...chan<- string) (result <-chan map[string]any, cut func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan map[string]any, 1)
	go func() {
		defer close(done)
		meta := meta2026()
		meta["progressToken"] = "p1"
		params := map[string]any{"name": "ask_user", "arguments": args, "_meta": meta}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params})
		req, _ := http.NewRequestWithContext(ctx, "POST", endpoint, strings.NewReader(string(b)))
		header2026(req, "tools/call", "ask_user")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		defer res.Body.Close()
		eachMessage(t, res, func(m map[string]any) {
			switch {
			case m["id"] != nil:
				done <- m
			case m["method"] == "notifications/progress" && len(progress) > 0:
				progress[0] <- m["params"].(map[string]any)["message"].(string)
			}
		})
	}()
	return done, cancel
}

// TestStatelessAskUserBlocksAndReattaches: ask_user over one POST blocks
// until the answer; when the host cuts the POST, the question stays open
// and the same call again re-attaches to it (no session binds them).
func TestStatelessAskUserBlocksAndReattaches(t *testing.T) {
	api := fakeapi.New(t, "")
	endpoint, _ := remoteMCPServer(t, api, mcpserver.Config{ProgressEvery: 100 * time.Millisecond})

	progress := make(chan string, 100)
	res, cut := callAsync2026(t, endpoint, authArgs(), progress)
	q := api.WaitPending(t, 1)
	assert.Equal(t, "stateless-host", q.AgentID, "the agent is named after the client info of the request")
	select {
	case msg := <-progress:
		assert.Contains(t, msg, "waiting for an answer")
	case <-time.After(5 * time.Second):
		t.Fatal("no progress notification on the call's stream")
	}
	cut()
	_, open := <-res
	assert.False(t, open, "the cut call has no answer")
	time.Sleep(200 * time.Millisecond)
	assert.Equal(t, domain.StatusPending, api.Question(q.ID).Status, "the question outlives the cut POST")

	res, _ = callAsync2026(t, endpoint, authArgs())
	time.Sleep(200 * time.Millisecond)
	require.Len(t, api.Questions(), 1, "the same call re-attached instead of asking again")
	api.Answer(t, q.ID, []string{"API key"})
	m := <-res
	require.NotNil(t, m, "no answer to the re-call")
	r := m["result"].(map[string]any)
	sc := r["structuredContent"].(map[string]any)
	assert.Equal(t, "answered", sc["status"])
	assert.Equal(t, q.ID, sc["question_id"])
	assert.Equal(t, map[string]any{"Which auth method?": "API key"}, sc["answers"])
}

// TestStatelessCallOutlivesShutdown: a replica shutting down ends the
// waits of its stateless calls but withdraws nothing: the host's call again,
// on another replica, re-attaches to the question.
func TestStatelessCallOutlivesShutdown(t *testing.T) {
	api := fakeapi.New(t, "")
	endpoint, srv := remoteMCPServer(t, api, mcpserver.Config{})
	res, _ := callAsync2026(t, endpoint, authArgs())
	q := api.WaitPending(t, 1)
	srv.Close()
	select {
	case <-res:
	case <-time.After(5 * time.Second):
		t.Fatal("the call still waits after the server closed")
	}
	time.Sleep(200 * time.Millisecond)
	assert.Equal(t, domain.StatusPending, api.Question(q.ID).Status, "the question stays open for the next replica")

	other := remoteMCP(t, api)
	res, _ = callAsync2026(t, other, authArgs())
	time.Sleep(200 * time.Millisecond)
	api.Answer(t, q.ID, []string{"OAuth 2.0"})
	m := <-res
	require.NotNil(t, m)
	assert.Equal(t, q.ID, m["result"].(map[string]any)["structuredContent"].(map[string]any)["question_id"])
	assert.Len(t, api.Questions(), 1)
}

// TestStatelessRequestsDoNotFillTheLog: each 2026-07-28 request is a
// session of its own inside the SDK; the log does not say so at info level
// for every request.
func TestStatelessRequestsDoNotFillTheLog(t *testing.T) {
	api := fakeapi.New(t, "")
	var logs lockedBuffer
	endpoint, _ := remoteMCPServer(t, api, mcpserver.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for range 3 {
		code, _ := post2026(t, endpoint, "tools/list", nil)
		require.Equal(t, http.StatusOK, code)
	}
	assert.NotContains(t, logs.String(), "server session", "one request, one session: nothing to tell at info")
	assert.NotContains(t, logs.String(), "server connecting")
}
