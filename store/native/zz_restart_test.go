package native_test

import (
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store/native"
	"github.com/stretchr/testify/require"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestZZRestartTime(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	dir := os.Getenv("ZZDIR")
	if _, err := os.Stat(dir + "/askbridge.db"); err != nil {
		s, err := native.Open(native.Options{Dir: dir})
		require.NoError(t, err)
		var wg sync.WaitGroup
		sem := make(chan struct{}, 512)
		for i := range 105000 {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				q := newQ("team", fmt.Sprint("run-", i))
				q.Context = "CI passed on main (commit 3f2a9c1). Canary error rate 0.02%."
				q.Targets = []domain.Target{{Platform: "slack", Channel: "C0123ABCD"}}
				_, err := s.Create(ctx, q)
				require.NoError(t, err)
				if i < 100000 {
					_, err = s.Transition(ctx, "team", q.ID, answer("a"))
					require.NoError(t, err)
				}
			})
		}
		wg.Wait()
		require.NoError(t, s.Close())
	}
	f, _ := os.Create("/tmp/zzopen.prof")
	pprof.StartCPUProfile(f)
	c0, t0 := cpuTime(), time.Now()
	s, err := native.Open(native.Options{Dir: dir})
	require.NoError(t, err)
	t.Logf("open: wall %s cpu %s", time.Since(t0), cpuTime()-c0)
	pprof.StopCPUProfile()
	s.Close()
}
