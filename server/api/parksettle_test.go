package api

import (
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBurstOfParksIsCollectedOnceQuiet: once a burst of parks has gone
// quiet, the runtime is made to collect, once; parking that goes on, or a
// trickle below a burst, is not a reason to.
func TestBurstOfParksIsCollectedOnceQuiet(t *testing.T) {
	var collected atomic.Int32
	s := &settler{burst: 300, quiet: 50 * time.Millisecond, collect: func() { collected.Add(1) }}
	stop := make(chan struct{})
	defer close(stop)
	go s.run(stop)

	// A burst still under way: 100 parks every 10 ms, 3 to 5 a look.
	for range 30 {
		for range 100 {
			s.parked()
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.Zero(t, collected.Load(), "collected while the burst was under way")
	require.Eventually(t, func() bool { return collected.Load() == 1 }, 2*time.Second, 5*time.Millisecond,
		"no collection once the burst went quiet")
	time.Sleep(200 * time.Millisecond)
	require.EqualValues(t, 1, collected.Load(), "collected again with no park since")

	// A trickle: fewer than a burst's parks in all.
	for range 20 {
		s.parked()
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	require.EqualValues(t, 1, collected.Load(), "a trickle of 20 parks is no burst")
}

// TestBurstOfParksOnALargeHeapTightensTheCollector: while the parked waits
// grow in a burst on a large live heap the collector is tightened, once,
// and loosened once the burst ends, before the collection; on a small heap,
// with an operator's GOGC (no tighten), or when as many waits end as park
// (long-polls renewed), it is left alone.
func TestBurstOfParksOnALargeHeapTightensTheCollector(t *testing.T) {
	for _, tc := range []struct {
		name  string
		live  uint64
		gogc  bool // the operator set GOGC: newSettler gives no tighten
		renew bool // a wait ends for each that parks
		calls string
	}{
		{"a large heap", 100 << 20, false, false, "tighten loosen collect"},
		{"a small heap", 10 << 20, false, false, "collect"},
		{"GOGC set", 100 << 20, true, false, "collect"},
		{"waits renewed", 100 << 20, false, true, "collect"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var calls []string
			call := func(c string) func() {
				return func() { mu.Lock(); calls = append(calls, c); mu.Unlock() }
			}
			seen := func() string { mu.Lock(); defer mu.Unlock(); return strings.Join(calls, " ") }
			s := &settler{burst: 300, quiet: 50 * time.Millisecond, collect: call("collect"), rate: 50,
				live: func() uint64 { return tc.live }, tighten: call("tighten"), loosen: call("loosen")}
			if tc.gogc {
				t.Setenv("GOGC", "100")
				if newSettler().tighten == nil { // else the recorders stay, and the calls differ
					s.tighten, s.loosen = nil, nil
				}
			}
			stop := make(chan struct{})
			defer close(stop)
			go s.run(stop)
			for range 30 { // 100 parks every 10 ms: ~500 a look
				for range 100 {
					s.parked()
					if tc.renew {
						s.ended()
					}
				}
				time.Sleep(10 * time.Millisecond)
			}
			require.Eventually(t, func() bool { return strings.HasSuffix(seen(), "collect") }, 2*time.Second, 5*time.Millisecond)
			time.Sleep(200 * time.Millisecond)
			require.Equal(t, tc.calls, seen())
		})
	}
}

// TestTightenedCollectorIsPutBackAfterTheLastBurst: parkers tighten the
// process's collector in turn; the setting from before the first comes
// back only once the last has loosened it.
func TestTightenedCollectorIsPutBackAfterTheLastBurst(t *testing.T) {
	was := debug.SetGCPercent(150)
	defer debug.SetGCPercent(was)
	var g gcTightener
	g.tighten()
	g.tighten()
	g.loosen()
	require.Equal(t, tightGCPercent, debug.SetGCPercent(tightGCPercent), "loosened while another burst lasts")
	g.loosen()
	require.Equal(t, 150, debug.SetGCPercent(150), "the setting from before the bursts")
}
