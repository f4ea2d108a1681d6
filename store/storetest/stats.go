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

// testStats: a store with the Stats ability counts a project's pending
// questions and queued deliveries (from any replica), by sender (resume
// webhooks, pages, mails), dates the oldest delivery, and counts this
// replica's waiters by kind.
func testStats(t *testing.T, open func() lifecycle.Store) {
	a, b := open(), open()
	sa, ok := a.(lifecycle.Stats)
	if !ok {
		t.Skip("this store does not report its backlog; its gauges are not exported")
	}
	sb := b.(lifecycle.Stats)
	p := project()
	backlog := func(s lifecycle.Stats) lifecycle.Backlog {
		t.Helper()
		all, err := s.Backlog(ctx)
		require.NoError(t, err)
		for _, bl := range all {
			if bl.ProjectID == p {
				return bl
			}
		}
		return lifecycle.Backlog{ProjectID: p}
	}
	before := time.Now()
	q1, q2, q3 := newQ(p, "run-1"), newQ(p, "run-2"), newQ(p, "run-3")
	create(t, a, q1)
	create(t, a, q2)
	create(t, a, q3)
	assert.Equal(t, lifecycle.Backlog{ProjectID: p, Pending: 3}, backlog(sb), "pending questions, seen from another replica")

	tr := answer("x")
	tr.DeliveryID = uuid.NewString()
	_, err := a.Transition(ctx, p, q1.ID, tr)
	require.NoError(t, err)
	time.Sleep(5 * time.Millisecond)
	tr2 := answer("y")
	tr2.DeliveryID = uuid.NewString()
	_, err = a.Transition(ctx, p, q2.ID, tr2)
	require.NoError(t, err)
	got := backlog(sb)
	assert.Equal(t, 1, got.Pending)
	assert.Equal(t, 2, got.Deliveries)
	assert.WithinRange(t, got.OldestDelivery, before.Add(-time.Second), tr2.At, "the oldest delivery's enqueue time")
	assert.Equal(t, map[string]int{lifecycle.SenderWebhook: 2}, got.BySender, "resume webhooks")

	// Pages and mails queued by their senders are counted by sender.
	for _, d := range []lifecycle.Delivery{
		{ID: "email.send:" + uuid.NewString(), Event: "email.send", Payload: []byte(`{"to":"a@example.com"}`)},
		{ID: "pagerduty.trigger:" + uuid.NewString(), Event: "pagerduty.trigger", Payload: []byte(`{"step":1}`)},
		{ID: "pagerduty.trigger:" + uuid.NewString(), Event: "pagerduty.trigger", Payload: []byte(`{"step":2}`)},
	} {
		d.ProjectID, d.QuestionID, d.CreatedAt = p, q3.ID, time.Now()
		queued, err := a.EnqueueDelivery(ctx, d)
		require.NoError(t, err)
		require.True(t, queued)
	}
	got = backlog(sb)
	assert.Equal(t, 5, got.Deliveries)
	assert.Equal(t, map[string]int{lifecycle.SenderWebhook: 2, "email": 1, "pagerduty": 2}, got.BySender,
		"queued deliveries by sender, seen from another replica")

	// A retried delivery keeps its age: the queue's order is by due time.
	ds, err := a.ClaimDeliveries(ctx, time.Now(), 30*time.Second, 10)
	require.NoError(t, err)
	for _, d := range ds {
		if d.ProjectID == p {
			require.NoError(t, a.RetryDelivery(ctx, d, time.Now().Add(time.Minute)))
		}
	}
	assert.Equal(t, got.OldestDelivery, backlog(sa).OldestDelivery)
	for _, d := range ds {
		if d.ProjectID == p {
			require.NoError(t, a.FinishDelivery(ctx, d))
		}
	}
	got = backlog(sa)
	assert.Equal(t, 0, got.Deliveries)
	assert.True(t, got.OldestDelivery.IsZero(), "no delivery, no age")
	assert.Empty(t, got.BySender, "nothing queued")

	waiters := func() lifecycle.Waiters {
		for _, w := range sa.Waiters() {
			if w.ProjectID == p {
				return w
			}
		}
		return lifecycle.Waiters{ProjectID: p}
	}
	_, stop1 := a.Watch(p, q3.ID)
	stop2 := a.WatchFinal(p, q3.ID, func(*domain.Question) {})
	_, stop3 := a.Watch(p, "")
	assert.Equal(t, lifecycle.Waiters{ProjectID: p, Question: 2, Stream: 1}, waiters())
	for _, w := range sb.Waiters() {
		assert.NotEqual(t, p, w.ProjectID, "waiters are counted by the replica they wait on")
	}
	stop1()
	stop2()
	stop3()
	assert.Equal(t, lifecycle.Waiters{ProjectID: p}, waiters(), "a released wait is no longer counted")
}

// testTraceContextKept: the ask's W3C trace context stays with the record
// through its transition and on its resume delivery, for the spans of the
// answer and the webhook on any replica.
func testTraceContextKept(t *testing.T, open func() lifecycle.Store) {
	a, b := open(), open()
	p := project()
	q := newQ(p, "run-1")
	q.TraceParent, q.TraceState = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "vendor=x"
	create(t, a, q)
	got, err := b.Get(ctx, p, q.ID)
	require.NoError(t, err)
	assert.Equal(t, q.TraceParent, got.TraceParent)
	assert.Equal(t, q.TraceState, got.TraceState)
	tr := answer("x")
	tr.DeliveryID = uuid.NewString()
	final, err := b.Transition(ctx, p, q.ID, tr)
	require.NoError(t, err)
	assert.Equal(t, q.TraceParent, final.TraceParent, "the final record as the transition returns it")
	ds, err := a.ClaimDeliveries(ctx, time.Now(), 30*time.Second, 100)
	require.NoError(t, err)
	for _, d := range ds {
		if d.ID == tr.DeliveryID {
			require.NotNil(t, d.Question)
			assert.Equal(t, q.TraceParent, d.Question.TraceParent, "the delivery's record")
			return
		}
	}
	t.Fatal("the delivery was not claimed")
}
