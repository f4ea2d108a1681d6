package mcpserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"

	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/askbridge/askbridge/agent/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	agentTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	agentParent = "00-" + agentTrace + "-00f067aa0ba902b7-01"
)

// askOf returns the create request the fake API received.
func askOf(t *testing.T, api *fakeapi.Server) fakeapi.Request {
	t.Helper()
	for _, r := range api.Requests() {
		if r.Method == http.MethodPost && r.Path == "/api/projects/ops/agent-questions" {
			return r
		}
	}
	t.Fatal("no ask reached the API")
	return fakeapi.Request{}
}

// TestStdioAskCarriesTRACEPARENT: `askbridge mcp` started with the agent
// run's TRACEPARENT and TRACESTATE sends them on its ask, so the question
// joins the run's trace; a malformed TRACEPARENT is not sent.
func TestStdioAskCarriesTRACEPARENT(t *testing.T) {
	for _, c := range []struct{ env, want, state string }{
		{agentParent, agentParent, "vendor=1"},
		{"00-zz-00f067aa0ba902b7-01", "", ""},
	} {
		api := fakeapi.New(t, "")
		_, s, _, _ := startMCP(t, api, "TRACEPARENT="+c.env, "TRACESTATE=vendor=1")
		done := callAsync(s, authArgs())
		q := api.WaitPending(t, 1)
		api.Answer(t, q.ID, []string{"API key"})
		require.NoError(t, <-done)
		ask := askOf(t, api)
		assert.Equal(t, c.want, ask.Traceparent, "TRACEPARENT=%s", c.env)
		assert.Equal(t, c.state, ask.Tracestate)
	}
}

// TestRemoteAskJoinsTheRequestsTrace: over Streamable HTTP (/mcp) the ask
// carries the traceparent of the /mcp request that made the tool call.
func TestRemoteAskJoinsTheRequestsTrace(t *testing.T) {
	api := fakeapi.New(t, "")
	u, err := url.Parse(api.URL)
	require.NoError(t, err)
	srv := mcpserver.New(mcpserver.Config{})
	ts := httptest.NewServer(srv.HTTPHandler(mcpserver.HTTPConfig{API: httputil.NewSingleHostReverseProxy(u), DefaultProject: "ops"}))
	t.Cleanup(ts.Close)
	hc := &http.Client{Transport: traced{http.DefaultTransport}}
	c := mcp.NewClient(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	s, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask_user",
			Arguments: authArgs()})
		done <- err
	}()
	q := api.WaitPending(t, 1)
	api.Answer(t, q.ID, []string{"API key"})
	require.NoError(t, <-done)
	ask := askOf(t, api)
	assert.Equal(t, agentParent, ask.Traceparent)
	assert.Equal(t, "vendor=2", ask.Tracestate)
}

// traced sends the agent's trace context on every /mcp request.
type traced struct{ rt http.RoundTripper }

func (t traced) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("traceparent", agentParent)
	r.Header.Set("tracestate", "vendor=2")
	return t.rt.RoundTrip(r)
}
