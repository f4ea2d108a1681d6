package storetest

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testMisc(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	q := newQ(p, "run-1")
	q.Targets = []domain.Target{{Platform: "slack", Channel: "C1"}}
	create(t, s, q)
	require.NoError(t, s.AttachCopy(ctx, p, q.ID, domain.Target{Platform: "slack", Channel: "C1", MessageTS: "171.1", URL: "https://x"}))
	got, _ := s.Get(ctx, p, q.ID)
	require.Len(t, got.Targets, 1)
	assert.Equal(t, "171.1", got.Targets[0].MessageTS)
	assert.Equal(t, domain.ENotFound, domain.ErrorCode(s.AttachCopy(ctx, p, uuid.NewString(), domain.Target{Platform: "slack", Channel: "C1"})))

	assert.False(t, got.Read)
	got, err := s.MarkRead(ctx, p, q.ID)
	require.NoError(t, err)
	assert.True(t, got.Read)

	require.NoError(t, s.PutDraft(ctx, p, q.ID, "discord:1", map[string][]string{"0": {"Yes"}}, time.Minute))
	d, err := s.GetDraft(ctx, p, q.ID, "discord:1")
	require.NoError(t, err)
	assert.Equal(t, []string{"Yes"}, d["0"])
	d, _ = s.GetDraft(ctx, p, q.ID, "discord:2")
	assert.Empty(t, d)

	key := uuid.NewString()
	marked, err := s.Marked(ctx, key)
	require.NoError(t, err)
	assert.False(t, marked, "not marked before Once")
	first, err := s.Once(ctx, key, time.Minute)
	require.NoError(t, err)
	again, _ := s.Once(ctx, key, time.Minute)
	assert.True(t, first)
	assert.False(t, again)
	marked, err = s.Marked(ctx, key)
	require.NoError(t, err)
	assert.True(t, marked, "Marked sees what Once marked")
	require.NoError(t, s.Ping(ctx))
}
