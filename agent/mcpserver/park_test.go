package mcpserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/askbridge/askbridge/agent/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refusingParker cannot park (as over HTTP/2, or while the server drains).
type refusingParker struct{ asked atomic.Int32 }

func (p *refusingParker) ParkCall(http.ResponseWriter, *http.Request, string, string, time.Duration, mcpserver.ParkedCall) bool {
	p.asked.Add(1)
	return false
}

// refusingServer is /mcp in front of a fake API with a parker that takes
// no call, progress every 100 ms.
func refusingServer(t *testing.T) (*fakeapi.Server, *httptest.Server, *refusingParker) {
	t.Helper()
	api := fakeapi.New(t, "")
	u, err := url.Parse(api.URL)
	require.NoError(t, err)
	srv := mcpserver.New(mcpserver.Config{ProgressEvery: 100 * time.Millisecond})
	pk := &refusingParker{}
	ts := httptest.NewServer(srv.HTTPHandler(mcpserver.HTTPConfig{API: httputil.NewSingleHostReverseProxy(u), DefaultProject: "ops", Park: pk}))
	t.Cleanup(func() { ts.Close(); srv.Close() })
	return api, ts, pk
}

// TestCallThatCannotParkWaitsAsBefore: when the parker cannot take a
// blocking call, the call waits the ordinary way: what the SDK held back
// goes out, progress notifications flow, and the answer arrives.
func TestCallThatCannotParkWaitsAsBefore(t *testing.T) {
	api, ts, pk := refusingServer(t)

	progress := make(chan string, 100)
	res, _ := callAsync2026(t, ts.URL, authArgs(), progress)
	q := api.WaitPending(t, 1)
	select {
	case msg := <-progress:
		assert.Contains(t, msg, "waiting for an answer")
	case <-time.After(5 * time.Second):
		t.Fatal("no progress notification on the call's stream")
	}
	assert.EqualValues(t, 1, pk.asked.Load(), "the parker was asked to take the call")
	api.Answer(t, q.ID, []string{"API key"})
	m := <-res
	require.NotNil(t, m, "no answer")
	sc := m["result"].(map[string]any)["structuredContent"].(map[string]any)
	assert.Equal(t, "answered", sc["status"])
	assert.Equal(t, q.ID, sc["question_id"])

	// A call whose answer is known at once is not offered to the parker.
	res, _ = callAsync2026(t, ts.URL, authArgs())
	m = <-res
	require.NotNil(t, m)
	assert.Equal(t, "answered", m["result"].(map[string]any)["structuredContent"].(map[string]any)["status"])
	assert.EqualValues(t, 1, pk.asked.Load())
}

// TestSessionCallThatCannotParkWaitsAsBefore: the same for a 2025-11-25
// session's call: refused by the parker, it waits the ordinary way, its
// progress on its stream, and gets its answer.
func TestSessionCallThatCannotParkWaitsAsBefore(t *testing.T) {
	api, ts, pk := refusingServer(t)

	progress := make(chan string, 100)
	c := mcp.NewClient(&mcp.Implementation{Name: "session-host", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			progress <- r.Params.Message
		}})
	s, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	res := make(chan *mcp.CallToolResult, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "ask_user", Arguments: authArgs()}
		params.SetProgressToken("tok")
		r, err := s.CallTool(t.Context(), params)
		assert.NoError(t, err)
		res <- r
	}()
	q := api.WaitPending(t, 1)
	select {
	case msg := <-progress:
		assert.Contains(t, msg, "waiting for an answer")
	case <-time.After(5 * time.Second):
		t.Fatal("no progress notification on the call's stream")
	}
	assert.EqualValues(t, 1, pk.asked.Load(), "the parker was asked to take the call")
	api.Answer(t, q.ID, []string{"API key"})
	select {
	case r := <-res:
		require.NotNil(t, r)
		assert.Equal(t, "answered", r.StructuredContent.(map[string]any)["status"])
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
}
