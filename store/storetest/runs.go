package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testOwnership: a run belongs to the agent that started it, and an
// idempotency key to the agent that used it.
func testOwnership(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	q := newQ(p, "run-1")
	q.IdempotencyKey = "toolu_1"
	create(t, s, q)
	intruder := newQ(p, "run-1", q.Questions...)
	intruder.AgentID = "other"
	_, err := s.Create(ctx, intruder)
	assert.Equal(t, domain.EConflict, domain.ErrorCode(err), "another agent's run")
	got, err := s.Get(ctx, p, q.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusPending, got.Status, "not superseded")
	_, err = s.PauseRun(ctx, p, "run-1", "other", time.Now())
	assert.Equal(t, domain.EConflict, domain.ErrorCode(err), "another agent may not pause it")
	run, err := s.Run(ctx, p, "run-1")
	require.NoError(t, err)
	assert.Equal(t, domain.RunRunning, run.Status)
	keyed := newQ(p, "run-9", q.Questions...)
	keyed.AgentID, keyed.IdempotencyKey = "other", "toolu_1"
	res := create(t, s, keyed)
	assert.False(t, res.Reattached, "another agent's idempotency key is not this agent's")
	assert.NotEqual(t, q.ID, res.Question.ID)
}

func testContinuation(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	q := newQ(p, "run-1")
	q.Resume = &domain.Resume{URL: "https://runtime.example/resume"}
	create(t, s, q)
	tr := answer("alice")
	tr.RequirePausedRun = true
	tr.ContinuationRunID = "run-2"
	tr.DeliveryID = uuid.NewString()
	_, err := s.Transition(ctx, p, q.ID, tr)
	assert.Equal(t, domain.ERunNotPaused, domain.ErrorCode(err))
	got, _ := s.Get(ctx, p, q.ID)
	assert.Equal(t, domain.StatusPending, got.Status, "a refused answer changes nothing")

	run, err := s.PauseRun(ctx, p, "run-1", "bot", time.Now())
	require.NoError(t, err)
	assert.Equal(t, domain.RunPaused, run.Status)
	run, err = s.PauseRun(ctx, p, "run-1", "bot", time.Now())
	require.NoError(t, err, "pausing twice is fine")
	assert.Equal(t, domain.RunPaused, run.Status)

	final, err := s.Transition(ctx, p, q.ID, tr)
	require.NoError(t, err)
	assert.Equal(t, "run-2", final.ResumedRunID)
	old, _ := s.Run(ctx, p, "run-1")
	assert.Equal(t, domain.RunResumed, old.Status)
	assert.Equal(t, "run-2", old.ResumedBy)
	cont, err := s.Run(ctx, p, "run-2")
	require.NoError(t, err)
	assert.Equal(t, domain.RunRunning, cont.Status)
	assert.Equal(t, "run-1", cont.ResumedFrom)
	assert.Equal(t, "bot", cont.AgentID)
	_, err = s.PauseRun(ctx, p, "run-1", "bot", time.Now())
	assert.Equal(t, domain.EConflict, domain.ErrorCode(err), "a resumed run cannot pause again")

	ds, err := s.ClaimDeliveries(ctx, time.Now(), time.Minute, 10)
	require.NoError(t, err)
	var found bool
	for _, d := range ds {
		if d.ID == tr.DeliveryID {
			found = true
			assert.Equal(t, q.ID, d.QuestionID)
			assert.Equal(t, domain.EventAnswered, d.Event)
			require.NoError(t, s.FinishDelivery(ctx, d))
		}
	}
	assert.True(t, found, "the answer enqueued its resume delivery in the same step")
}

// testRunNotPausedAlike: a webhook-mode answer given by a click
// (Transition) or as the deciding vote (Vote) is refused the same way while
// the run has not paused: the same code and words, naming the run's state,
// also when the run's record is gone (expired or evicted) and its state is
// unknown. The store's words name no HTTP route: it knows none. Nothing is
// recorded either way.
func testRunNotPausedAlike(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	q := newQ(p, "run-1")
	q.Resume = &domain.Resume{URL: "https://runtime.example/resume"}
	create(t, s, q)
	refuse := func(state string) {
		t.Helper()
		tr := answer("alice")
		tr.RequirePausedRun = true
		tr.ContinuationRunID = "run-2"
		tr.DeliveryID = uuid.NewString()
		got, trErr := s.Transition(ctx, p, q.ID, tr)
		assert.Equal(t, domain.ERunNotPaused, domain.ErrorCode(trErr))
		require.NotNil(t, got, "the refused question comes back as it is")
		assert.Equal(t, domain.StatusPending, got.Status)
		got, resolved, voteErr := s.Vote(ctx, p, q.ID, domain.Vote{By: domain.Person{Platform: "slack", ID: "U1"}, Label: "Yes"}, 1, false, tr)
		assert.Equal(t, domain.ERunNotPaused, domain.ErrorCode(voteErr))
		assert.False(t, resolved)
		require.NotNil(t, got, "the refused question comes back as it is")
		assert.Equal(t, domain.StatusPending, got.Status)
		require.Error(t, trErr)
		require.Error(t, voteErr)
		assert.Equal(t, trErr.Error(), voteErr.Error(), "a click and a deciding vote are refused in the same words")
		assert.Contains(t, trErr.Error(), state, "the refusal names the run's state")
		assert.Contains(t, trErr.Error(), "not paused", "the refusal says what is wrong in plain words")
		for _, http := range []string{"POST", "agent-runs", "/"} {
			assert.NotContains(t, trErr.Error(), http, "the store knows no HTTP route")
		}
	}
	refuse("running")

	ch, ok := s.(clientHolder)
	if !ok {
		return
	}
	require.NoError(t, ch.Client().Del(ctx, "askbridge:{"+p+"}:run:run-1").Err())
	refuse("unknown")
}

func testRunQuestions(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	var ids []string
	for i := range 6 {
		q := newQ(p, "run-long")
		q.Questions[0].Question = fmt.Sprintf("Step %d?", i)
		q.Fingerprint = domain.Fingerprint(q.Questions)
		create(t, s, q)
		ids = append(ids, q.ID)
		create(t, s, newQ(p, fmt.Sprintf("other-%d", i)))
	}
	qs, err := s.RunQuestions(ctx, p, "run-long")
	require.NoError(t, err)
	got := make([]string, len(qs))
	for i, q := range qs {
		got[i] = q.ID
	}
	assert.Equal(t, ids, got, "the run's questions only, in creation order")
	qs, err = s.RunQuestions(ctx, p, "no-such-run")
	require.NoError(t, err)
	assert.Empty(t, qs)
}
