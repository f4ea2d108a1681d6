package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goroutines reads the bridge's go_goroutines from /metrics.
func goroutines(t *testing.T, base string) int {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "go_goroutines "); ok {
			var n int
			_, err := fmt.Sscan(v, &n)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("no go_goroutines in /metrics")
	return 0
}

// pendingIDs lists the pending questions of project ops, as an operator.
func pendingIDs(t *testing.T, base string) []string {
	t.Helper()
	code, page := authed(t, "GET", base+"/api/projects/ops/agent-questions?status=pending&limit=500", "op-secret", nil)
	require.Equal(t, http.StatusOK, code, "%v", page)
	var ids []string
	items, _ := page["questions"].([]any)
	for _, it := range items {
		ids = append(ids, it.(map[string]any)["id"].(string))
	}
	return ids
}

// statelessCall is a 2026-07-28 blocking ask_user call: its result, or the
// error ending it.
type statelessCall struct {
	res  map[string]any
	rerr *rpcError
	err  error
}

func callStateless(ctx context.Context, t *testing.T, url, question string) <-chan statelessCall {
	out := make(chan statelessCall, 1)
	go func() {
		c := &taskClient{t: t, url: url, token: "agent-secret", stateless: true, caps: map[string]any{}}
		res, rerr, err := c.call(ctx, "tools/call", map[string]any{"name": "ask_user", "arguments": askArgs(question)})
		out <- statelessCall{res, rerr, err}
	}()
	return out
}

// TestMCPStatelessCallsWaitParked: a 2026-07-28 host's blocking ask_user
// calls wait as long-polls do, without goroutines of their own in the
// bridge, and each gets its own answer as the JSON-RPC result of its call.
// Before: 4.0 goroutines per waiting call (go_goroutines 15 → 215 for 50
// calls) and ~170 KB of RSS each.
func TestMCPStatelessCallsWaitParked(t *testing.T) {
	b := startBridge(t, "BRIDGE_CONFIG="+tasksConfig(t))
	base := goroutines(t, b.URL)
	const n = 50
	calls := make([]<-chan statelessCall, n)
	for i := range n {
		calls[i] = callStateless(t.Context(), t, b.URL+"/mcp", fmt.Sprintf("Deploy build %d?", i))
	}
	require.Eventually(t, func() bool { return len(pendingIDs(t, b.URL)) == n }, 10*time.Second, 50*time.Millisecond)
	time.Sleep(200 * time.Millisecond) // each call parked after its ask
	grew := goroutines(t, b.URL) - base
	assert.Less(t, grew, n/2, "goroutines added by %d waiting calls: %d", n, grew)

	// Each question answered: its own call gets its own answer.
	for _, id := range pendingIDs(t, b.URL) {
		_, q := authed(t, "GET", b.URL+"/api/projects/ops/agent-questions/"+id, "op-secret", nil)
		text := q["questions"].([]any)[0].(map[string]any)["question"].(string)
		code, _ := authed(t, "POST", b.URL+"/api/projects/ops/agent-questions/"+id+"/respond", "op-secret",
			map[string]any{"response": "answer to " + text})
		require.Equal(t, http.StatusAccepted, code)
	}
	for i, ch := range calls {
		var got statelessCall
		select {
		case got = <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("call %d got no answer", i)
		}
		require.NoError(t, got.err, "call %d", i)
		require.Nil(t, got.rerr, "call %d", i)
		q := fmt.Sprintf("Deploy build %d?", i)
		assert.NotEqual(t, true, got.res["isError"])
		text := got.res["content"].([]any)[0].(map[string]any)["text"]
		assert.Equal(t, fmt.Sprintf(`User has answered your questions: %q=%q. You can now continue with the user's answers in mind.`, q, "answer to "+q), text)
		sc := got.res["structuredContent"].(map[string]any)
		assert.Equal(t, "answered", sc["status"])
		assert.Equal(t, "answer to "+q, sc["answers"].(map[string]any)[q])
	}
	assert.Empty(t, pendingIDs(t, b.URL))
}

// TestMCPParkedCallEnds: a parked call whose host hangs up leaves its
// question open, and the same call again re-attaches and gets the answer;
// a question dismissed ends its call with the no-answer result; a bridge
// shutting down answers a parked call that the question is still open.
func TestMCPParkedCallEnds(t *testing.T) {
	b := startBridge(t, "BRIDGE_CONFIG="+tasksConfig(t))
	url := b.URL + "/mcp"

	// The host gives up; the question stays; the same call re-attaches.
	ctx, cancel := context.WithCancel(t.Context())
	first := callStateless(ctx, t, url, "Which auth method?")
	require.Eventually(t, func() bool { return len(pendingIDs(t, b.URL)) == 1 }, 10*time.Second, 20*time.Millisecond)
	id := pendingIDs(t, b.URL)[0]
	cancel()
	require.Error(t, (<-first).err)
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, []string{id}, pendingIDs(t, b.URL), "the question stays open when the host hangs up")
	again := callStateless(t.Context(), t, url, "Which auth method?")
	time.Sleep(300 * time.Millisecond)
	code, _ := authed(t, "POST", b.URL+"/api/projects/ops/agent-questions/"+id+"/respond", "op-secret", map[string]any{"response": "API key"})
	require.Equal(t, http.StatusAccepted, code)
	got := <-again
	require.NoError(t, got.err)
	assert.Equal(t, id, got.res["structuredContent"].(map[string]any)["question_id"], "re-attached to the same question")
	assert.Equal(t, "answered", got.res["structuredContent"].(map[string]any)["status"])

	// Dismissed: the no-answer result, so the model continues.
	dismissed := callStateless(t.Context(), t, url, "Rotate the keys?")
	require.Eventually(t, func() bool { return len(pendingIDs(t, b.URL)) == 1 }, 10*time.Second, 20*time.Millisecond)
	id = pendingIDs(t, b.URL)[0]
	code, _ = authed(t, "POST", b.URL+"/api/projects/ops/agent-questions/"+id+"/cancel", "op-secret", map[string]any{"reason": "user"})
	require.Equal(t, http.StatusOK, code)
	got = <-dismissed
	require.NoError(t, got.err)
	assert.Equal(t, true, got.res["isError"])
	assert.Contains(t, got.res["content"].([]any)[0].(map[string]any)["text"], "dismissed the question without answering")

	// Shutdown: the call is told the question is still open.
	var wg sync.WaitGroup
	open := callStateless(t.Context(), t, url, "Drop the cache?")
	require.Eventually(t, func() bool { return len(pendingIDs(t, b.URL)) == 1 }, 10*time.Second, 20*time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	wg.Add(1)
	go func() { defer wg.Done(); b.stop() }()
	select {
	case got = <-open:
	case <-time.After(15 * time.Second):
		t.Fatal("the parked call got nothing when the bridge stopped")
	}
	wg.Wait()
	require.NoError(t, got.err)
	assert.Equal(t, "pending", got.res["structuredContent"].(map[string]any)["status"])
	assert.Contains(t, got.res["content"].([]any)[0].(map[string]any)["text"], "The question is still open; you may call ask_user again")
}
