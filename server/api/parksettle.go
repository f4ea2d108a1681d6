package api

import (
	"runtime/debug"
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

type settler struct {
	parks   atomic.Int64 // parks since the last look
	burst   int64        // parks that make a burst
	quiet   time.Duration
	collect func() // debug.FreeOSMemory; a test's counter
}

func newSettler() *settler {
	return &settler{burst: settleParks, quiet: settleQuiet, collect: debug.FreeOSMemory}
}

// parked counts a park.
func (s *settler) parked() { s.parks.Add(1) }

// run looks every quiet until stop is closed.
func (s *settler) run(stop <-chan struct{}) {
	t := time.NewTicker(s.quiet)
	defer t.Stop()
	var since int64 // parks since the last collection
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		n := s.parks.Swap(0)
		since += n
		if since >= s.burst && n < max(s.burst/100, 1) {
			since = 0
			s.collect()
		}
	}
}
