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

func testDeliveries(t *testing.T, open func() lifecycle.Store) {
	a, b := open(), open()
	p := project()
	q := newQ(p, "run-1")
	create(t, a, q)
	tr := answer("x")
	tr.DeliveryID = uuid.NewString()
	_, err := a.Transition(ctx, p, q.ID, tr)
	require.NoError(t, err)
	mine := func(ds []lifecycle.Delivery) *lifecycle.Delivery {
		for i := range ds {
			if ds[i].ID == tr.DeliveryID {
				return &ds[i]
			}
		}
		return nil
	}
	now := time.Now()
	ds, err := a.ClaimDeliveries(ctx, now, 30*time.Second, 10)
	require.NoError(t, err)
	d := mine(ds)
	require.NotNil(t, d)
	assert.Equal(t, 1, d.Attempts)
	ds, _ = b.ClaimDeliveries(ctx, now, 30*time.Second, 10)
	assert.Nil(t, mine(ds), "a leased delivery is not handed to another replica")
	ds, _ = b.ClaimDeliveries(ctx, now.Add(31*time.Second), 30*time.Second, 10)
	d = mine(ds)
	require.NotNil(t, d, "a lease that ran out (replica died) is reclaimed")
	assert.Equal(t, 2, d.Attempts)
	require.NoError(t, b.RetryDelivery(ctx, *d, now.Add(2*time.Minute)))
	ds, _ = a.ClaimDeliveries(ctx, now.Add(time.Minute), 30*time.Second, 10)
	assert.Nil(t, mine(ds), "not before its retry time")
	ds, _ = a.ClaimDeliveries(ctx, now.Add(2*time.Minute), 30*time.Second, 10)
	d = mine(ds)
	require.NotNil(t, d)
	require.NoError(t, a.FinishDelivery(ctx, *d))
	ds, _ = a.ClaimDeliveries(ctx, now.Add(time.Hour), 30*time.Second, 10)
	assert.Nil(t, mine(ds), "finished deliveries are gone")
}

// testDeliveryLeases: a delivery carries the question as it was answered;
// the holder renews its lease; once another claim took it over, the old
// holder can neither renew nor reschedule it.
func testDeliveryLeases(t *testing.T, open func() lifecycle.Store) {
	a, b := open(), open()
	p := project()
	q := newQ(p, "run-1")
	q.Resume = &domain.Resume{URL: "https://runtime.example/resume"}
	create(t, a, q)
	tr := answer("x")
	tr.DeliveryID = uuid.NewString()
	_, err := a.Transition(ctx, p, q.ID, tr)
	require.NoError(t, err)
	// Other tests' projects may share the server: look at this one only.
	claim := func(s lifecycle.Store, at time.Time) []lifecycle.Delivery {
		ds, err := s.ClaimDeliveries(ctx, at, 10*time.Second, 1000)
		require.NoError(t, err)
		var out []lifecycle.Delivery
		for _, d := range ds {
			if d.ProjectID == p {
				out = append(out, d)
			}
		}
		return out
	}
	now := time.Now()
	ds := claim(a, now)
	require.Len(t, ds, 1)
	held := ds[0]
	require.NotNil(t, held.Question, "the delivery carries its question")
	assert.Equal(t, domain.StatusAnswered, held.Question.Status)
	assert.Equal(t, "https://runtime.example/resume", held.Question.Resume.URL)
	assert.Equal(t, q.Questions[0].Question, held.Question.Questions[0].Question)

	lost, err := a.RenewDeliveries(ctx, []lifecycle.Delivery{held}, now.Add(time.Minute))
	require.NoError(t, err)
	assert.Empty(t, lost)
	assert.Empty(t, claim(b, now.Add(30*time.Second)), "a renewed lease is not taken over")
	require.Len(t, claim(b, now.Add(61*time.Second)), 1, "a lease that was not renewed is taken over")
	lost, err = a.RenewDeliveries(ctx, []lifecycle.Delivery{held}, now.Add(2*time.Minute))
	require.NoError(t, err)
	assert.Equal(t, []string{held.ID}, lost, "the old holder learns it lost the lease")
	require.NoError(t, a.RetryDelivery(ctx, held, now.Add(time.Hour)))
	assert.Len(t, claim(a, now.Add(72*time.Second)), 1, "the old holder's reschedule changed nothing")
}

// testDeliveriesInterleave: a project with a long queue does not keep the
// others waiting: a small claim takes from each project.
func testDeliveriesInterleave(t *testing.T, open func() lifecycle.Store) {
	s := open()
	busy, calm := project(), project()
	enqueue := func(p string) {
		q := newQ(p, uuid.NewString())
		create(t, s, q)
		tr := answer("x")
		tr.DeliveryID = uuid.NewString()
		_, err := s.Transition(ctx, p, q.ID, tr)
		require.NoError(t, err)
	}
	for range 6 {
		enqueue(busy)
	}
	enqueue(calm)
	// A claim of one delivery per project (other tests' projects may share
	// the server) takes one from each, not the busy project's first two.
	all, err := s.Projects(ctx)
	require.NoError(t, err)
	ds, err := s.ClaimDeliveries(ctx, time.Now(), 30*time.Second, len(all))
	require.NoError(t, err)
	projects := map[string]int{}
	for _, d := range ds {
		projects[d.ProjectID]++
	}
	assert.Equal(t, 1, projects[calm], "the calm project's delivery is claimed")
	assert.GreaterOrEqual(t, projects[busy], 1)
}

// testEnqueueDelivery: a sender's delivery (a page, a mail) is queued once
// per id, whichever replica queues it and even after it was sent; it
// carries its payload and the question as stored when it was queued, and
// is leased, retried and finished like a resume webhook.
func testEnqueueDelivery(t *testing.T, open func() lifecycle.Store) {
	a, b := open(), open()
	p := project()
	q := newQ(p, "run-1")
	create(t, a, q)
	id := "pagerduty.trigger:" + q.ID + ":0"
	d := lifecycle.Delivery{ID: id, ProjectID: p, QuestionID: q.ID, Event: "pagerduty.trigger",
		Payload: []byte(`{"severity":"critical","to":"ana@example.com"}`)}
	queued, err := a.EnqueueDelivery(ctx, d)
	require.NoError(t, err)
	assert.True(t, queued)
	queued, err = b.EnqueueDelivery(ctx, d)
	require.NoError(t, err)
	assert.False(t, queued, "a second replica queuing the same id queues nothing")

	mine := func(ds []lifecycle.Delivery) []lifecycle.Delivery {
		var out []lifecycle.Delivery
		for _, x := range ds {
			if x.ID == id {
				out = append(out, x)
			}
		}
		return out
	}
	now := time.Now()
	ds, err := b.ClaimDeliveries(ctx, now.Add(time.Second), 30*time.Second, 10)
	require.NoError(t, err)
	got := mine(ds)
	require.Len(t, got, 1, "queued once, claimed once")
	c := got[0]
	assert.Equal(t, "pagerduty.trigger", c.Event)
	assert.Equal(t, q.ID, c.QuestionID)
	assert.Equal(t, 1, c.Attempts)
	assert.JSONEq(t, `{"severity":"critical","to":"ana@example.com"}`, string(c.Payload))
	require.NotNil(t, c.Question, "the question as stored when it was queued")
	assert.Equal(t, q.Questions[0].Question, c.Question.Questions[0].Question)
	assert.Equal(t, domain.StatusPending, c.Question.Status)

	ds, _ = a.ClaimDeliveries(ctx, now.Add(2*time.Second), 30*time.Second, 10)
	assert.Empty(t, mine(ds), "leased to one replica at a time")
	require.NoError(t, b.RetryDelivery(ctx, c, now.Add(time.Minute)))
	ds, _ = a.ClaimDeliveries(ctx, now.Add(30*time.Second), 30*time.Second, 10)
	assert.Empty(t, mine(ds), "not before its retry time")
	ds, _ = a.ClaimDeliveries(ctx, now.Add(time.Minute), 30*time.Second, 10)
	got = mine(ds)
	require.Len(t, got, 1)
	assert.Equal(t, 2, got[0].Attempts)
	assert.JSONEq(t, `{"severity":"critical","to":"ana@example.com"}`, string(got[0].Payload), "the payload survives a retry")
	require.NoError(t, a.FinishDelivery(ctx, got[0]))

	queued, err = a.EnqueueDelivery(ctx, d)
	require.NoError(t, err)
	assert.False(t, queued, "an id already sent is not queued again")
	ds, _ = a.ClaimDeliveries(ctx, now.Add(time.Hour), 30*time.Second, 10)
	assert.Empty(t, mine(ds))

	// Another id for the same question is its own delivery; a resume
	// webhook's delivery carries no payload.
	other := d
	other.ID, other.Event, other.Payload = "pagerduty.resolve:"+q.ID, "pagerduty.resolve", nil
	queued, err = b.EnqueueDelivery(ctx, other)
	require.NoError(t, err)
	assert.True(t, queued)
	ds, _ = a.ClaimDeliveries(ctx, now.Add(time.Hour), 30*time.Second, 10)
	var found bool
	for _, x := range ds {
		if x.ID == other.ID {
			found = true
			assert.Empty(t, x.Payload)
			assert.Equal(t, "pagerduty.resolve", x.Event)
		}
	}
	assert.True(t, found)

	_, err = a.EnqueueDelivery(ctx, lifecycle.Delivery{ID: "x", ProjectID: p, Event: "email.send"})
	assert.Error(t, err, "a delivery without its question is refused")
}
