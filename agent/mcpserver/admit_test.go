package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/askbridge/askbridge/agent/mcpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// holdingParker parks every call and never answers it.
type holdingParker struct{ parked atomic.Int32 }

func (p *holdingParker) ParkCall(w http.ResponseWriter, _ *http.Request, _, _ string, _ time.Duration, _ mcpserver.ParkedCall) bool {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return false
	}
	p.parked.Add(1)
	go func() { time.Sleep(time.Minute); conn.Close() }()
	return true
}

// asksAtOnce is a fake API whose asks take a while, counting the most
// under way at once.
type asksAtOnce struct {
	next      http.Handler
	now, most atomic.Int32
}

func (a *asksAtOnce) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/agent-questions") {
		n := a.now.Add(1)
		defer a.now.Add(-1)
		for m := a.most.Load(); n > m && !a.most.CompareAndSwap(m, n); m = a.most.Load() {
		}
		time.Sleep(30 * time.Millisecond)
	}
	a.next.ServeHTTP(w, r)
}

// postCalls sends n blocking 2026-07-28 ask_user calls at once, each a
// question of its own, not reading their responses.
func postCalls(t *testing.T, endpoint string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			args := authArgs()
			args["questions"].([]any)[0].(map[string]any)["question"] = "Which auth method for service " + string(rune('A'+i)) + "?"
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
				"params": map[string]any{"name": "ask_user", "arguments": args, "_meta": meta2026()}})
			req, _ := http.NewRequestWithContext(t.Context(), "POST", endpoint, strings.NewReader(string(b)))
			header2026(req, "tools/call", "ask_user")
			go func() {
				if res, err := http.DefaultClient.Do(req); err == nil {
					res.Body.Close()
				}
			}()
		})
	}
	wg.Wait()
}

// TestBurstOfCallsIsAskedAFewAtATime: a burst of blocking calls is asked
// AskAtOnce at a time (each call's place is given back once it is
// parked), and every call of the burst is asked and parked.
func TestBurstOfCallsIsAskedAFewAtATime(t *testing.T) {
	api := fakeapi.New(t, "")
	u, err := url.Parse(api.URL)
	require.NoError(t, err)
	counting := &asksAtOnce{next: httputil.NewSingleHostReverseProxy(u)}
	srv := mcpserver.New(mcpserver.Config{AskAtOnce: 2})
	pk := &holdingParker{}
	ts := httptest.NewServer(srv.Admit(srv.HTTPHandler(mcpserver.HTTPConfig{API: counting, DefaultProject: "ops", Park: pk})))
	t.Cleanup(func() { ts.Close(); srv.Close() })

	postCalls(t, ts.URL, 8)
	api.WaitPending(t, 8)
	require.Eventually(t, func() bool { return pk.parked.Load() == 8 }, 10*time.Second, 10*time.Millisecond,
		"%d of 8 calls parked", pk.parked.Load())
	assert.LessOrEqual(t, counting.most.Load(), int32(2), "asks under way at once, with AskAtOnce 2")
}

// TestCallsWaitingTheOrdinaryWayGiveBackTheirPlace: a call the parker
// cannot take waits in its goroutine; it gives its place back first, so
// calls beyond AskAtOnce are asked too, and all get their answers.
func TestCallsWaitingTheOrdinaryWayGiveBackTheirPlace(t *testing.T) {
	api := fakeapi.New(t, "")
	u, err := url.Parse(api.URL)
	require.NoError(t, err)
	srv := mcpserver.New(mcpserver.Config{AskAtOnce: 2, ProgressEvery: time.Hour})
	pk := &refusingParker{}
	ts := httptest.NewServer(srv.Admit(srv.HTTPHandler(mcpserver.HTTPConfig{API: httputil.NewSingleHostReverseProxy(u), DefaultProject: "ops", Park: pk})))
	t.Cleanup(func() { ts.Close(); srv.Close() })

	var results []<-chan map[string]any
	for i := range 5 {
		args := authArgs()
		args["questions"].([]any)[0].(map[string]any)["question"] = "Which auth method for service " + string(rune('A'+i)) + "?"
		res, _ := callAsync2026(t, ts.URL, args)
		results = append(results, res)
	}
	api.WaitPending(t, 5) // with the places held while waiting, 2 only
	for _, q := range api.Questions() {
		api.Answer(t, q.ID, []string{"API key"})
	}
	for _, res := range results {
		select {
		case m := <-res:
			require.NotNil(t, m, "no answer")
			assert.Equal(t, "answered", m["result"].(map[string]any)["structuredContent"].(map[string]any)["status"])
		case <-time.After(10 * time.Second):
			t.Fatal("a call got no answer")
		}
	}
}
