package store_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/askbridge/askbridge/store/storetest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// roundTrips counts the commands and pipelines a client sends Redis.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { r.n.Add(1); return next(ctx, cmd) }
}
func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { r.n.Add(1); return next(ctx, cmds) }
}

// TestAskIsOneRoundTrip: asking a question in a new run costs Redis one
// round trip, the create script, which returns what Create needs to give
// back the record (BENCHMARKS (c): each round trip is CPU of
// redis-server's per ask). It was two: the script, then a read of the
// record it had just written.
func TestAskIsOneRoundTrip(t *testing.T) {
	s := open(t, storetest.Redis(t).URL)
	var rt roundTrips
	s.Client().AddHook(&rt)
	p := "proj"
	// the project registered, the script loaded
	_, err := s.Create(context.Background(), askedQuestion(p, 0))
	require.NoError(t, err)
	for i := 1; i <= 3; i++ {
		before := rt.n.Load()
		res, err := s.Create(context.Background(), askedQuestion(p, i))
		require.NoError(t, err)
		require.False(t, res.Reattached)
		assert.EqualValues(t, 1, rt.n.Load()-before, "round trips to Redis for ask %d", i+1)
	}
}
