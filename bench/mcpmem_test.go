package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/app"
)

// mcpSessions opens n 2025-11-25 sessions on r, or none without sessions.
func mcpSessions(tb testing.TB, r *replica, n int, sessions bool) []string {
	tb.Helper()
	if !sessions {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		var err error
		if ss[i], err = mcpSession(r.web.URL); err != nil {
			tb.Fatal(err)
		}
	}
	return ss
}

// waitingMCPCalls opens n blocking ask_user calls over /mcp of r, each on a
// connection of its own and a question of its own (a 2026-07-28 host's
// POST, or, given sessions, the call of a 2025-11-25 host in sessions[i]),
// waits until the bridge has asked every one, and checks that none was
// answered.
func waitingMCPCalls(tb testing.TB, r *replica, n, from int, sessions []string) []net.Conn {
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
		if sessions != nil {
			session = sessions[i]
		}
		c, err := parkMCPCall(addr, session, false, fmt.Sprintf("Deploy build %d?", from+i), nil)
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
// call: goroutines, and the Go heap and stacks in use. With sessions, each
// call is in a session of its own, opened first: the call's cost is
// counted apart from its session's (session, per session).
//
// MCP_PROFILE=/tmp/m writes /tmp/m.sessions.heap, /tmp/m.base.heap and
// /tmp/m.heap (every allocation sampled) before the sessions are opened,
// before and after the n calls wait (a session's cost: -diff_base
// /tmp/m.sessions.heap /tmp/m.base.heap):
//
//	go tool pprof -sample_index=inuse_space -diff_base /tmp/m.base.heap -top /tmp/m.heap
func mcpCallCost(tb testing.TB, r *replica, n int, sessions bool) (goroutines, bytes, live, session float64) {
	prof := os.Getenv("MCP_PROFILE")
	writeHeap := func(string) {}
	if prof != "" {
		runtime.MemProfileRate = 1
		defer func() { runtime.MemProfileRate = 512 * 1024 }()
		writeHeap = func(name string) {
			f, err := os.Create(name)
			if err != nil {
				tb.Fatal(err)
			}
			defer f.Close()
			if err := pprof.WriteHeapProfile(f); err != nil {
				tb.Fatal(err)
			}
		}
	}
	settle := func() (uint64, uint64, int) {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		lv := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(lv)
		return m.HeapInuse + m.StackInuse, lv[0].Value.Uint64(), runtime.NumGoroutine()
	}
	// warm: the first calls start what every call shares
	waitingMCPCalls(tb, r, 20, 0, mcpSessions(tb, r, 20, sessions))
	bs, _, _ := settle()
	writeHeap(prof + ".sessions.heap")
	ss := mcpSessions(tb, r, n, sessions)
	b0, l0, g0 := settle()
	writeHeap(prof + ".base.heap")
	waitingMCPCalls(tb, r, n, 20, ss)
	b1, l1, g1 := settle()
	writeHeap(prof + ".heap")
	return float64(g1-g0) / float64(n), (float64(b1) - float64(b0)) / float64(n), (float64(l1) - float64(l0)) / float64(n),
		(float64(b0) - float64(bs)) / float64(n)
}

// TestWaitingMCPCallHoldsNoGoroutine: a blocking ask_user call over /mcp
// that waits for a person is parked like a long-poll: it holds no
// goroutine of its own, and a few KB, on either kind of host (a
// 2025-11-25 host's session costs what it costs apart from its call).
func TestWaitingMCPCallHoldsNoGoroutine(t *testing.T) {
	for _, kind := range []struct {
		name     string
		sessions bool
	}{{"2026-07-28 stateless POST", false}, {"2025-11-25 session POST", true}} {
		t.Run(kind.name, func(t *testing.T) {
			r, err := startReplica(app.Settings{Addr: "127.0.0.1:0"})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			const n = 200
			g, b, live, session := mcpCallCost(t, r, n, kind.sessions)
			t.Logf("per waiting call: %.2f goroutines, %.0f B of heap and stacks in use (%.0f B live)", g, b, live)
			if kind.sessions {
				t.Logf("per session, before its call: %.0f B of heap and stacks in use", session)
			}
			if g > 0.1 {
				t.Errorf("each waiting call holds %.2f goroutines; want none (parked)", g)
			}
			// A call waiting in goroutines held 4 of them and ~30 KB live
			// (~75 KB of heap and stacks in use).
			if live > 8<<10 { // (the heap in use moves with the garbage the asks left)
				t.Errorf("each waiting call keeps %.0f B of live heap; want a few KB", live)
			}
		})
	}
}

// BenchmarkWaitingMCPCall is what one blocking ask_user call waiting over
// /mcp costs the bridge, as BenchmarkParkedWaiter for long-polls (a
// replica in this process, the embedded store in memory; WAITER_STORE=redis:
// a redis-server of its own):
//
//	go test ./bench -run '^$' -bench WaitingMCPCall -benchtime 2000x
//	WAITER_STORE=redis go test ./bench -run '^$' -bench WaitingMCPCall -benchtime 2000x
func BenchmarkWaitingMCPCall(b *testing.B) {
	for _, kind := range []struct {
		name     string
		sessions bool
	}{{"stateless", false}, {"session", true}} {
		b.Run(kind.name, func(b *testing.B) {
			r := waiterReplica(b)
			g, by, live, session := mcpCallCost(b, r, b.N, kind.sessions)
			if kind.sessions {
				b.ReportMetric(session, "session-B/session")
			}
			b.ReportMetric(g, "goroutines/call")
			b.ReportMetric(by, "B/call")
			b.ReportMetric(live, "live-B/call")
		})
	}
}
