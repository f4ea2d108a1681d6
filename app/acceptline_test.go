package app_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/app"
	"github.com/stretchr/testify/require"
)

// TestTheBridgeTakesABurstOfConnectionsAFewAtATime: the accept line is in
// place (Settings.AcceptAtOnce places): connections whose requests are
// answered, and event streams, give their places back at once, so no
// new connection waits for them; connections that never send a request
// hold every place, yet a request on a new connection is answered once
// the line's hold has run out, and the wait is counted in /metrics.
func TestTheBridgeTakesABurstOfConnectionsAFewAtATime(t *testing.T) {
	const places = 8
	b := newOpsBridge(t, func(s *app.Settings) { s.AcceptAtOnce = places })
	addr := strings.TrimPrefix(b.url, "http://")
	waits := func() int {
		t.Helper()
		m := regexp.MustCompile(`(?m)^askbridge_accept_waits_total (\d+)$`).FindSubmatch(b.scrape())
		require.NotNil(t, m, "askbridge_accept_waits_total is served")
		n, _ := strconv.Atoi(string(m[1]))
		return n
	}
	open := func(path string) (net.Conn, *http.Response) {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", path, addr)
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err, "GET %s answered", path)
		return c, res
	}
	before := waits()
	for range 3 * places {
		c, res := open("/healthz")
		require.Equal(t, http.StatusOK, res.StatusCode)
		c.Close()
	}
	for range 3 * places {
		_, res := open("/api/projects/ops/events")
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	}
	require.Equal(t, before, waits(), "no new connection waited for answered ones or for streams")

	for range places + 2 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
	}
	time.Sleep(100 * time.Millisecond) // accepted, and silent
	t0 := time.Now()
	c, res := open("/healthz")
	c.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Less(t, time.Since(t0), 3*time.Second, "answered once the silent connections' places ran out")
	require.Greater(t, waits(), before, "the wait is counted")
}
