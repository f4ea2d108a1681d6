package api

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// After a burst of waits parked (agents reconnecting to a restarted
// replica: 10,000 in a few seconds), the Go runtime's heap goal stays where
// the burst put it. The parked waits themselves allocate next to nothing
// (the sweep reads statuses in batches), so nothing would make the runtime
// collect again before its forced collection two minutes later, and until
// then the RSS stays at the burst's peak: 14.5 KB per waiter in the bench's
// (e) against 5–6 KB once collected. So once parking has gone quiet after
// at least settleParks parks, the parker has the runtime collect and give
// its free memory back at once (debug.FreeOSMemory: with runtime.GC alone
// the scavenger gave it back slowly, 3.7–8.9 KB per waiter 10 s later):
// at most one collection per settleParks parks.

// settleParks is how many parks since the last collection make a burst
// worth a collection: measured before the server took new connections a
// few hundred at a time (internal/admit), a burst held ~20 KB a request
// while under way, so 5,000 parks left ~100 MB of heap goal behind, far
// more than a collection costs; after 2,000 (the bench's (b)) the
// collection's pause, landing while answers arrive, cost more (p99 4.8 →
// 6.9 ms) than the ~40 MB it gave back. With the accept line a burst holds
// far less at once; the collection still returns what its garbage left.
const settleParks = 5000

// settleQuiet is how long parking must stay quiet (fewer than
// settleParks/100 parks) before the collection.
const settleQuiet = time.Second

// While the parked waits grow in a burst on a large heap, the runtime
// collects at a quarter of the live heap instead of GOGC's 100 %
// (tightGCPercent), until the burst ends. What a parked wait keeps is
// allocated amid its request's garbage; with the embedded store's records
// live (~100 MB at 100,000) the runtime lets as much garbage pile up between
// collections, so a burst's kept objects end up a few to a page among it,
// and those pages cannot be given back while the waits last: 6.3 KB of RSS
// per parked 2025-11-25 MCP session against 2.4 KB live, and 2.9 KB
// collecting at 25 % (BENCHMARKS.md, round 4's twelfth session), parking as
// fast. Not all the time: at 100,000 records asks/s fell by 30 % with
// GOGC=25 for the whole run. Growth, not parks: waits that end as others
// park (100,000 long-polls renewed every 2 minutes are 800 parks a second)
// take the slots the ended ones freed, and keep the collector as it is. A
// small heap is left alone (the runtime collects often there anyway, and a
// quarter of a few MB would have it collect in a loop), and so is an
// operator's GOGC.
const (
	tightGCPercent = 25
	tightFromLive  = 64 << 20 // bytes of live heap
	// tightRate is by how many the parked waits grow within one look
	// (settleQuiet) in a burst to collect more often in.
	tightRate = 200
)

type settler struct {
	parks   atomic.Int64 // parks since the last look
	ends    atomic.Int64 // waits ended since the last look
	burst   int64        // parks that make a burst
	quiet   time.Duration
	collect func() // debug.FreeOSMemory; a test's counter
	// The waits growing by rate in a look on a heap of at least
	// tightFromLive (live) tighten the collector until a look sees them
	// grow by less; nil tighten: never (GOGC set).
	rate            int64
	live            func() uint64
	tighten, loosen func()
}

func newSettler() *settler {
	s := &settler{burst: settleParks, quiet: settleQuiet, collect: debug.FreeOSMemory, rate: tightRate, live: liveHeap}
	if os.Getenv("GOGC") == "" {
		s.tighten, s.loosen = tightGC.tighten, tightGC.loosen
	}
	return s
}

// parked counts a park.
func (s *settler) parked() { s.parks.Add(1) }

// ended counts a wait that ended.
func (s *settler) ended() { s.ends.Add(1) }

// run looks every quiet until stop is closed.
func (s *settler) run(stop <-chan struct{}) {
	t := time.NewTicker(s.quiet)
	defer t.Stop()
	var since int64 // parks since the last collection
	tight := false
	defer func() {
		if tight {
			s.loosen()
		}
	}()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		n := s.parks.Swap(0)
		grew := n - s.ends.Swap(0)
		since += n
		switch {
		case !tight && s.tighten != nil && grew >= s.rate && s.live() >= tightFromLive:
			s.tighten()
			tight = true
		case tight && grew < s.rate:
			s.loosen()
			tight = false
		}
		if since >= s.burst && n < max(s.burst/100, 1) {
			since = 0
			s.collect()
		}
	}
}

// tightGC is the process's collector setting while bursts last: parkers
// (one per API server; tests run many) tighten and loosen it in turn, and
// the setting from before the first is put back after the last.
var tightGC gcTightener

type gcTightener struct {
	mu      sync.Mutex
	n, prev int
}

func (g *gcTightener) tighten() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n == 0 {
		g.prev = debug.SetGCPercent(tightGCPercent)
	}
	g.n++
}

func (g *gcTightener) loosen() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n--; g.n == 0 {
		debug.SetGCPercent(g.prev)
	}
}

// liveHeap is the heap the last collection found live, in bytes.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
