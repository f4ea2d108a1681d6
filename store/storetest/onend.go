package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testQueueOnEnd: a delivery registered with QueueOnEnd while its
// question is pending is queued in the same step that ends the question —
// answered, expired, or superseded by a new question on its run — once,
// with its payload and the final question, due its delay after that
// step; whichever replica registers it or ends the question. Registering
// on a question already final queues it at once.
func testQueueOnEnd(t *testing.T, open func() lifecycle.Store) {
	a, b := open(), open()
	p := project()
	const delay = 3 * time.Second
	payload := `{"profile":"oncall","step":0}`
	register := func(s lifecycle.Store, q *domain.Question) (lifecycle.Delivery, bool) {
		t.Helper()
		d := lifecycle.Delivery{ID: "pagerduty.resolve:" + q.ID + ":0", ProjectID: p, QuestionID: q.ID,
			Event: "pagerduty.resolve", Payload: []byte(payload), CreatedAt: time.Now()}
		queued, err := s.QueueOnEnd(ctx, d, delay)
		require.NoError(t, err)
		return d, queued
	}
	// claim claims the deliveries with id due at at.
	claim := func(s lifecycle.Store, id string, at time.Time) []lifecycle.Delivery {
		t.Helper()
		ds, err := s.ClaimDeliveries(ctx, at, 30*time.Second, 100)
		require.NoError(t, err)
		var out []lifecycle.Delivery
		for _, d := range ds {
			if d.ID == id {
				out = append(out, d)
			}
		}
		return out
	}
	ends := func(q *domain.Question) []string {
		ch, ok := a.(clientHolder)
		if !ok {
			return nil
		}
		keys, err := ProjectKeys(ctx, ch.Client(), "askbridge", p)
		require.NoError(t, err)
		var out []string
		for _, k := range keys {
			if strings.HasSuffix(k, ":end:"+q.ID) {
				ttl, err := ch.Client().PTTL(ctx, k).Result()
				require.NoError(t, err)
				// A pending record has no TTL (it ends when final), nor then
				// have they; else they end with it.
				rec, err := ch.Client().PTTL(ctx, strings.TrimSuffix(k, "end:"+q.ID)+"d:"+q.ID).Result()
				require.NoError(t, err)
				if rec == -1 {
					assert.Equal(t, rec, ttl, "the registrations end with the record")
				} else {
					assert.Positive(t, ttl, "the registrations end with the record")
				}
				out = append(out, k)
			}
		}
		return out
	}
	// ended checks the one delivery queued when q ended at at as status.
	ended := func(q *domain.Question, d lifecycle.Delivery, at time.Time, status domain.Status) {
		t.Helper()
		assert.Empty(t, ends(q), "the registrations go once queued")
		assert.Empty(t, claim(b, d.ID, at.Add(delay-time.Second)), "not before its delay")
		got := claim(b, d.ID, at.Add(delay+time.Second))
		require.Len(t, got, 1, "queued once when the question ended")
		assert.Equal(t, "pagerduty.resolve", got[0].Event)
		assert.Equal(t, q.ID, got[0].QuestionID)
		assert.JSONEq(t, payload, string(got[0].Payload))
		require.NotNil(t, got[0].Question, "the delivery carries the question")
		assert.Equal(t, status, got[0].Question.Status, "as it ended")
		require.NoError(t, b.FinishDelivery(ctx, got[0]))
		assert.Empty(t, claim(a, d.ID, at.Add(time.Hour)), "and only once")
		_, queued := register(a, q)
		assert.False(t, queued, "an id queued at the end is not queued again")
	}

	// Answered: registered on one replica, twice, ended on another.
	q := newQ(p, "run-1")
	create(t, a, q)
	d, queued := register(a, q)
	assert.True(t, queued)
	_, queued = register(b, q)
	assert.False(t, queued, "registered once per id, whichever replica registers it")
	assert.Empty(t, claim(b, d.ID, time.Now().Add(time.Hour)), "nothing to send while the question is pending")
	if _, ok := a.(clientHolder); ok {
		require.Len(t, ends(q), 1, "kept under end:<id>")
	}
	tr := answer("maria")
	_, err := b.Transition(ctx, p, q.ID, tr)
	require.NoError(t, err)
	ended(q, d, tr.At, domain.StatusAnswered)

	// Expired by the deadline sweep.
	q = newQ(p, "run-2")
	create(t, a, q)
	d, queued = register(b, q)
	assert.True(t, queued)
	exp := lifecycle.Transition{To: domain.StatusExpired, At: time.Now().UTC()}
	_, err = a.Transition(ctx, p, q.ID, exp)
	require.NoError(t, err)
	ended(q, d, exp.At, domain.StatusExpired)

	// Superseded: a new question on the same run cancels it in one step.
	q = newQ(p, "run-3")
	create(t, a, q)
	d, queued = register(a, q)
	assert.True(t, queued)
	next := newQ(p, "run-3")
	res := create(t, b, next)
	require.NotNil(t, res.Superseded)
	require.Equal(t, q.ID, res.Superseded.ID)
	ended(q, d, next.CreatedAt, domain.StatusCancelled)
	assert.Empty(t, claim(a, "pagerduty.resolve:"+next.ID+":0", time.Now().Add(time.Hour)), "the new question's own registrations are untouched")

	// Already final: queued at once, due its delay after d.CreatedAt.
	_, queued = register(b, q)
	assert.False(t, queued, "already queued when it ended")
	done := newQ(p, "run-4")
	create(t, a, done)
	_, err = a.Transition(ctx, p, done.ID, answer("ana"))
	require.NoError(t, err)
	d, queued = register(b, done)
	assert.True(t, queued, "a question already final queues it now")
	_, queued = register(a, done)
	assert.False(t, queued)
	got := claim(a, d.ID, d.CreatedAt.Add(delay+time.Second))
	require.Len(t, got, 1)
	require.NotNil(t, got[0].Question)
	assert.Equal(t, domain.StatusAnswered, got[0].Question.Status)

	// An unknown question is refused.
	_, err = a.QueueOnEnd(ctx, lifecycle.Delivery{ID: "x", ProjectID: p, QuestionID: "nope", Event: "pagerduty.resolve"}, 0)
	assert.Equal(t, domain.ENotFound, domain.ErrorCode(err))
	_, err = a.QueueOnEnd(ctx, lifecycle.Delivery{ID: "x", ProjectID: p, Event: "pagerduty.resolve"}, 0)
	assert.Error(t, err, "a delivery without its question is refused")
}
