package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// laneQueue is what the resume deliverer asks of a store kept in lanes
// (resume.LaneQueue).
type laneQueue interface {
	ClaimLanes(ctx context.Context, now time.Time, lease time.Duration, want map[string]int) ([]lifecycle.Delivery, error)
}

// testDeliveryLanes: the resume webhooks, each sender's mails and pages
// are lanes of their own: a claim of one lane takes that lane's due
// deliveries in due order, passing over a longer queue of another lane
// queued before them; leases, retries and finishing work in every lane;
// "" claims the lanes not named; and ClaimDeliveries still hands out every
// lane's, the earliest due first.
func testDeliveryLanes(t *testing.T, open func() lifecycle.Store) {
	a, b := open(), open()
	la, ok := a.(laneQueue)
	require.True(t, ok, "the store claims by lane (ClaimLanes)")
	lb := b.(laneQueue)
	p := project()
	q := newQ(p, "run-1")
	create(t, a, q)
	now := time.Now()
	// 100 mails and 3 pages queued first, then a resume webhook.
	for i := range 100 {
		_, err := a.EnqueueDelivery(ctx, lifecycle.Delivery{ID: fmt.Sprint("email.send:", q.ID, ":", i), ProjectID: p, QuestionID: q.ID,
			Event: "email.send", Payload: []byte(`{}`), CreatedAt: now.Add(time.Duration(i-200) * time.Millisecond)})
		require.NoError(t, err)
	}
	for i := range 3 {
		_, err := a.EnqueueDelivery(ctx, lifecycle.Delivery{ID: fmt.Sprint("pagerduty.trigger:", q.ID, ":", i), ProjectID: p, QuestionID: q.ID,
			Event: "pagerduty.trigger", Payload: []byte(`{}`), CreatedAt: now.Add(time.Duration(i-50) * time.Millisecond)})
		require.NoError(t, err)
	}
	tr := answer("x")
	tr.DeliveryID = uuid.NewString()
	_, err := a.Transition(ctx, p, q.ID, tr)
	require.NoError(t, err)
	at := time.Now().Add(time.Second)

	events := func(ds []lifecycle.Delivery) map[string]int {
		m := map[string]int{}
		for _, d := range ds {
			if d.ProjectID == p { // the store's other projects are other tests'
				m[d.Event]++
			}
		}
		return m
	}
	ds, err := la.ClaimLanes(ctx, at, 30*time.Second, map[string]int{lifecycle.SenderWebhook: 1000})
	require.NoError(t, err)
	var hook lifecycle.Delivery
	for _, d := range ds {
		if d.ProjectID == p {
			hook = d
		}
	}
	assert.Len(t, events(ds), 1, "the resume webhook alone, none of the 103 deliveries queued before it")
	assert.Equal(t, tr.DeliveryID, hook.ID)
	assert.Equal(t, 1, hook.Attempts)

	ds, err = lb.ClaimLanes(ctx, at, 30*time.Second, map[string]int{"email": 1000, "pagerduty": 1000, lifecycle.SenderWebhook: 1000})
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"email.send": 100, "pagerduty.trigger": 3}, events(ds), "every lane's, the leased webhook not again")
	var mails []lifecycle.Delivery
	for _, d := range ds {
		if d.Event == "email.send" && d.ProjectID == p {
			mails = append(mails, d)
		}
	}
	for i, d := range mails {
		assert.Equal(t, fmt.Sprint("email.send:", q.ID, ":", i), d.ID, "the mails in due order")
	}

	// Lease, retry, finish in a sender's lane.
	lost, err := lb.(lifecycle.Store).RenewDeliveries(ctx, mails[:1], at.Add(time.Minute))
	require.NoError(t, err)
	assert.Empty(t, lost)
	ds, _ = la.ClaimLanes(ctx, at.Add(45*time.Second), 30*time.Second, map[string]int{"email": 1000})
	assert.Equal(t, map[string]int{"email.send": 99}, events(ds), "a renewed lease holds; the other leases ran out")
	for _, d := range ds {
		if d.ProjectID == p {
			require.NoError(t, a.FinishDelivery(ctx, d))
		}
	}
	require.NoError(t, b.RetryDelivery(ctx, mails[0], at.Add(2*time.Hour)))
	ds, _ = la.ClaimLanes(ctx, at.Add(time.Hour), 30*time.Second, map[string]int{"email": 1000})
	assert.Empty(t, events(ds), "not before its retry time; the finished ones are gone")
	ds, _ = la.ClaimLanes(ctx, at.Add(2*time.Hour), 30*time.Second, map[string]int{"email": 1000})
	var again []string
	for _, d := range ds {
		if d.ProjectID == p {
			again = append(again, d.ID)
			require.NoError(t, a.FinishDelivery(ctx, d))
		}
	}
	assert.Equal(t, []string{mails[0].ID}, again)

	// "" claims the lanes not named: a sender this replica lacks.
	_, err = a.EnqueueDelivery(ctx, lifecycle.Delivery{ID: "sms.send:" + q.ID, ProjectID: p, QuestionID: q.ID, Event: "sms.send",
		Payload: []byte(`{}`), CreatedAt: at})
	require.NoError(t, err)
	ds, _ = la.ClaimLanes(ctx, at.Add(time.Hour), 30*time.Second, map[string]int{"email": 1000, "pagerduty": 1000})
	assert.Empty(t, events(ds)["sms.send"], "a lane not asked for")
	ds, _ = la.ClaimLanes(ctx, at.Add(time.Hour), 30*time.Second, map[string]int{"email": 1000, "pagerduty": 0, "": 1000})
	assert.Equal(t, map[string]int{"sms.send": 1}, events(ds), "the lanes not named (the pages named, with none wanted)")
	for _, d := range ds {
		if d.ProjectID == p {
			require.NoError(t, a.FinishDelivery(ctx, d))
		}
	}

	// ClaimDeliveries takes every lane's, earliest due first.
	require.NoError(t, a.RetryDelivery(ctx, hook, at.Add(3*time.Hour)))
	ds, err = a.ClaimDeliveries(ctx, at.Add(3*time.Hour), 30*time.Second, 1000)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"pagerduty.trigger": 3, hook.Event: 1}, events(ds))
}
