package api

import (
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestParkedWaitsTimeOutInDeadlineOrder: parked waits with different
// timeouts, sharing the parker's one deadline heap, are each answered
// with the pending record once their own time is up — not before, and in
// deadline order whatever order they parked in — and a wait finished
// early leaves no deadline behind.
func TestParkedWaitsTimeOutInDeadlineOrder(t *testing.T) {
	st := &sweepStore{release: make(chan struct{}), answered: map[string]bool{}}
	p := startParker(st, slog.New(slog.DiscardHandler), time.Hour)
	defer func() { close(st.release); close(p.stop) }()
	timeouts := []time.Duration{600 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}
	start := time.Now()
	got := make(chan int, len(timeouts))
	for k, d := range timeouts {
		server, client := net.Pipe()
		pk := &parked{conn: server, project: "ops", id: "q" + string(rune('1'+k)), slot: noSlot}
		p.mu.Lock()
		p.waits[pk] = struct{}{}
		p.mu.Unlock()
		p.schedule(pk, d)
		go func() {
			client.SetReadDeadline(time.Now().Add(5 * time.Second))
			buf := make([]byte, 4096)
			n, err := client.Read(buf)
			require.NoError(t, err)
			require.True(t, strings.Contains(string(buf[:n]), `"status":"pending"`), "%q", buf[:n])
			require.GreaterOrEqual(t, time.Since(start), d, "answered before its timeout")
			got <- k
		}()
	}
	// One more, finished before its time: its deadline goes with it.
	server, _ := net.Pipe()
	early := &parked{conn: server, project: "ops", id: "q9", slot: noSlot}
	p.mu.Lock()
	p.waits[early] = struct{}{}
	p.mu.Unlock()
	p.schedule(early, time.Hour)
	require.True(t, p.finish(early))
	var order []int
	for range timeouts {
		select {
		case k := <-got:
			order = append(order, k)
		case <-time.After(5 * time.Second):
			t.Fatalf("waits answered so far: %v", order)
		}
	}
	require.Equal(t, []int{1, 2, 0}, order, "not in deadline order")
	p.mu.Lock()
	defer p.mu.Unlock()
	require.Empty(t, p.due.ws, "deadlines left behind")
}
