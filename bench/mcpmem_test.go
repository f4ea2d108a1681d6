package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/app"
)

// waitingMCPCalls opens n blocking ask_user calls over /mcp of r, each on a
// connection of its own and a question of its own (a 2026-07-28 host's
// POST, or with sessions a 2025-11-25 host's session and its call), waits
// until the bridge has asked every one, and checks that none was answered.
func waitingMCPCalls(tb testing.TB, r *replica, n, from int, sessions bool) []net.Conn {
	tb.Helper()
	addr := strings.TrimPrefix(r.web.URL, "http://")
	pending0, err := pendingGauge(r.web.URL)
	if err != nil {
		tb.Fatal(err)
	}
	conns := make([]net.Conn, 0, n)
	tb.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for i := range n {
		session := ""
		if sessions {
			if session, err = mcpSession(r.web.URL); err != nil {
				tb.Fatal(err)
			}
		}
		c, err := parkMCPCall(addr, session, false, fmt.Sprintf("Deploy build %d?", from+i))
		if err != nil {
			tb.Fatal(err)
		}
		conns = append(conns, c)
	}
	for end := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		k, err := pendingGauge(r.web.URL)
		if err != nil {
			tb.Fatal(err)
		}
		if k >= pending0+n {
			break
		}
		if time.Now().After(end) {
			tb.Fatalf("%d of %d MCP calls asked within a minute", k-pending0, n)
		}
	}
	time.Sleep(300 * time.Millisecond) // each call goes from its ask to its wait
	// Every call still waits: what it has sent holds no result (a
	// 2025-11-25 call's stream may have sent its headers and priming event).
	for _, c := range conns[max(0, len(conns)-20):] {
		got, err := readAll(c, 5*time.Millisecond)
		if strings.Contains(got, `"result"`) || strings.Contains(got, `"error"`) || !errors.Is(err, os.ErrDeadlineExceeded) {
			tb.Fatalf("a waiting MCP call ended: %q %v", got, err)
		}
		c.SetReadDeadline(time.Time{})
	}
	return conns
}

// mcpCallCost is what n more waiting calls cost the process of r, per
// call: goroutines, and the Go heap and stacks in use.
func mcpCallCost(tb testing.TB, r *replica, n int, sessions bool) (goroutines, bytes, live float64) {
	settle := func() (uint64, uint64, int) {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		lv := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(lv)
		return m.HeapInuse + m.StackInuse, lv[0].Value.Uint64(), runtime.NumGoroutine()
	}
	waitingMCPCalls(tb, r, 20, 0, sessions) // warm: the first calls start what every call shares
	b0, l0, g0 := settle()
	waitingMCPCalls(tb, r, n, 20, sessions)
	b1, l1, g1 := settle()
	return float64(g1-g0) / float64(n), (float64(b1) - float64(b0)) / float64(n), (float64(l1) - float64(l0)) / float64(n)
}

// TestWaitingMCPCallHoldsNoGoroutine: a blocking ask_user call over /mcp
// that waits for a person is parked like a long-poll: it holds no
// goroutine of its own, and a few KB, on either kind of host.
func TestWaitingMCPCallHoldsNoGoroutine(t *testing.T) {
	for _, kind := range []struct {
		name     string
		sessions bool
	}{{"2026-07-28 stateless POST", false}} {
		t.Run(kind.name, func(t *testing.T) {
			r, err := startReplica(app.Settings{Addr: "127.0.0.1:0"})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			const n = 200
			g, b, live := mcpCallCost(t, r, n, kind.sessions)
			t.Logf("per waiting call: %.2f goroutines, %.0f B of heap and stacks in use (%.0f B live)", g, b, live)
			if g > 0.1 {
				t.Errorf("each waiting call holds %.2f goroutines; want none (parked)", g)
			}
			if live > 8<<10 { // (the heap in use moves with the garbage the asks left)
				t.Errorf("each waiting call keeps %.0f B of live heap; want a few KB", live)
			}
		})
	}
}

// BenchmarkWaitingMCPCall is what one blocking ask_user call waiting over
// /mcp costs the bridge, as BenchmarkParkedWaiter for long-polls (a
// replica in this process, the embedded store in memory):
//
//	go test ./bench -run '^$' -bench WaitingMCPCall -benchtime 2000x
func BenchmarkWaitingMCPCall(b *testing.B) {
	for _, kind := range []struct {
		name     string
		sessions bool
	}{{"stateless", false}, {"session", true}} {
		b.Run(kind.name, func(b *testing.B) {
			r, err := startReplica(app.Settings{Addr: "127.0.0.1:0"})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			g, by, live := mcpCallCost(b, r, b.N, kind.sessions)
			b.ReportMetric(g, "goroutines/call")
			b.ReportMetric(by, "B/call")
			b.ReportMetric(live, "live-B/call")
		})
	}
}
