package storetest

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// trimmer is a store that drops, on the sweeper's schedule, what has
// outlived retention (store.Store.Trim).
type trimmer interface {
	Trim(ctx context.Context, now time.Time) (int, error)
}

type clientHolder interface {
	Client() redis.UniversalClient
}

// ProjectKeys lists every key of a project (<prefix>:{project}:*), on
// every master of a Cluster.
func ProjectKeys(ctx context.Context, rdb redis.UniversalClient, prefix, project string) ([]string, error) {
	pattern := prefix + ":{" + project + "}:*"
	var mu sync.Mutex
	var out []string
	scan := func(ctx context.Context, c *redis.Client) error {
		keys, err := c.Keys(ctx, pattern).Result()
		mu.Lock()
		out = append(out, keys...)
		mu.Unlock()
		return err
	}
	var err error
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, scan)
	case *redis.Client:
		err = scan(ctx, c)
	default:
		return nil, fmt.Errorf("unexpected client %T", rdb)
	}
	sort.Strings(out)
	return out, err
}

// testKeysEndWithRetention asks, answers, cancels and expires questions in
// a project (with idempotency keys, drafts, votes, escalation steps),
// lets their retention pass and runs the sweeper's trim: nothing of the
// project may be left in Redis, index entries included.
func testKeysEndWithRetention(t *testing.T, open func() lifecycle.Store) {
	s := open()
	ch, ok := s.(clientHolder)
	if !ok {
		t.Skip("not a Redis store")
	}
	p := project()
	retention := time.Second
	for i := range 24 {
		q := newQ(p, fmt.Sprintf("run-%d", i%4))
		if i%3 == 0 {
			q.IdempotencyKey = fmt.Sprintf("idem-%d", i)
		}
		if i%5 == 0 {
			q.Escalation = []domain.EscalationStep{{After: domain.Duration(time.Minute)}}
		}
		create(t, s, q)
		require.NoError(t, s.PutDraft(ctx, p, q.ID, "slack:U1", map[string][]string{"0": {"Yes"}}, time.Hour))
		var tr lifecycle.Transition
		switch i % 4 {
		case 0:
			tr = answer("a")
		case 1:
			tr = lifecycle.Transition{To: domain.StatusCancelled, CancelReason: "changed plans", At: time.Now().UTC()}
		case 2:
			tr = lifecycle.Transition{To: domain.StatusExpired, At: time.Now().UTC()}
		case 3:
			_, resolved, err := s.Vote(ctx, p, q.ID, domain.Vote{By: domain.Person{Platform: "slack", ID: "U1"}, Label: "Yes"}, 2, false, answer("a"))
			require.NoError(t, err)
			require.False(t, resolved)
			tr = answer("b")
		}
		tr.Retention = retention
		_, err := s.Transition(ctx, p, q.ID, tr)
		require.NoError(t, err)
	}
	keys, err := ProjectKeys(ctx, ch.Client(), "askbridge", p)
	require.NoError(t, err)
	require.NotEmpty(t, keys, "the project's keys exist during retention")

	// Records and run hashes carry Redis TTLs; indexes, streams and the
	// sequence are trimmed by the sweeper (any replica may run it).
	time.Sleep(retention + 200*time.Millisecond)
	later := time.Now().Add(8 * 24 * time.Hour) // past every retention, the streams' too
	empty := WaitFor(ctx, 15*time.Second, func() bool {
		if tr, ok := open().(trimmer); ok {
			_, err := tr.Trim(ctx, later)
			require.NoError(t, err)
		}
		keys, err = ProjectKeys(ctx, ch.Client(), "askbridge", p)
		require.NoError(t, err)
		return len(keys) == 0
	})
	assert.True(t, empty, "keys left after retention: %v", keys)
	ps, err := s.Projects(ctx)
	require.NoError(t, err)
	assert.Contains(t, ps, p, "the project stays registered (one member of <prefix>:projects)")
}

// testTrimKeepsLiveRecords: the sweeper's trim never drops a pending
// question, nor a final one within its retention, whatever the time it
// is given.
func testTrimKeepsLiveRecords(t *testing.T, open func() lifecycle.Store) {
	s := open()
	tr, ok := s.(trimmer)
	if !ok {
		t.Skip("not a trimming store")
	}
	p := project()
	pending := newQ(p, "run-1")
	pending.Escalation = []domain.EscalationStep{{After: domain.Duration(time.Minute)}}
	create(t, s, pending)
	final := newQ(p, "run-2")
	create(t, s, final)
	a := answer("a")
	a.Retention = time.Hour
	_, err := s.Transition(ctx, p, final.ID, a)
	require.NoError(t, err)

	now := time.Now()
	for _, at := range []time.Duration{0, 30 * time.Minute, 59 * time.Minute} {
		_, err := tr.Trim(ctx, now.Add(at))
		require.NoError(t, err)
		list, err := s.List(ctx, p, "", 0)
		require.NoError(t, err)
		assert.Len(t, list, 2, "both questions listed after a trim at +%s", at)
	}
	_, err = tr.Trim(ctx, now.Add(2*time.Hour))
	require.NoError(t, err)
	_, err = s.Get(ctx, p, final.ID)
	assert.Equal(t, domain.ENotFound, domain.ErrorCode(err), "the final question went after its retention")
	got, err := s.Get(ctx, p, pending.ID)
	require.NoError(t, err, "a pending question stays, even past its deadline (the deadline sweep expires it)")
	assert.Equal(t, domain.StatusPending, got.Status)
	due, err := s.Due(ctx, now.Add(2*time.Hour), 100)
	require.NoError(t, err)
	assert.Contains(t, due, lifecycle.Ref{ProjectID: p, ID: pending.ID}, "still due for the deadline sweep")
	list, err := s.List(ctx, p, domain.StatusPending, 0)
	require.NoError(t, err)
	require.Len(t, list, 1)
	next := newQ(p, "run-3")
	create(t, s, next)
	list, err = s.List(ctx, p, "", 0)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, []string{pending.ID, next.ID}, []string{list[0].ID, list[1].ID}, "creation order kept")
}
