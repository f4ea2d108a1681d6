package native_test

import (
	"testing"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store/native"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRecordsReadFromTheFile: once committed, a question's text, copies and
// result and its run are not held in memory but read from the data file,
// and every reader shows them as they were written: Get, List, History,
// RunQuestions, Run, Audit, and a change made to a record read back from
// the file (a second copy, an answer) keeps what the record held.
func TestRecordsReadFromTheFile(t *testing.T) {
	s := open(t, native.Options{Dir: t.TempDir()})
	p := "ops"
	var made []*domain.Question
	for i := range 6 {
		q := newQ(p, "run-"+string(rune('a'+i%3)))
		res, err := s.Create(ctx, q)
		require.NoError(t, err)
		require.NoError(t, s.AttachCopy(ctx, p, q.ID, domain.Target{Platform: "slack", Channel: "C1", MessageTS: "1.1"}))
		made = append(made, res.Question)
	}
	docs, runs := s.InMemory()
	assert.Zero(t, docs, "question docs held in memory once committed")
	assert.Zero(t, runs, "runs held in memory once committed")

	// A change to records read back from the file.
	last := made[len(made)-1]
	require.NoError(t, s.AttachCopy(ctx, p, last.ID, domain.Target{Platform: "discord", Channel: "D1", MessageTS: "2.2"}))
	answered, err := s.Transition(ctx, p, last.ID, answer("alice"))
	require.NoError(t, err)
	require.Equal(t, domain.StatusAnswered, answered.Status)
	require.Len(t, answered.Targets, 2, "the copy attached before the answer")
	assert.Equal(t, last.Questions, answered.Questions)
	docs, runs = s.InMemory()
	assert.Zero(t, docs)
	assert.Zero(t, runs)

	got, err := s.Get(ctx, p, last.ID)
	require.NoError(t, err)
	assert.Equal(t, answered.Targets, got.Targets)
	assert.Equal(t, answered.Answers, got.Answers)
	list, err := s.List(ctx, p, "", 100)
	require.NoError(t, err)
	require.Len(t, list, len(made))
	for i, q := range list {
		assert.Equal(t, made[i].Questions, q.Questions)
		assert.Equal(t, "slack", q.Targets[0].Platform)
	}
	hist, err := s.History(ctx, p, domain.HistoryKey(last.AgentID, last.Questions), 10)
	require.NoError(t, err)
	require.Len(t, hist, 1)
	assert.Equal(t, last.ID, hist[0].ID)
	rq, err := s.RunQuestions(ctx, p, last.RunID)
	require.NoError(t, err)
	assert.Len(t, rq, 2) // runs a, b, c: two questions each; the second superseded the first
	run, err := s.Run(ctx, p, last.RunID)
	require.NoError(t, err)
	assert.Equal(t, "bot", run.AgentID)
	audit, err := s.Audit(ctx, p, last.ID, 10)
	require.NoError(t, err)
	require.Len(t, audit, 2)
	assert.Equal(t, "asked", audit[0].Type)
	assert.Equal(t, "alice", audit[1].By.ID)
}

// TestPendingIsToldFromMemory: Pending, which a parked wait's recheck asks
// instead of reading the record, follows the question: pending until it
// is answered, and false for a question the store does not hold.
func TestPendingIsToldFromMemory(t *testing.T) {
	s := open(t, native.Options{Dir: t.TempDir()})
	q := newQ("ops", "run")
	_, err := s.Create(ctx, q)
	require.NoError(t, err)
	require.True(t, s.Pending("ops", q.ID))
	require.False(t, s.Pending("dev", q.ID), "another project's")
	require.False(t, s.Pending("ops", domain.NewQuestionID("ops")), "unknown")
	_, err = s.Transition(ctx, "ops", q.ID, answer("alice"))
	require.NoError(t, err)
	require.False(t, s.Pending("ops", q.ID), "answered")
}
