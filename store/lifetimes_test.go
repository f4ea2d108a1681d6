package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type trimmer interface {
	Trim(ctx context.Context, now time.Time) (int, error)
}

// TestRedisReturnsToBaselineAfterRetention asks and answers questions in
// three projects on a real redis-server with a one-second retention (runs
// paused, idempotency keys, drafts, dedupe keys), lets the retention pass
// and runs the sweeper: DBSIZE is back to its baseline plus the projects
// set, and every index is empty.
func TestRedisReturnsToBaselineAfterRetention(t *testing.T) {
	srv := storetest.Redis(t)
	ctx := context.Background()
	s, err := store.Open(ctx, store.Options{URL: srv.URL, Retention: time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	rdb := s.Client()
	base, err := rdb.DBSize(ctx).Result()
	require.NoError(t, err)

	projects := []string{"alpha", "beta", "gamma"}
	for i := range 300 {
		p := projects[i%3]
		q := pendingQuestion(p)
		q.RunID = fmt.Sprintf("run-%d", i%40)
		if i%2 == 0 {
			q.IdempotencyKey = fmt.Sprintf("k-%d", i)
		}
		_, err := s.Create(ctx, q)
		require.NoError(t, err)
		if i%7 == 0 {
			_, err = s.PauseRun(ctx, p, q.RunID, "bot", time.Now())
			require.NoError(t, err)
		}
		require.NoError(t, s.PutDraft(ctx, p, q.ID, "discord:1", map[string][]string{"0": {"Yes"}}, time.Hour))
		_, err = s.Once(ctx, "slack:event:"+q.ID, 0)
		require.NoError(t, err)
		_, err = s.Transition(ctx, p, q.ID, lifecycle.Transition{To: domain.StatusAnswered, At: time.Now(),
			Answer: &domain.Answer{Response: "yes"}, By: &domain.Person{Platform: "api", ID: "u"}})
		require.NoError(t, err)
	}
	// A run paused with no question yet lives for retention too.
	_, err = s.PauseRun(ctx, "alpha", "lonely", "bot", time.Now())
	require.NoError(t, err)
	full, _ := rdb.DBSize(ctx).Result()
	require.Greater(t, full, base+300)

	time.Sleep(1200 * time.Millisecond)
	var size int64
	back := storetest.WaitFor(ctx, 15*time.Second, func() bool {
		if tr, ok := any(s).(trimmer); ok {
			_, err := tr.Trim(ctx, time.Now())
			require.NoError(t, err)
		}
		size, _ = rdb.DBSize(ctx).Result()
		return size == base+1 // <prefix>:projects
	})
	keys, _ := rdb.Keys(ctx, "*").Result()
	if len(keys) > 20 {
		keys = keys[:20]
	}
	assert.True(t, back, "DBSIZE %d after retention (baseline %d + the projects set); some keys: %v", size, base, keys)
	for _, p := range projects {
		n, _ := rdb.ZCard(ctx, "askbridge:{"+p+"}:all").Result()
		assert.Zero(t, n, "entries left in %s's all index", p)
		n, _ = rdb.XLen(ctx, "askbridge:{"+p+"}:events").Result()
		assert.Zero(t, n, "events left in %s's stream", p)
		n, _ = rdb.XLen(ctx, "askbridge:{"+p+"}:audit").Result()
		assert.Zero(t, n, "audit entries left in %s's stream", p)
	}
}

// TestSweeperTrims checks the wiring: the router's sweeper, running on two
// replicas at once, is what brings Redis back to its baseline.
func TestSweeperTrims(t *testing.T) {
	srv := storetest.Redis(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var first *store.Store
	for range 2 {
		s, err := store.Open(ctx, store.Options{URL: srv.URL, Retention: time.Second})
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		r := lifecycle.NewRouter(lifecycle.RouterConfig{Store: s, Retention: time.Second})
		go r.Sweep(ctx, 20*time.Millisecond)
		if first == nil {
			first = s
		}
	}
	for range 50 {
		q := pendingQuestion("sweep")
		_, err := first.Create(ctx, q)
		require.NoError(t, err)
		_, err = first.Transition(ctx, "sweep", q.ID, lifecycle.Transition{To: domain.StatusCancelled, At: time.Now(),
			CancelReason: "no longer needed", Retention: time.Second})
		require.NoError(t, err)
	}
	var size int64
	back := storetest.WaitFor(ctx, 15*time.Second, func() bool {
		size, _ = first.Client().DBSize(ctx).Result()
		return size == 1
	})
	assert.True(t, back, "DBSIZE %d, want 1 (the projects set)", size)
}

// TestEarlierLayoutLeftoversAreTrimmed: index entries an earlier release
// left behind (an all entry whose record expired by its TTL, the unused
// pending index) are dropped by the sweeper, and a draft stored the
// earlier way is still read.
func TestEarlierLayoutLeftoversAreTrimmed(t *testing.T) {
	srv := storetest.Redis(t)
	ctx := context.Background()
	s := open(t, srv.URL)
	rdb := s.Client()
	base := "askbridge:{old}:"
	require.NoError(t, rdb.SAdd(ctx, "askbridge:projects", "old").Err())
	require.NoError(t, rdb.ZAdd(ctx, base+"all", redisZ(1, "gone-1"), redisZ(2, "gone-2")).Err())
	require.NoError(t, rdb.ZAdd(ctx, base+"pending", redisZ(1, "gone-1")).Err())
	require.NoError(t, rdb.Set(ctx, base+"seq", 2, 0).Err())
	require.NoError(t, rdb.Set(ctx, base+"draft:q1:slack:U1", `{"Ship?":["Yes"]}`, time.Hour).Err())
	d, err := s.GetDraft(ctx, "old", "q1", "slack:U1")
	require.NoError(t, err)
	assert.Equal(t, []string{"Yes"}, d["Ship?"], "a draft of the earlier layout is read")

	_, err = s.Trim(ctx, time.Now())
	require.NoError(t, err)
	for _, k := range []string{"all", "pending", "seq"} {
		n, _ := rdb.Exists(ctx, base+k).Result()
		assert.Zero(t, n, "%s left behind", k)
	}
}
