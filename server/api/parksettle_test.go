package api

import (
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
