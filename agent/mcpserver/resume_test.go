package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cutter is a proxy that drops the connection of the first tools/call
// stream right after its first event (or after a second without one): the
// network failing while a call waits. Every other request passes through.
type cutter struct {
	backend *url.URL
	proxy   *httputil.ReverseProxy
	cut     chan string // the first event's lines, once cut
	resumed atomic.Int32
	done    atomic.Bool
	// swallow: the bridge's side of the cut stream stays open and what it
	// writes there is read and dropped (a middlebox that lost the
	// connection to the host), so the bridge cannot tell the host is gone.
	swallow context.Context
}

func newCutter(t *testing.T, backend string) *cutter {
	u, err := url.Parse(backend)
	require.NoError(t, err)
	p := httputil.NewSingleHostReverseProxy(u)
	p.FlushInterval = -1
	return &cutter{backend: u, proxy: p, cut: make(chan string, 1)}
}

func (c *cutter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
		c.resumed.Add(1)
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if r.Method != http.MethodPost || !bytes.Contains(body, []byte(`"tools/call"`)) || c.done.Swap(true) {
		c.proxy.ServeHTTP(w, r)
		return
	}
	type head struct {
		res   *http.Response
		event string
	}
	first := make(chan head, 1)
	ctx := r.Context()
	if c.swallow != nil {
		ctx = c.swallow
	}
	go func() {
		out, _ := http.NewRequestWithContext(ctx, "POST", c.backend.String()+r.URL.RequestURI(), bytes.NewReader(body))
		out.Header = r.Header.Clone()
		res, err := http.DefaultClient.Do(out)
		if err != nil {
			return
		}
		var ev strings.Builder
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() && sc.Text() != "" {
			ev.WriteString(sc.Text() + "\n")
		}
		first <- head{res, ev.String()}
	}()
	var ev string
	select {
	case h := <-first:
		if c.swallow != nil {
			go func() { _, _ = io.Copy(io.Discard, h.res.Body) }()
		} else {
			defer h.res.Body.Close()
		}
		for k, v := range h.res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(h.res.StatusCode)
		ev = h.event
		_, _ = io.WriteString(w, ev+"\n")
		_ = http.NewResponseController(w).Flush()
	case <-time.After(time.Second): // nothing sent yet: no event to resume from
	}
	c.cut <- ev
	panic(http.ErrAbortHandler) // drop the connection mid-stream
}

// TestTypeScriptClientResumesACutStream: a 2025-11-25 host (the official
// TypeScript SDK) whose connection drops while ask_user waits resumes the
// stream with Last-Event-ID and gets the answer given meanwhile.
func TestTypeScriptClientResumesACutStream(t *testing.T) {
	tsSDK(t)
	api := fakeapi.New(t, "")
	c := newCutter(t, remoteMCP(t, api))
	proxy := httptest.NewServer(c)
	t.Cleanup(proxy.Close)

	wait := runTS(t, map[string]any{"transport": "http", "url": proxy.URL, "callTimeout": 15000})
	var first string
	select {
	case first = <-c.cut:
	case <-time.After(15 * time.Second):
		t.Fatal("no tools/call stream to cut")
	}
	t.Logf("first event of the call's stream, then the connection dropped:\n%s", first)
	assert.Regexp(t, `(?m)^id: \S+$`, first, "the stream opens with a priming event with an id")
	assert.Regexp(t, `(?m)^retry: \d+$`, first, "the priming event says when to reconnect")

	q := api.WaitPending(t, 1)
	api.Answer(t, q.ID, []string{"OAuth 2.0"}) // answered while the host is disconnected
	out := wait()
	assert.Equal(t, "answered", out.Result.StructuredContent["status"])
	assert.Equal(t, map[string]any{"Which auth method?": "OAuth 2.0"}, out.Result.StructuredContent["answers"])
	assert.Positive(t, c.resumed.Load(), "the answer came through the resumed stream (GET with Last-Event-ID)")
	assert.Len(t, api.Questions(), 1, "asked once")
}

// TestTypeScriptClientResumesAParkedCall: the same against the bridge,
// which parks the session's waiting call: the resumed stream is parked in
// its place and gets the answer given while the host was disconnected.
func TestTypeScriptClientResumesAParkedCall(t *testing.T) {
	resumeParkedCall(t, false)
}

// TestTypeScriptClientGetsAnAnswerWrittenToALostStream: the host's
// connection is lost somewhere the bridge cannot see (its side stays open),
// the answer is written there and goes nowhere; the host resuming the
// stream with Last-Event-ID still gets it.
func TestTypeScriptClientGetsAnAnswerWrittenToALostStream(t *testing.T) {
	resumeParkedCall(t, true)
}

// resumeParkedCall cuts a TypeScript host's parked call (swallow: the
// bridge's side left open), answers it meanwhile, and checks the host got
// the answer through its resumed stream.
func resumeParkedCall(t *testing.T, swallow bool) {
	if testing.Short() {
		t.Skip("builds and runs the bridge binary")
	}
	tsSDK(t)
	srv := bridgetest.Serve(t)
	bc := client.New(srv.URL, "", "default")
	c := newCutter(t, srv.URL)
	if swallow {
		c.swallow = t.Context()
	}
	proxy := httptest.NewServer(c)
	t.Cleanup(proxy.Close)

	wait := runTS(t, map[string]any{"transport": "http", "url": proxy.URL + "/mcp", "callTimeout": 15000})
	select {
	case first := <-c.cut:
		assert.Regexp(t, `(?m)^id: \S+$`, first, "the stream opens with a priming event with an id")
	case <-time.After(15 * time.Second):
		t.Fatal("no tools/call stream to cut")
	}
	q := pendingOn(t, bc, 1)
	_, err := bc.RespondText(t.Context(), q.ID, "OAuth 2.0") // answered while the host is disconnected
	require.NoError(t, err)
	out := wait()
	assert.Equal(t, "answered", out.Result.StructuredContent["status"])
	assert.Equal(t, map[string]any{"Which auth method?": "OAuth 2.0"}, out.Result.StructuredContent["answers"])
	assert.Positive(t, c.resumed.Load(), "the answer came through the resumed stream (GET with Last-Event-ID)")
}
