package api

import (
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWokenWaitGetsItsAnswerInOneWrite: the parker writes a woken wait's
// response — head and body — in one write. Written in two, the head goes
// out as a TCP segment of its own and the agent, having read it, waits to
// be woken a second time for the body: a second scheduling delay on every
// wake-up (issue 13 point 6). net.Pipe hands each write to one read, so
// the first read shows what one write held.
func TestWokenWaitGetsItsAnswerInOneWrite(t *testing.T) {
	st := &sweepStore{release: make(chan struct{}), answered: map[string]bool{"q1": true}}
	p := startParker(st, slog.New(slog.DiscardHandler), time.Hour)
	defer func() { close(st.release); close(p.stop) }()
	server, client := net.Pipe()
	pk := &parked{conn: server, project: "ops", id: "q1"}
	p.mu.Lock()
	p.waits[pk] = struct{}{}
	p.mu.Unlock()
	p.enqueue(pk)

	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64<<10)
	n, err := client.Read(buf)
	require.NoError(t, err)
	head, body, ok := strings.Cut(string(buf[:n]), "\r\n\r\n")
	require.True(t, ok, "the first write held only part of the head: %q", buf[:n])
	require.True(t, strings.HasPrefix(head, "HTTP/1.1 200 OK\r\n"), head)
	var length int
	for _, l := range strings.Split(head, "\r\n") {
		if v, ok := strings.CutPrefix(l, "Content-Length: "); ok {
			length, _ = strconv.Atoi(v)
		}
	}
	require.Positive(t, length, head)
	require.Len(t, body, length, "the body did not come in the same write as the head")
	require.Contains(t, body, `"status":"answered"`)
}
