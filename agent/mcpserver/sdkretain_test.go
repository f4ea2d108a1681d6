package mcpserver_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
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
	api := fakeapi.New(t, "")
	u, err := url.Parse(api.URL)
	require.NoError(t, err)
	srv := mcpserver.New(mcpserver.Config{})
	h := srv.HTTPHandler(mcpserver.HTTPConfig{API: httputil.NewSingleHostReverseProxy(u), DefaultProject: "ops"})
	var mu sync.Mutex
	var probes []weak.Pointer[string] // the header values of each probed POST
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Values("X-Probe"); len(v) > 0 {
			mu.Lock()
			probes = append(probes, weak.Make(&v[0]))
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { ts.Close(); srv.Close() })

	post := func(session, body string) (string, string) {
		req, err := http.NewRequestWithContext(t.Context(), "POST", ts.URL, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("X-Probe", "a header of the request")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		require.Less(t, res.StatusCode, 300, "%s", got)
		return res.Header.Get("Mcp-Session-Id"), string(got)
	}
	var sessions []string
	for range 3 {
		id, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`)
		require.NotEmpty(t, id)
		post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		_, got := post(id, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		require.Contains(t, got, `"ask_user"`)
		sessions = append(sessions, id) // left open
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
