package mcpserver_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/askbridge/askbridge/agent/mcpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refusingParker cannot park (as over HTTP/2, or while the server drains).
type refusingParker struct{ asked atomic.Int32 }

func (p *refusingParker) ParkCall(http.ResponseWriter, *http.Request, string, string, time.Duration, mcpserver.ParkedCall) bool {
	p.asked.Add(1)
	return false
}

// TestCallThatCannotParkWaitsAsBefore: when the parker cannot take a
// blocking call, the call waits the ordinary way: what the SDK held back
// goes out, progress notifications flow, and the answer arrives.
func TestCallThatCannotParkWaitsAsBefore(t *testing.T) {
	api := fakeapi.New(t, "")
	u, err := url.Parse(api.URL)
	require.NoError(t, err)
	srv := mcpserver.New(mcpserver.Config{ProgressEvery: 100 * time.Millisecond})
	pk := &refusingParker{}
	ts := httptest.NewServer(srv.HTTPHandler(mcpserver.HTTPConfig{API: httputil.NewSingleHostReverseProxy(u), DefaultProject: "ops", Park: pk}))
	t.Cleanup(func() { ts.Close(); srv.Close() })

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
