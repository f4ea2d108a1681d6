package main

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/askbridge/askbridge/app"
)

func TestZZIdle(t *testing.T) {
	r, err := startReplica(app.Settings{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	waitingMCPCalls(t, r, 20, 0, true)
	settle := func() (uint64, uint64, int) {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		lv := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(lv)
		return m.HeapInuse + m.StackInuse, lv[0].Value.Uint64(), runtime.NumGoroutine()
	}
	b0, l0, g0 := settle()
	var ss []string
	const n = 500
	for range n {
		s, err := mcpSession(r.web.URL)
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s)
	}
	time.Sleep(300 * time.Millisecond)
	b1, l1, g1 := settle()
	t.Logf("idle session: %.2f goroutines, %.0f B heap+stack, %.0f B live", float64(g1-g0)/n, float64(b1-b0)/n, float64(l1-l0)/n)
}
