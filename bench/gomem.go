package main

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// goMem is where a bridge process's memory is, read from its /metrics
// (the Go collector's go_memstats_*) and /proc/<pid>/status, so a
// per-waiter RSS figure can be split into the Go heap in use, free heap
// the runtime keeps (GC headroom not yet returned), goroutine stacks, the
// runtime's own off-heap memory (OtherSys: netpoll descriptors among it;
// span and GC metadata) and what is outside Go's accounting.
type goMem struct {
	rss, heapInuse, heapKept, stack, otherSys, meta int64
}

func readGoMem(base string, pid int) (goMem, error) {
	m := goMem{rss: rss(pid)}
	res, err := http.Get(base + "/metrics")
	if err != nil {
		return m, err
	}
	defer res.Body.Close()
	v := map[string]int64{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || !strings.HasPrefix(name, "go_memstats_") {
			continue
		}
		f, err := strconv.ParseFloat(val, 64)
		if err == nil {
			v[name] = int64(f)
		}
	}
	if len(v) == 0 {
		return m, fmt.Errorf("no go_memstats in /metrics (%s)", res.Status)
	}
	m.heapInuse = v["go_memstats_heap_inuse_bytes"]
	m.heapKept = v["go_memstats_heap_idle_bytes"] - v["go_memstats_heap_released_bytes"]
	m.stack = v["go_memstats_stack_inuse_bytes"]
	m.otherSys = v["go_memstats_other_sys_bytes"]
	m.meta = v["go_memstats_mspan_sys_bytes"] + v["go_memstats_mcache_sys_bytes"] + v["go_memstats_gc_sys_bytes"] + v["go_memstats_buck_hash_sys_bytes"]
	return m, nil
}

// perWaiter prints the difference b−a split by kind, per waiter.
func (b goMem) perWaiter(a goMem, n int) string {
	per := func(x, y int64) string { return fmt.Sprintf("%.0f", float64(x-y)/float64(n)) }
	return fmt.Sprintf("B per waiter: heap in use %s, free heap kept %s, stacks %s, runtime off-heap (OtherSys) %s, span/GC metadata %s; RSS %s",
		per(b.heapInuse, a.heapInuse), per(b.heapKept, a.heapKept), per(b.stack, a.stack), per(b.otherSys, a.otherSys), per(b.meta, a.meta), per(b.rss, a.rss))
}

// waiterBudget is the bridge's RSS per parked waiter that (a) allows on
// Redis: 600 MB, less redis-server at 100,000 pending (274 MB) and the
// bridge with no waiter (45 MB), over 100,000 waiters (BENCHMARKS.md).
const waiterBudget = (600e6 - 274e6 - 45e6) / 100_000
