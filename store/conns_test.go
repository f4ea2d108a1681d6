package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConnectionsPerReplica: under load (asks, reads, lists and answers
// from 64 goroutines at once, waiters subscribed) a replica holds at most
// PoolSize + 1 connections to Redis, as docs/operations.md promises: the pool and the
// one pub/sub connection. Counted by the server (CLIENT LIST).
func TestConnectionsPerReplica(t *testing.T) {
	srv := storetest.Redis(t)
	ctx := context.Background()
	const pool = 8
	s, err := store.Open(ctx, store.Options{URL: srv.URL, PoolSize: pool})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })

	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			out, err := srv.Cli("client", "list")
			if err != nil {
				continue
			}
			n := int64(0)
			for _, l := range strings.Split(out, "\n") {
				if strings.Contains(l, "cmd=client|list") { // this sampler
					continue
				}
				if strings.TrimSpace(l) != "" {
					n++
				}
			}
			if n > peak.Load() {
				peak.Store(n)
			}
		}
	}()
	var wg sync.WaitGroup
	for w := range 64 {
		wg.Go(func() {
			p := fmt.Sprintf("conns%d", w%4)
			_, stopWatch := s.Watch(p, "")
			defer stopWatch()
			for range 30 {
				q := pendingQuestion(p)
				if _, err := s.Create(ctx, q); err != nil {
					t.Error(err)
					return
				}
				s.Get(ctx, p, q.ID)
				s.List(ctx, p, "", 50)
				s.Transition(ctx, p, q.ID, lifecycle.Transition{To: domain.StatusCancelled, At: time.Now(), CancelReason: "load"})
			}
		})
	}
	wg.Wait()
	close(stop)
	<-sampled
	assert.LessOrEqual(t, peak.Load(), int64(pool+1), "connections of one replica at peak (PoolSize %d + pub/sub)", pool)
	assert.Greater(t, peak.Load(), int64(2), "the sampler saw the load")
}
