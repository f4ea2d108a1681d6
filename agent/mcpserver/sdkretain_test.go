package mcpserver_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/askbridge/askbridge/agent/mcpserver"
	"github.com/stretchr/testify/require"
)

// TestASessionKeepsNoRequestItHandled: once a 2025-11-25 session has
// answered a request, nothing of that request stays alive with the
// session. The SDK as published kept the last request each session handled
// (its handler queue's array), with its params and every header of its
// POST: ~1.4 KB per open session, for as long as the session lives, which
// for a session whose ask_user call is parked is the whole wait
// (third_party/go-sdk/PATCHES.md).
func TestASessionKeepsNoRequestItHandled(t *testing.T) {
	var mu sync.Mutex
	var probes []weak.Pointer[string] // the header values of each probed POST
	_, post := sessionsServer(t, func(r *http.Request) {
		if v := r.Header.Values("X-Probe"); len(v) > 0 {
			mu.Lock()
			probes = append(probes, weak.Make(&v[0]))
			mu.Unlock()
		}
	})
	var sessions []string
	for range 3 {
		sessions = append(sessions, openSession(t, post)) // left open
	}

	for range 3 {
		runtime.GC()
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, probes, 9)
	live := 0
	for _, p := range probes {
		if p.Value() != nil {
			live++
		}
	}
	require.Zero(t, live, "of %d requests the %d open sessions answered, %d are still in memory", len(probes), len(sessions), live)
}

// TestAnIdleSessionRunsNoGoroutine: a 2025-11-25 session between requests
// (its ask_user call parked, say) costs no goroutine. The SDK as published
// read each session's messages in a goroutine of its own, ~3 KB of stack
// and runtime state per session for its whole life (PATCHES.md); here the
// POST that brings a message hands it over. The sessions still work after
// (a tools/list on each) and end (DELETE) as before.
func TestAnIdleSessionRunsNoGoroutine(t *testing.T) {
	ts, post := sessionsServer(t, nil)
	openSession(t, post) // what the first session starts once for all
	settle := func() int {
		n := runtime.NumGoroutine()
		for range 50 {
			time.Sleep(20 * time.Millisecond)
			if m := runtime.NumGoroutine(); m == n {
				return n
			} else {
				n = m
			}
		}
		return n
	}
	before := settle()
	const n = 40
	var sessions []string
	for range n {
		sessions = append(sessions, openSession(t, post))
	}
	after := settle()
	t.Logf("%d idle sessions: %d goroutines more", n, after-before)
	require.Less(t, after-before, n/4, "goroutines: %d with no session open, %d with %d idle sessions", before, after, n)

	for _, id := range sessions {
		_, got := post(id, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
		require.Contains(t, got, `"ask_user"`)
		req, err := http.NewRequestWithContext(t.Context(), "DELETE", ts.URL, nil)
		require.NoError(t, err)
		req.Header.Set("Mcp-Session-Id", id)
		res, err := noKeepAlive.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusNoContent, res.StatusCode)
		code, _ := postStatus(t, ts.URL, id, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
		require.Equal(t, http.StatusNotFound, code, "a deleted session still answers")
	}
}

// noKeepAlive opens a connection per request, so no idle connection's
// goroutine counts as a session's.
var noKeepAlive = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// sessionsServer serves /mcp with sessions in front of a fake API; see, if
// set, sees each request first. post sends a JSON-RPC body in a session
// ("" opens one) and returns the session id the answer names and its body.
func sessionsServer(t *testing.T, see func(*http.Request)) (*httptest.Server, func(session, body string) (string, string)) {
	_, _, ts, post := sessionsServerWith(t, see, 0)
	return ts, post
}

// sessionsServerWith is sessionsServer with sessions idling out after
// timeout (0: the default), its fake API and its MCP server.
func sessionsServerWith(t *testing.T, see func(*http.Request), timeout time.Duration) (*fakeapi.Server, *mcpserver.Server, *httptest.Server, func(session, body string) (string, string)) {
	t.Helper()
	api := fakeapi.New(t, "")
	u, err := url.Parse(api.URL)
	require.NoError(t, err)
	srv := mcpserver.New(mcpserver.Config{})
	h := srv.HTTPHandler(mcpserver.HTTPConfig{API: httputil.NewSingleHostReverseProxy(u), DefaultProject: "ops", SessionTimeout: timeout})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if see != nil {
			see(r)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { ts.Close(); srv.Close() })
	return api, srv, ts, func(session, body string) (string, string) {
		t.Helper()
		res := postRaw(t, ts.URL, session, body)
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		require.Less(t, res.StatusCode, 300, "%s", got)
		return res.Header.Get("Mcp-Session-Id"), string(got)
	}
}

// openSession opens a 2025-11-25 session (initialize, initialized) and
// lists its tools once.
func openSession(t *testing.T, post func(session, body string) (string, string)) string {
	t.Helper()
	id, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`)
	require.NotEmpty(t, id)
	post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	_, got := post(id, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	require.Contains(t, got, `"ask_user"`)
	return id
}

func postStatus(t *testing.T, endpoint, session, body string) (int, string) {
	t.Helper()
	res := postRaw(t, endpoint, session, body)
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res.StatusCode, string(got)
}

func postRaw(t *testing.T, endpoint, session, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", endpoint, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Probe", "a header of the request")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	res, err := noKeepAlive.Do(req)
	require.NoError(t, err)
	return res
}

// TestASessionHasNoStandaloneStream: a session's GET without Last-Event-ID
// (the standalone stream a TypeScript SDK host asks for once initialized)
// is answered 405 at once, as the transport allows, rather than held open
// for the session's life with nothing ever sent on it (a connection, two
// goroutines and ~40 KB a session, measured). The session goes on working.
func TestASessionHasNoStandaloneStream(t *testing.T) {
	ts, post := sessionsServer(t, nil)
	id := openSession(t, post)
	for _, session := range []string{id, ""} {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second) // a stream held open fails here
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, "GET", ts.URL, nil)
		require.NoError(t, err)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		res, err := noKeepAlive.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		require.Equal(t, http.StatusMethodNotAllowed, res.StatusCode, "%s", body)
		require.Equal(t, "POST, DELETE", res.Header.Get("Allow"))
		require.Contains(t, string(body), "no standalone stream")
	}
	_, got := post(id, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
	require.Contains(t, got, `"ask_user"`)
}
