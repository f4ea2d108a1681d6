package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/store/storetest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// roundRobin sends each request to the next backend in turn, with no
// affinity of any kind, and records where each tools/call went and whether
// any answer named a session. Calls of tools take turns among themselves, so
// two calls in a row reach two replicas whatever the client sends between
// them (the SDK's cancellation notice of a cut call arrives when it will).
type roundRobin struct {
	backends []*url.URL
	n        atomic.Int64
	nc       atomic.Int64
	mu       sync.Mutex
	calls    []int // backend of each tools/call
	sessions int   // answers with an Mcp-Session-Id
}

// next is the backend the next request other than a tools/call goes to.
func (rr *roundRobin) next() int { return int(rr.n.Load() % int64(len(rr.backends))) }

func (rr *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := int(rr.n.Add(1)-1) % len(rr.backends)
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if bytes.Contains(body, []byte(`"tools/call"`)) {
		i = int(rr.nc.Add(1)-1) % len(rr.backends)
		rr.mu.Lock()
		rr.calls = append(rr.calls, i)
		rr.mu.Unlock()
	}
	p := httputil.NewSingleHostReverseProxy(rr.backends[i])
	p.FlushInterval = -1
	p.ModifyResponse = func(res *http.Response) error {
		if res.Header.Get("Mcp-Session-Id") != "" {
			rr.mu.Lock()
			rr.sessions++
			rr.mu.Unlock()
		}
		return nil
	}
	p.ServeHTTP(w, r)
}

// TestRemoteMCPStatelessAcrossReplicas: two replicas on one Redis behind a
// round-robin proxy without affinity. A 2026-07-28 host's ask_user call is
// cut by the host's timeout on one replica; the same call again, served by
// the other replica, re-attaches to the question and returns its answer.
// A task created on one replica is polled on both. A 2025-11-25 host, whose session lives in one replica, needs affinity.
func TestRemoteMCPStatelessAcrossReplicas(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "bridge.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`agents:
  - {id: deploy-bot, project: ops, token: agent-secret, tools: [ask_user]}
operators:
  - {id: alice, projects: [ops], token: op-secret}
`), 0o600))
	redis := storetest.Redis(t)
	a := startBridge(t, "REDIS_URL="+redis.URL, "BRIDGE_CONFIG="+cfg)
	b := startBridge(t, "REDIS_URL="+redis.URL, "BRIDGE_CONFIG="+cfg)
	rr := &roundRobin{}
	for _, p := range []*proc{a, b} {
		u, err := url.Parse(p.URL)
		require.NoError(t, err)
		rr.backends = append(rr.backends, u)
	}
	lb := httptest.NewServer(rr)
	t.Cleanup(lb.Close)

	s := mcpConnect(t, lb.URL+"/mcp", "agent-secret")
	assert.Equal(t, "2026-07-28", s.InitializeResult().ProtocolVersion)
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "ask_user", Arguments: askArgs("Which auth method?")})
	cancel()
	require.Error(t, err, "the host's timeout cuts the call")
	q := pending(t, a.URL, "ops", "agent-secret", 1)[0]
	assert.Equal(t, "deploy-bot", q["agent_id"], "asked as the token's agent")

	// The same call again, on the other replica.
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		r, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: askArgs("Which auth method?")})
		assert.NoError(t, err)
		done <- r
	}()
	time.Sleep(500 * time.Millisecond)
	code, _ := authed(t, "POST", a.URL+"/api/projects/ops/agent-questions/"+q["id"].(string)+"/respond", "op-secret", map[string]any{"response": "OAuth 2.0"})
	require.Equal(t, http.StatusAccepted, code)
	select {
	case r := <-done:
		require.NotNil(t, r)
		assert.Contains(t, firstText(r), `"Which auth method?"="OAuth 2.0"`)
		assert.Equal(t, q["id"], r.StructuredContent.(map[string]any)["question_id"], "re-attached to the same question")
	case <-time.After(15 * time.Second):
		t.Fatal("the call on the other replica did not re-attach")
	}
	rr.mu.Lock()
	assert.Equal(t, []int{rr.calls[0], 1 - rr.calls[0]}, rr.calls, "the two calls were served by different replicas")
	assert.Zero(t, rr.sessions, "no session for the proxy to be affine to")
	rr.mu.Unlock()
	_, all := authed(t, "GET", b.URL+"/api/projects/ops/agent-questions", "agent-secret", nil)
	assert.Len(t, all["questions"], 1, "asked once across both replicas")

	// A 2026-07-28 host with the tasks extension: the task created on one
	// replica is polled on the other and ends with the answer.
	tc := &taskClient{t: t, url: lb.URL + "/mcp", token: "agent-secret", stateless: true,
		caps: map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}
	created := tc.askTask("Which region?")
	id := created["taskId"].(string)
	code, _ = authed(t, "POST", b.URL+"/api/projects/ops/agent-questions/"+id+"/respond", "op-secret", map[string]any{"response": "OAuth 2.0"})
	require.Equal(t, http.StatusAccepted, code)
	for range 2 { // one poll on each replica (the proxy alternates)
		got, rerr := tc.get(id)
		require.Nil(t, rerr)
		assert.Equal(t, "completed", got["status"])
	}

	// An older host's session lives in one replica: without affinity its
	// next request reaches the other replica, which does not know it.
	old := mcp.NewClient(&mcp.Implementation{Name: "old-host", Version: "1"}, nil)
	olds, err := old.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: lb.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{"agent-secret"}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err == nil {
		_, err = olds.ListTools(t.Context(), nil)
		_ = olds.Close()
	}
	assert.Error(t, err, "a 2025-11-25 session needs affinity on Mcp-Session-Id")
}
