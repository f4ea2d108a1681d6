package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newApproval is an approval of the tool call callID (Bash, command cmd),
// keyed by its call as the domain keys it, batched within window.
func newApproval(project, run, callID, cmd string, window time.Duration) *domain.Question {
	items := []domain.Item{{Question: "Allow Bash: " + cmd + "?", Options: []domain.Option{{Label: "Allow", Value: "Allow"}, {Label: "Deny", Value: "Deny"}}}}
	q := newQ(project, run, items...)
	q.Kind = domain.KindApproval
	in, _ := json.Marshal(map[string]string{"command": cmd})
	q.Action = &domain.Action{Tool: "Bash", Input: in, Digest: domain.ActionDigest("Bash", in), CallID: callID}
	q.Fingerprint = domain.CallKey(callID)
	q.BatchWindow = window
	return q
}

// testApprovalsCoexist: approvals of distinct tool calls never supersede
// each other, nor a question, nor are they superseded by one; a question
// still supersedes the run's pending question.
func testApprovalsCoexist(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	question := newQ(p, "run-1")
	create(t, s, question)
	var calls []*domain.Question
	for i, cmd := range []string{"rm -rf build1", "rm -rf build2", "rm -rf build3"} {
		a := newApproval(p, "run-1", "toolu_"+string(rune('a'+i)), cmd, 0)
		res := create(t, s, a)
		if res.Superseded != nil {
			t.Errorf("asking approval %d cancelled %q as %s", i+1, res.Superseded.Questions[0].Question, res.Superseded.CancelReason)
		}
		assert.False(t, res.Reattached)
		calls = append(calls, a)
	}
	later := newQ(p, "run-1")
	res := create(t, s, later)
	require.NotNil(t, res.Superseded, "a question still supersedes the run's pending question")
	assert.Equal(t, question.ID, res.Superseded.ID)
	for _, a := range calls {
		got, err := s.Get(ctx, p, a.ID)
		require.NoError(t, err)
		assert.Equal(t, domain.StatusPending, got.Status, "%s: %s %s", a.Questions[0].Question, got.Status, got.CancelReason)
	}
	pending, err := s.List(ctx, p, domain.StatusPending, 0)
	require.NoError(t, err)
	assert.Len(t, pending, 4, "three approvals and the latest question")

	// Deciding one approval leaves the others and the run as they were.
	_, err = s.Transition(ctx, p, calls[0].ID, answer("alice"))
	require.NoError(t, err)
	intruder := newApproval(p, "run-1", "toolu_x", "ls", 0)
	intruder.AgentID = "other"
	_, err = s.Create(ctx, intruder)
	assert.Equal(t, domain.EConflict, domain.ErrorCode(err), "the run still belongs to its agent")
	for _, a := range calls[1:] {
		got, _ := s.Get(ctx, p, a.ID)
		assert.Equal(t, domain.StatusPending, got.Status)
	}
}

// testCallKeyReattach: the same tool call asked again re-attaches to its
// record whatever became of it (pending, decided, withdrawn), in its run
// only; another call with the same words is its own approval.
func testCallKeyReattach(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	a := newApproval(p, "run-1", "toolu_1", "rm -rf build", 0)
	create(t, s, a)
	again := newApproval(p, "run-1", "toolu_1", "rm -rf build", 0)
	again.Questions[0].Question = "Allow Bash (again): rm -rf build?"
	res := create(t, s, again)
	assert.True(t, res.Reattached, "the same call re-attaches, whatever its words")
	assert.Equal(t, a.ID, res.Question.ID)

	twin := newApproval(p, "run-1", "toolu_2", "rm -rf build", 0)
	res = create(t, s, twin)
	assert.False(t, res.Reattached, "another call with the same command is its own approval")
	if res.Superseded != nil {
		t.Errorf("asking another call cancelled %q as %s", res.Superseded.Questions[0].Question, res.Superseded.CancelReason)
	}

	_, err := s.Transition(ctx, p, a.ID, answer("alice"))
	require.NoError(t, err)
	res = create(t, s, newApproval(p, "run-1", "toolu_1", "rm -rf build", 0))
	assert.True(t, res.Reattached, "a decided call hands back its decision")
	assert.Equal(t, domain.StatusAnswered, res.Question.Status)
	assert.Equal(t, "alice", res.Question.RespondedBy.ID)

	_, err = s.Transition(ctx, p, twin.ID, lifecycle.Transition{To: domain.StatusCancelled, CancelReason: domain.CancelAgent, At: time.Now()})
	require.NoError(t, err)
	res = create(t, s, newApproval(p, "run-1", "toolu_2", "rm -rf build", 0))
	assert.True(t, res.Reattached, "a withdrawn call stays withdrawn: it is not asked twice")
	assert.Equal(t, domain.StatusCancelled, res.Question.Status)

	res = create(t, s, newApproval(p, "run-2", "toolu_1", "rm -rf build", 0))
	assert.False(t, res.Reattached, "call ids are per run")

	// With an idempotency key too (the Claude Code hook sends both), the
	// call still finds its record.
	k := newApproval(p, "run-3", "toolu_9", "make", 0)
	k.IdempotencyKey = "approval:toolu_9"
	create(t, s, k)
	k2 := newApproval(p, "run-3", "toolu_9", "make", 0)
	res = create(t, s, k2)
	assert.True(t, res.Reattached)
	assert.Equal(t, k.ID, res.Question.ID)
}

// testBatchWindow: approvals of a run asked within the window of the
// latest one share its batch (named by the first); one asked later opens
// a new batch; a batch named on create is joined whatever the time;
// questions have none.
func testBatchWindow(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	window := 1500 * time.Millisecond
	first := newApproval(p, "run-1", "c1", "rm -rf build1", window)
	create(t, s, first)
	second := newApproval(p, "run-1", "c2", "rm -rf build2", window)
	second.CreatedAt = first.CreatedAt.Add(time.Second)
	third := newApproval(p, "run-1", "c3", "rm -rf build3", window)
	third.CreatedAt = first.CreatedAt.Add(2 * time.Second) // within the window of the second
	late := newApproval(p, "run-1", "c4", "rm -rf build4", window)
	late.CreatedAt = first.CreatedAt.Add(5 * time.Second)
	forced := newApproval(p, "run-1", "c5", "rm -rf build5", window)
	forced.CreatedAt = first.CreatedAt.Add(time.Minute)
	forced.BatchID = first.ID
	alone := newApproval(p, "run-1", "c6", "rm -rf build6", 0)
	alone.CreatedAt = first.CreatedAt.Add(time.Minute)
	other := newApproval(p, "run-2", "c7", "rm -rf build7", window)
	q := newQ(p, "run-1")
	for _, x := range []*domain.Question{second, third, late, forced, alone, other, q} {
		create(t, s, x)
	}
	batch := func(x *domain.Question) string {
		got, err := s.Get(ctx, p, x.ID)
		require.NoError(t, err)
		return got.BatchID
	}
	assert.Equal(t, first.ID, batch(first), "the first approval names its batch")
	assert.Equal(t, first.ID, batch(second))
	assert.Equal(t, first.ID, batch(third), "the window runs from the latest approval")
	assert.Equal(t, late.ID, batch(late), "asked after the window: a batch of its own")
	assert.Equal(t, first.ID, batch(forced), "a batch named on create is joined")
	assert.Equal(t, alone.ID, batch(alone), "no window: a batch of one")
	assert.Equal(t, other.ID, batch(other), "batches never span runs")
	assert.Empty(t, batch(q), "questions are never batched")
	qs, err := s.RunQuestions(ctx, p, "run-1")
	require.NoError(t, err)
	b := domain.NewBatch(first.ID, qs)
	require.NotNil(t, b)
	ids := []string{}
	for _, x := range b.Questions {
		ids = append(ids, x.ID)
	}
	assert.Equal(t, []string{first.ID, second.ID, third.ID, forced.ID}, ids)
}

// testBatchContinuation: in webhook mode every call of a run is decided
// on its own, and all of them resume the one continuation the first
// decision created (each with its own resume delivery); a question still
// needs its run paused.
func testBatchContinuation(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	var calls []*domain.Question
	for _, c := range []string{"c1", "c2", "c3"} {
		a := newApproval(p, "run-1", c, "rm -rf "+c, time.Second)
		a.Resume = &domain.Resume{URL: "https://runtime.example/resume"}
		create(t, s, a)
		calls = append(calls, a)
	}
	_, err := s.PauseRun(ctx, p, "run-1", "bot", time.Now())
	require.NoError(t, err)
	decide := func(q *domain.Question, cont string) (*domain.Question, error) {
		tr := answer("alice")
		tr.RequirePausedRun, tr.ContinuationRunID, tr.DeliveryID = true, cont, uuid.NewString()
		return s.Transition(ctx, p, q.ID, tr)
	}
	first, err := decide(calls[0], "cont-1")
	require.NoError(t, err)
	assert.Equal(t, "cont-1", first.ResumedRunID)
	second, err := decide(calls[1], "cont-2")
	require.NoError(t, err, "the run was resumed by a call of its own: the others still take decisions")
	assert.Equal(t, "cont-1", second.ResumedRunID, "one continuation for the run")
	_, err = s.Run(ctx, p, "cont-2")
	assert.Equal(t, domain.ENotFound, domain.ErrorCode(err), "no second continuation")
	third, err := decide(calls[2], "cont-3")
	require.NoError(t, err)
	assert.Equal(t, "cont-1", third.ResumedRunID)
	ds, err := s.ClaimDeliveries(ctx, time.Now(), time.Minute, 10)
	require.NoError(t, err)
	assert.Len(t, ds, 3, "a resume delivery per call")

	q := newQ(p, "run-2")
	q.Resume = &domain.Resume{URL: "https://runtime.example/resume"}
	create(t, s, q)
	tr := answer("alice")
	tr.RequirePausedRun, tr.ContinuationRunID = true, "cont-9"
	_, err = s.Transition(ctx, p, q.ID, tr)
	assert.Equal(t, domain.ERunNotPaused, domain.ErrorCode(err), "a question still waits for its run's pause")
}
