package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLaneKeysGoWhenTheirMailsHaveLeft: a sender's lane (outbox:<sender>)
// and its name in the set lanes last only while it holds deliveries: once
// its mails have left, the next look at the lane removes both, whether the
// replica has the sender or not.
func TestLaneKeysGoWhenTheirMailsHaveLeft(t *testing.T) {
	srv := storetest.Redis(t)
	ctx := context.Background()
	s, err := store.Open(ctx, store.Options{URL: srv.URL})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	rdb := s.Client()
	q := pendingQuestion("ops")
	_, err = s.Create(ctx, q)
	require.NoError(t, err)
	laneKeys := func() []string {
		keys, err := rdb.Keys(ctx, "*outbox:*").Result()
		require.NoError(t, err)
		more, err := rdb.Keys(ctx, "*:lanes").Result()
		require.NoError(t, err)
		return append(keys, more...)
	}
	for _, want := range []map[string]int{{"email": 10}, {lifecycle.SenderWebhook: 10, "": 10}} {
		_, err := s.EnqueueDelivery(ctx, lifecycle.Delivery{ID: "email.send:" + q.ID + ":" + time.Now().String(), ProjectID: "ops",
			QuestionID: q.ID, Event: "email.send", Payload: []byte(`{}`)})
		require.NoError(t, err)
		require.Len(t, laneKeys(), 2, "the lane and the set naming it")
		ds, err := s.ClaimLanes(ctx, time.Now().Add(time.Second), time.Minute, want)
		require.NoError(t, err)
		require.Len(t, ds, 1)
		require.NoError(t, s.FinishDelivery(ctx, ds[0]))
		_, err = s.ClaimLanes(ctx, time.Now().Add(time.Second), time.Minute, want)
		require.NoError(t, err)
		assert.Empty(t, laneKeys(), "claiming with %v", want)
	}
}
