package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Faults is a store whose commits a test can make fail or wait: the
// embedded store through its commit hook, Redis by refusing or pausing
// writes.
type Faults struct {
	Store lifecycle.Store
	// Fail makes every commit fail, as a full disk does, until heal is
	// called.
	Fail func(t *testing.T) (heal func())
	// Hold makes the commits from now on wait until release is called;
	// held is closed once a commit is waiting.
	Hold func(t *testing.T) (held <-chan struct{}, release func())
}

// RunDurability is the conformance suite's part on durability: no reader
// sees a change before it is durable, a failed commit leaves no trace,
// and the store takes changes again once commits succeed.
func RunDurability(t *testing.T, open func(t *testing.T) Faults) {
	t.Run("FailedCommitLeavesNoTraceAndRecovers", func(t *testing.T) { testFailedCommit(t, open(t)) })
	t.Run("HeldCommitShowsNothingUntilDurable", func(t *testing.T) { testHeldCommit(t, open(t)) })
}

func answerWith(response, by string) lifecycle.Transition {
	a := domain.Resolve([]domain.Item{{Question: "x"}}, [][]string{{response}})
	return lifecycle.Transition{To: domain.StatusAnswered, Answer: &a, By: &domain.Person{Platform: "api", ID: by}, At: time.Now().UTC()}
}

// shown is what every reader shows of question id: its status (Get), whether
// the pending list holds it, its audit entry types, the event types about
// it, and the status of its run's questions. A reader that does not answer
// within wait shows nothing ("" or nil): waiting for a commit is allowed,
// showing what is not durable is not.
type shown struct {
	status    domain.Status
	response  string
	inPending bool
	audit     []string
	events    []string
	run       []domain.Status
}

func look(s lifecycle.Store, p, run, id string, wait time.Duration) shown {
	var out shown
	short := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, wait) }
	c, cancel := short()
	if q, err := s.Get(c, p, id); err == nil {
		out.status, out.response = q.Status, q.Response
	}
	cancel()
	c, cancel = short()
	if qs, err := s.List(c, p, domain.StatusPending, 100); err == nil {
		out.inPending = slices.ContainsFunc(qs, func(q *domain.Question) bool { return q.ID == id })
	}
	cancel()
	c, cancel = short()
	if page, err := s.ListPage(c, p, lifecycle.ListQuery{Status: domain.StatusAnswered}); err == nil {
		if slices.ContainsFunc(page.Questions, func(q *domain.Question) bool { return q.ID == id }) {
			out.status = domain.StatusAnswered // a page of answered questions shows it answered, whatever Get said
		}
	}
	cancel()
	c, cancel = short()
	if trail, err := s.Audit(c, p, id, 0); err == nil {
		for _, e := range trail {
			out.audit = append(out.audit, e.Type)
		}
	}
	cancel()
	c, cancel = short()
	if evs, err := s.Events(c, p, "", 100); err == nil {
		for _, e := range evs {
			if e.QuestionID == id {
				out.events = append(out.events, e.Type)
			}
		}
	}
	cancel()
	c, cancel = short()
	if qs, err := s.RunQuestions(c, p, run); err == nil {
		for _, q := range qs {
			out.run = append(out.run, q.Status)
		}
	}
	cancel()
	return out
}

// testFailedCommit: an answer whose commit fails is refused as
// unavailable and leaves no trace: Get, the pending list, the audit trail,
// the events, the run's questions and a waiter all show the question
// pending, and a new ask that failed is nowhere. Once commits succeed
// again the store takes changes by itself (no restart), and the answer
// then given is the one kept.
func testFailedCommit(t *testing.T, f Faults) {
	s := f.Store
	p := project()
	q := newQ(p, "run-1")
	create(t, s, q)
	finals := make(chan *domain.Question, 4)
	stop := s.WatchFinal(p, q.ID, func(fq *domain.Question) {
		if fq != nil {
			finals <- fq
		}
	})
	defer stop()

	heal := f.Fail(t)
	_, err := s.Transition(ctx, p, q.ID, answerWith("Yes", "alice"))
	require.Error(t, err, "the commit failed, so the answer must be refused")
	assert.Equal(t, domain.EUnavailable, domain.ErrorCode(err), "%v", err)
	other := newQ(p, "run-2")
	_, err = s.Create(ctx, other)
	require.Error(t, err, "the commit failed, so the ask must be refused")

	got := look(s, p, "run-1", q.ID, 2*time.Second)
	assert.Equal(t, shown{status: domain.StatusPending, inPending: true, audit: []string{"asked"},
		events: []string{domain.EventCreated}, run: []domain.Status{domain.StatusPending}}, got,
		"after a failed commit every reader shows the question as it was")
	_, err = s.Get(ctx, p, other.ID)
	assert.Equal(t, domain.ENotFound, domain.ErrorCode(err), "the ask whose commit failed is nowhere: %v", err)
	select {
	case fq := <-finals:
		t.Fatalf("a waiter was handed %s (%q), which was never committed", fq.Status, fq.Response)
	case <-time.After(100 * time.Millisecond):
	}

	heal()
	var final *domain.Question
	recovered := WaitFor(ctx, 15*time.Second, func() bool {
		out, err := s.Transition(ctx, p, q.ID, answerWith("No", "bob"))
		if err == nil {
			final = out
		}
		return err == nil || domain.ErrorCode(err) != domain.EUnavailable
	})
	require.True(t, recovered, "once commits succeed again, the store takes changes without a restart")
	require.NotNil(t, final, "the question was still pending, so the second answer is taken")
	assert.Equal(t, "No", final.Response)
	got = look(s, p, "run-1", q.ID, 2*time.Second)
	assert.Equal(t, domain.StatusAnswered, got.status)
	assert.Equal(t, "No", got.response, "the answer kept is the one whose commit succeeded")
	assert.Equal(t, []string{"asked", "answered"}, got.audit)
	select {
	case fq := <-finals:
		assert.Equal(t, "No", fq.Response)
	case <-time.After(3 * time.Second):
		t.Fatal("the waiter was not handed the committed answer")
	}
}

// testHeldCommit: while an answer's commit waits (a slow disk, a paused
// write), no reader shows it: Get, the pending list, the audit trail, the
// events, the run's questions and a waiter started meanwhile show the
// question pending or wait; the caller has no reply yet. Once the commit
// is released, the caller and every reader see the answer.
func testHeldCommit(t *testing.T, f Faults) {
	s := f.Store
	p := project()
	q := newQ(p, "run-1")
	create(t, s, q)

	held, release := f.Hold(t)
	released := false
	defer func() {
		if !released {
			release()
		}
	}()
	type result struct {
		q   *domain.Question
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := s.Transition(ctx, p, q.ID, answerWith("Yes", "alice"))
		done <- result{out, err}
	}()
	select {
	case <-held:
	case <-time.After(5 * time.Second):
		t.Fatal("the answer's commit never started")
	}
	finals := make(chan *domain.Question, 4)
	stop := s.WatchFinal(p, q.ID, func(fq *domain.Question) {
		if fq != nil {
			finals <- fq
		}
	})
	defer stop()

	got := look(s, p, "run-1", q.ID, 150*time.Millisecond)
	assert.NotEqual(t, domain.StatusAnswered, got.status, "Get or a page of answered questions showed an answer whose commit has not returned")
	assert.NotContains(t, got.audit, "answered", "the audit trail showed an answer whose commit has not returned")
	assert.NotContains(t, got.events, domain.EventAnswered, "the events showed an answer whose commit has not returned")
	assert.NotContains(t, got.run, domain.StatusAnswered, "the run's questions showed an answer whose commit has not returned")
	if got.status == domain.StatusPending {
		assert.True(t, got.inPending, "a question Get shows pending is in the pending list")
	}
	select {
	case fq := <-finals:
		t.Fatalf("a waiter was handed %s (%q) before its commit returned", fq.Status, fq.Response)
	case r := <-done:
		t.Fatalf("the answer returned (%v) while its commit was held", r.err)
	default:
	}

	release()
	released = true
	select {
	case r := <-done:
		require.NoError(t, r.err)
		assert.Equal(t, "Yes", r.q.Response)
	case <-time.After(5 * time.Second):
		t.Fatal("the answer did not return once its commit was released")
	}
	got = look(s, p, "run-1", q.ID, 2*time.Second)
	assert.Equal(t, shown{status: domain.StatusAnswered, response: "Yes", audit: []string{"asked", "answered"},
		events: []string{domain.EventCreated, domain.EventAnswered}, run: []domain.Status{domain.StatusAnswered}}, got)
	select {
	case fq := <-finals:
		assert.Equal(t, "Yes", fq.Response)
	case <-time.After(3 * time.Second):
		t.Fatal("the waiter was not handed the committed answer")
	}
}
