package app_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/app"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParkedWaitsCountAgainstTheAddressLimit: a parked long-poll holds
// its socket outside Go's net.Conn, yet it still holds one of its
// address's connections until the wait ends — by the client hanging up,
// an answer, or its deadline — and gives it back then.
func TestParkedWaitsCountAgainstTheAddressLimit(t *testing.T) {
	b := newOpsBridge(t, func(s *app.Settings) { s.ConnsPerIP = 3 })
	addr := strings.TrimPrefix(b.url, "http://")
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	ask := func(run string) string {
		body, _ := json.Marshal(map[string]any{"run_id": run, "questions": []map[string]any{{"question": "Ship?",
			"options": []map[string]any{{"label": "Yes"}, {"label": "No"}}}}})
		res, err := c.Post(b.url+"/api/projects/ops/agent-questions", "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, http.StatusCreated, res.StatusCode)
		var q struct{ ID string }
		require.NoError(t, json.NewDecoder(res.Body).Decode(&q))
		return q.ID
	}
	// park opens a long-poll and returns its connection once it waits.
	// The connections of the requests before it hold their places until
	// the bridge has closed them, a moment after their responses: a
	// connection the listener closed at once for that is opened again.
	park := func(id, timeout string) net.Conn {
		t.Helper()
		for end := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			conn, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			t.Cleanup(func() { conn.Close() })
			fmt.Fprintf(conn, "GET /api/projects/ops/agent-questions/%s/wait?timeout=%s HTTP/1.1\r\nHost: %s\r\n\r\n", id, timeout, addr)
			conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			_, err = conn.Read(make([]byte, 1))
			conn.SetReadDeadline(time.Time{})
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return conn // it waits
			}
			conn.Close()
			require.True(t, time.Now().Before(end), "a long-poll that waits (the listener closed every one: %v)", err)
		}
	}
	// served reports whether a new connection is served (the listener
	// closes one over the address's limit at once).
	served := func() bool {
		res, err := c.Get(b.url + "/healthz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	}
	eventually := func(what string, f func() bool) {
		t.Helper()
		for end := time.Now().Add(5 * time.Second); !f(); time.Sleep(20 * time.Millisecond) {
			require.True(t, time.Now().Before(end), what)
		}
	}
	ids := []string{ask("r1"), ask("r2"), ask("r3"), ask("r4"), ask("r5")}
	w1, w2 := park(ids[0], "60s"), park(ids[1], "60s")
	park(ids[2], "60s")
	time.Sleep(300 * time.Millisecond) // read and parked
	assert.False(t, served(), "a fourth connection while three waits are parked")

	w1.Close() // the client hangs up: its place is given back
	eventually("a connection once a parked client hung up", served)

	// One place free: the answer goes through it, and the answered wait
	// gives its own back.
	body, _ := json.Marshal(map[string]any{"response": "Yes"})
	eventually("the answer through the free place", func() bool {
		// (the place of the check above is given back once the server has
		// closed that connection, a moment after its response)
		res, err := c.Post(b.url+"/api/projects/ops/agent-questions/"+ids[1]+"/respond", "application/json", bytes.NewReader(body))
		if err != nil {
			return false
		}
		msg, _ := io.ReadAll(res.Body)
		res.Body.Close()
		require.Equal(t, http.StatusAccepted, res.StatusCode, "%s", msg)
		return true
	})
	w2.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := http.ReadResponse(bufio.NewReader(w2), nil)
	require.NoError(t, err)
	got.Body.Close()
	assert.Equal(t, http.StatusOK, got.StatusCode)
	w2.Close()
	// Three parked again; one ends at its deadline.
	time.Sleep(100 * time.Millisecond) // w2's place is given back once the bridge closed it
	park(ids[4], "60s")
	w3 := park(ids[3], "1s")
	time.Sleep(300 * time.Millisecond)
	assert.False(t, served(), "a fourth connection while three waits are parked")
	w3.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err = http.ReadResponse(bufio.NewReader(w3), nil)
	require.NoError(t, err)
	got.Body.Close()
	eventually("a connection once a parked wait timed out", served)
}
