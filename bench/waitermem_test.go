package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store/storetest"
)

// BenchmarkParkedWaiter is what one parked long-poll (`GET …/wait`) costs
// the bridge: b.N waiters, each on its own pending question, parked on a
// replica in this process (the embedded store in memory; WAITER_STORE=redis:
// a redis-server of its own); the Go heap and
// goroutine stacks in use, and the goroutines, per waiter once all are
// parked, against a baseline of 100 parked waiters. The clients are bare
// TCP connections that wrote their request and read nothing yet (a few
// hundred bytes each, counted in the figure: the floor any connection
// costs in this process). RSS per waiter of the real process is (e) and
// the scale figure (a); this one splits it. heap-B is the heap's spans in
// use (live objects and the free room between them), live-B the objects
// the last collection found live, offheap-B the runtime's own memory
// outside the heap (OtherSys: poll descriptors among it, the client's
// included):
//
//	go test ./bench -run '^$' -bench ParkedWaiter -benchtime 5000x
//	WAITER_STORE=redis go test ./bench -run '^$' -bench ParkedWaiter -benchtime 5000x
//	WAITER_PROFILE=/tmp/w go test ./bench -run '^$' -bench ParkedWaiter -benchtime 5000x
//
// WAITER_PROFILE writes /tmp/w.base.heap and /tmp/w.heap (every allocation
// sampled) before and after the b.N waiters park, and /tmp/w.goroutines:
//
//	go tool pprof -sample_index=inuse_space -diff_base /tmp/w.base.heap -top /tmp/w.heap
func BenchmarkParkedWaiter(b *testing.B) {
	prof := os.Getenv("WAITER_PROFILE")
	if prof != "" {
		runtime.MemProfileRate = 1
		defer func() { runtime.MemProfileRate = 512 * 1024 }()
	}
	r := waiterReplica(b)
	ctx := context.Background()
	n := b.N
	const warm = 100
	ids := make([]string, n+warm)
	for i := range ids {
		res, err := r.router.Ask(ctx, "waiters", &domain.AskRequest{RunID: fmt.Sprint("run-", i), Question: "Ship it?",
			Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}}, "")
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = res.Question.ID
	}
	addr := strings.TrimPrefix(r.web.URL, "http://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	park := func(ids []string) {
		for _, id := range ids {
			c, err := parkWaiter(addr, "waiters", id, 10*time.Minute)
			if err != nil {
				b.Fatal(err)
			}
			conns = append(conns, c)
		}
	}
	settle := func() (heap, stack, live, other uint64, goroutines int) {
		// The bridge reads each request and parks it within a second; a
		// waiter that was answered instead (an error) fails the run.
		time.Sleep(time.Second)
		for _, c := range conns[max(0, len(conns)-50):] {
			c.SetReadDeadline(time.Now().Add(time.Millisecond))
			var buf [512]byte
			if k, err := c.Read(buf[:]); k > 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
				b.Fatalf("a waiter was answered instead of parked: %q %v", buf[:k], err)
			}
			c.SetReadDeadline(time.Time{})
		}
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		lv := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(lv)
		return m.HeapInuse, m.StackInuse, lv[0].Value.Uint64(), m.OtherSys, runtime.NumGoroutine()
	}
	park(ids[:warm])
	heap0, stack0, live0, other0, g0 := settle()
	if prof != "" {
		writeProfile(b, prof+".base.heap", "heap", 0)
	}
	b.ResetTimer()
	park(ids[warm:])
	heap1, stack1, live1, other1, g1 := settle()
	b.StopTimer()
	b.ReportMetric(float64(live1-live0)/float64(n), "live-B/waiter")
	b.ReportMetric((float64(other1)-float64(other0))/float64(n), "offheap-B/waiter")
	b.ReportMetric(float64(heap1-heap0)/float64(n), "heap-B/waiter")
	b.ReportMetric(float64(stack1-stack0)/float64(n), "stack-B/waiter")
	b.ReportMetric(float64(heap1+stack1-heap0-stack0)/float64(n), "B/waiter")
	b.ReportMetric(float64(g1-g0)/float64(n), "goroutines/waiter")
	if prof != "" {
		writeProfile(b, prof+".heap", "heap", 0)
		writeProfile(b, prof+".goroutines", "goroutine", 1)
		b.Logf("profiles: %s.heap (go tool pprof -sample_index=inuse_space -top), %s.goroutines; %s", prof, prof, goroutineTop())
	}
}

func writeProfile(b *testing.B, path, name string, debug int) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup(name).WriteTo(f, debug); err != nil {
		b.Fatal(err)
	}
}

// goroutineTop names the functions the most goroutines are parked in.
func goroutineTop() string {
	var sb strings.Builder
	pprof.Lookup("goroutine").WriteTo(&sb, 1)
	counts := map[string]int{}
	for _, blk := range strings.Split(sb.String(), "\n\n") {
		lines := strings.Split(blk, "\n")
		if len(lines) < 2 {
			continue
		}
		var k int
		fmt.Sscanf(lines[0], "%d @", &k)
		// the first frame that is ours, else the first frame
		frame := ""
		for _, l := range lines[1:] {
			if strings.Contains(l, "askbridge/") {
				frame = strings.Fields(strings.TrimPrefix(l, "#"))[1]
				break
			}
		}
		if frame == "" && len(lines) > 1 {
			if f := strings.Fields(strings.TrimPrefix(lines[1], "#")); len(f) > 1 {
				frame = f[1]
			}
		}
		counts[frame] += k
	}
	type kv struct {
		k string
		v int
	}
	var kvs []kv
	for k, v := range counts {
		kvs = append(kvs, kv{k, v})
	}
	sort.Slice(kvs, func(a, b int) bool { return kvs[a].v > kvs[b].v })
	var out []string
	for _, e := range kvs[:min(len(kvs), 5)] {
		out = append(out, fmt.Sprintf("%d in %s", e.v, e.k))
	}
	return "goroutines: " + strings.Join(out, ", ")
}

// waiterReplica starts a replica in this process for the memory
// benchmarks, closed when b ends: the embedded store in memory, or with
// WAITER_STORE=redis a redis-server of its own.
func waiterReplica(b *testing.B) *replica {
	b.Helper()
	s := app.Settings{Addr: "127.0.0.1:0"}
	if os.Getenv("WAITER_STORE") == "redis" {
		rs, err := storetest.StartServer(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(rs.Kill)
		s.RedisURL = rs.URL
	}
	r, err := startReplica(s)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(r.Close)
	return r
}
