package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/google/uuid"

	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func open(t *testing.T, url string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), store.Options{URL: url})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformanceRealRedis(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() lifecycle.Store {
		srv := storetest.Redis(t)
		return func() lifecycle.Store { return open(t, srv.URL) }
	})
}

func TestConformanceEmbedded(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() lifecycle.Store {
		var first *store.Store
		return func() lifecycle.Store {
			if first == nil {
				first = open(t, "")
				return first
			}
			return open(t, first.EmbeddedURL())
		}
	})
}

func TestParseURL(t *testing.T) {
	o, err := store.ParseURL("redis://:pw@127.0.0.1:6379/2")
	require.NoError(t, err)
	assert.Equal(t, []string{"127.0.0.1:6379"}, o.Addrs)
	assert.Equal(t, 2, o.DB)
	o, err = store.ParseURL("redis+sentinel://s1:26379?master_name=mymaster&addr=s2:26379")
	require.NoError(t, err)
	assert.Equal(t, "mymaster", o.MasterName)
	assert.ElementsMatch(t, []string{"s1:26379", "s2:26379"}, o.Addrs)
	o, err = store.ParseURL("redis+cluster://n1:7000?addr=n2:7001")
	require.NoError(t, err)
	assert.True(t, o.IsClusterMode)
	assert.Len(t, o.Addrs, 2)
	_, err = store.ParseURL("redis+sentinel://s1:26379")
	assert.ErrorContains(t, err, "master_name")
	_, err = store.ParseURL("memcache://x")
	assert.ErrorContains(t, err, "unsupported")
}

func TestUnreachableRedisErrorHidesPassword(t *testing.T) {
	_, err := store.Open(context.Background(), store.Options{URL: "redis://:hunter2@127.0.0.1:1"})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "hunter2")
	assert.Contains(t, err.Error(), "cannot reach Redis")
}

func TestBacklogRealRedis(t *testing.T) {
	storetest.Backlog(t, open(t, storetest.Redis(t).URL))
}

// TestStillPendingReadsTheStatus: what a parked wait's check reads on Redis.
func TestStillPendingReadsTheStatus(t *testing.T) {
	s := open(t, storetest.Redis(t).URL)
	ctx := context.Background()
	items := []domain.Item{{Question: "Deploy?", Options: []domain.Option{{Label: "Yes", Value: "yes"}, {Label: "No", Value: "no"}}}}
	now := time.Now().UTC().Truncate(time.Millisecond)
	res, err := s.Create(ctx, &domain.Question{ID: uuid.NewString(), ProjectID: "ops", RunID: "run-1", AgentID: "bot",
		Kind: domain.KindQuestion, Status: domain.StatusPending, Questions: items, Targets: []domain.Target{},
		CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour), Fingerprint: domain.Fingerprint(items)})
	require.NoError(t, err)
	id := res.Question.ID

	pending, err := s.StillPending(ctx, "ops", id)
	require.NoError(t, err)
	assert.True(t, pending, "a question just asked")
	pending, err = s.StillPending(ctx, "other", id)
	require.NoError(t, err)
	assert.False(t, pending, "another project's question is none of this one's")
	pending, err = s.StillPending(ctx, "ops", uuid.NewString())
	require.NoError(t, err)
	assert.False(t, pending, "a question that does not exist")

	answer := domain.Resolve(items, [][]string{{"yes"}})
	_, err = s.Transition(ctx, "ops", id, lifecycle.Transition{To: domain.StatusAnswered, Answer: &answer,
		By: &domain.Person{Platform: "api", ID: "alice"}, At: time.Now().UTC()})
	require.NoError(t, err)
	pending, err = s.StillPending(ctx, "ops", id)
	require.NoError(t, err)
	assert.False(t, pending, "an answered question")

	other, err := s.Create(ctx, &domain.Question{ID: uuid.NewString(), ProjectID: "ops", RunID: "run-2", AgentID: "bot",
		Kind: domain.KindQuestion, Status: domain.StatusPending, Questions: items, Targets: []domain.Target{},
		CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour), Fingerprint: domain.Fingerprint(items)})
	require.NoError(t, err)
	each, err := s.StillPendingEach(ctx, []string{"ops", "ops", "other", "ops"}, []string{id, other.Question.ID, other.Question.ID, uuid.NewString()})
	require.NoError(t, err)
	assert.Equal(t, []bool{false, true, false, false}, each, "answered, pending, another project's, none")
}
