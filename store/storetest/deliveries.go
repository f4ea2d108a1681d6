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
