package native_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store/native"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var ctx = context.Background()

func newQ(project, run string) *domain.Question {
	items := []domain.Item{{Question: "Deploy " + uuid.NewString()[:8] + "?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}}}
	now := time.Now().UTC().Truncate(time.Millisecond)
	return &domain.Question{ID: domain.NewQuestionID(project), ProjectID: project, RunID: run, AgentID: "bot", Kind: domain.KindQuestion,
		Status: domain.StatusPending, Questions: items, Targets: []domain.Target{}, CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(time.Hour), Fingerprint: domain.Fingerprint(items)}
}

func answer(by string) lifecycle.Transition {
	a := domain.Resolve([]domain.Item{{Question: "x"}}, [][]string{{"Yes"}})
	return lifecycle.Transition{To: domain.StatusAnswered, Answer: &a, By: &domain.Person{Platform: "api", ID: by}, At: time.Now().UTC()}
}

// TestReopenKeepsEverything: what was acknowledged is there after the
// store is closed and opened again on its directory, and every index
// works on it (pending list, deadlines, escalations, deliveries, run
// state, idempotency, drafts, events, audit).
func TestReopenKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	s, err := native.Open(native.Options{Dir: dir})
	require.NoError(t, err)
	p := "ops"
	pending := newQ(p, "run-1")
	pending.IdempotencyKey = "toolu_1"
	pending.Escalation = []domain.EscalationStep{{After: domain.Duration(time.Second)}}
	_, err = s.Create(ctx, pending)
	require.NoError(t, err)
	hook := newQ(p, "run-2")
	hook.Resume = &domain.Resume{URL: "https://runtime.example/resume"}
	_, err = s.Create(ctx, hook)
	require.NoError(t, err)
	_, err = s.PauseRun(ctx, p, "run-2", "bot", time.Now())
	require.NoError(t, err)
	tr := answer("alice")
	tr.RequirePausedRun, tr.ContinuationRunID, tr.DeliveryID = true, "run-3", "dlv-1"
	_, err = s.Transition(ctx, p, hook.ID, tr)
	require.NoError(t, err)
	require.NoError(t, s.PutDraft(ctx, p, pending.ID, "slack:U1", map[string][]string{"0": {"Yes"}}, time.Hour))
	require.NoError(t, s.AttachCopy(ctx, p, pending.ID, domain.Target{Platform: "slack", Channel: "C1", MessageTS: "1.1"}))
	first, err := s.Once(ctx, "slack-event-1", time.Hour)
	require.NoError(t, err)
	require.True(t, first)
	page := lifecycle.Delivery{ID: "pagerduty.trigger:" + pending.ID + ":0", ProjectID: p, QuestionID: pending.ID,
		Event: "pagerduty.trigger", Payload: []byte(`{"to":"ana"}`), CreatedAt: time.Now().Add(time.Hour)}
	queued, err := s.EnqueueDelivery(ctx, page)
	require.NoError(t, err)
	require.True(t, queued)
	var asked []string // the same question, answered five times
	for i := range 5 {
		q := newQ(p, fmt.Sprintf("run-h%d", i))
		q.Questions = []domain.Item{{Question: "Which auth?", Options: []domain.Option{{Label: "API key", Value: "API key"}, {Label: "OAuth", Value: "OAuth"}}}}
		q.Fingerprint = domain.Fingerprint(q.Questions)
		_, err = s.Create(ctx, q)
		require.NoError(t, err)
		_, err = s.Transition(ctx, p, q.ID, answer("maria"))
		require.NoError(t, err)
		asked = append([]string{q.ID}, asked...)
		// History is ordered by answer time in milliseconds; two answers in
		// the same millisecond tie in both stores (then by id), so each
		// answer here takes its own millisecond.
		time.Sleep(2 * time.Millisecond)
	}
	histKey := domain.HistoryKey("bot", []domain.Item{{Question: "Which auth?", Options: []domain.Option{{Label: "API key"}, {Label: "OAuth"}}}})
	lastEv, err := s.LastEventID(ctx, p)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	s = open(t, native.Options{Dir: dir})
	hist, err := s.History(ctx, p, histKey, 10)
	require.NoError(t, err)
	var histIDs []string
	for _, q := range hist {
		histIDs = append(histIDs, q.ID)
	}
	assert.Equal(t, asked, histIDs, "the history index is rebuilt, newest first")
	got, err := s.Get(ctx, p, pending.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusPending, got.Status)
	assert.Equal(t, "1.1", got.Targets[0].MessageTS, "the posted copy")
	loc, err := s.Locate(ctx, hook.ID)
	require.NoError(t, err)
	assert.Equal(t, p, loc)
	answered, err := s.Get(ctx, p, hook.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusAnswered, answered.Status)
	assert.Equal(t, "alice", answered.RespondedBy.ID)
	assert.Equal(t, "run-3", answered.ResumedRunID)
	list, err := s.List(ctx, p, domain.StatusPending, 0)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, pending.ID, list[0].ID)
	due, err := s.Due(ctx, time.Now().Add(2*time.Hour), 10)
	require.NoError(t, err)
	assert.Equal(t, []lifecycle.Ref{{ProjectID: p, ID: pending.ID}}, due)
	esc, err := s.DueEscalations(ctx, time.Now().Add(time.Minute), 10)
	require.NoError(t, err)
	assert.Equal(t, []lifecycle.Ref{{ProjectID: p, ID: pending.ID}}, esc)
	run, err := s.Run(ctx, p, "run-2")
	require.NoError(t, err)
	assert.Equal(t, domain.RunResumed, run.Status)
	again := newQ(p, "run-9")
	again.IdempotencyKey = "toolu_1"
	res, err := s.Create(ctx, again)
	require.NoError(t, err)
	assert.True(t, res.Reattached, "the idempotency key survived")
	assert.Equal(t, pending.ID, res.Question.ID)
	d, err := s.GetDraft(ctx, p, pending.ID, "slack:U1")
	require.NoError(t, err)
	assert.Equal(t, []string{"Yes"}, d["0"])
	first, err = s.Once(ctx, "slack-event-1", time.Hour)
	require.NoError(t, err)
	assert.False(t, first, "Once remembers across a restart")
	ds, err := s.ClaimDeliveries(ctx, time.Now(), time.Minute, 10)
	require.NoError(t, err)
	require.Len(t, ds, 1)
	assert.Equal(t, "dlv-1", ds[0].ID)
	require.NotNil(t, ds[0].Question)
	assert.Equal(t, domain.StatusAnswered, ds[0].Question.Status)
	require.NoError(t, s.FinishDelivery(ctx, ds[0]))
	queued, err = s.EnqueueDelivery(ctx, page)
	require.NoError(t, err)
	assert.False(t, queued, "a page queued before the restart is not queued again")
	ds, err = s.ClaimDeliveries(ctx, time.Now().Add(2*time.Hour), time.Minute, 10)
	require.NoError(t, err)
	require.Len(t, ds, 1)
	assert.Equal(t, page.ID, ds[0].ID)
	assert.JSONEq(t, `{"to":"ana"}`, string(ds[0].Payload))
	evs, err := s.Events(ctx, p, "", 100)
	require.NoError(t, err)
	require.NotEmpty(t, evs)
	assert.Equal(t, lastEv, evs[len(evs)-1].ID)
	require.NoError(t, s.AppendEvent(ctx, domain.Event{ProjectID: p, Type: "note"}))
	after, err := s.Events(ctx, p, lastEv, 10)
	require.NoError(t, err)
	require.Len(t, after, 1, "new events follow the old ones")
	trail, err := s.Audit(ctx, p, hook.ID, 0)
	require.NoError(t, err)
	var types []string
	for _, e := range trail {
		types = append(types, e.Type)
	}
	assert.Equal(t, []string{"asked", "resumed", "answered"}, types)
	// Numbering goes on after the restart: a new question lists last.
	next := newQ(p, "run-4")
	_, err = s.Create(ctx, next)
	require.NoError(t, err)
	list, err = s.List(ctx, p, "", 0)
	require.NoError(t, err)
	assert.Equal(t, next.ID, list[len(list)-1].ID)
}

// TestOneProcessPerDirectory: a second open of a directory in use is
// refused with words that say why and what to do.
func TestOneProcessPerDirectory(t *testing.T) {
	dir := t.TempDir()
	open(t, native.Options{Dir: dir})
	_, err := native.Open(native.Options{Dir: dir})
	require.ErrorIs(t, err, native.ErrInUse)
	assert.Contains(t, err.Error(), dir)
	assert.Contains(t, err.Error(), "REDIS_URL")
	assert.Contains(t, err.Error(), "--data-dir")
	assert.Contains(t, err.Error(), fmt.Sprintf("in use by another askbridge process, PID %d", os.Getpid()),
		"names the process that holds it")
}

// TestRetentionLeavesNothing: once retention has passed and the sweeper
// trimmed, nothing of a project is left, in memory or on disk, and the
// database file stops growing: its free pages are used again.
func TestRetentionLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	s, err := native.Open(native.Options{Dir: dir, Retention: time.Second})
	require.NoError(t, err)
	p := "busy"
	round := func() {
		for i := range 120 {
			q := newQ(p, fmt.Sprintf("run-%d", i%7))
			if i%3 == 0 {
				q.IdempotencyKey = fmt.Sprintf("k-%d", i)
			}
			if i%5 == 0 {
				q.Escalation = []domain.EscalationStep{{After: domain.Duration(time.Minute)}}
			}
			_, err := s.Create(ctx, q)
			require.NoError(t, err)
			require.NoError(t, s.PutDraft(ctx, p, q.ID, "slack:U1", map[string][]string{"0": {"Yes"}}, time.Hour))
			tr := answer("a")
			if i%4 == 1 {
				tr = lifecycle.Transition{To: domain.StatusCancelled, CancelReason: "changed plans", At: time.Now().UTC()}
			}
			if i%6 == 0 {
				tr.DeliveryID = uuid.NewString()
			}
			tr.Retention = time.Second
			_, err = s.Transition(ctx, p, q.ID, tr)
			require.NoError(t, err)
		}
		ds, err := s.ClaimDeliveries(ctx, time.Now(), time.Minute, 1000)
		require.NoError(t, err)
		for _, d := range ds {
			require.NoError(t, s.FinishDelivery(ctx, d))
		}
		time.Sleep(1100 * time.Millisecond)
		later := time.Now().Add(8 * 24 * time.Hour)
		for {
			n, err := s.Trim(ctx, later)
			require.NoError(t, err)
			if n == 0 {
				break
			}
		}
		mem, disk := s.Entries(p)
		require.Zero(t, mem, "nothing of the project left in memory")
		require.Zero(t, disk, "nothing of the project left on disk")
	}
	round()
	st, err := os.Stat(filepath.Join(dir, native.FileName))
	require.NoError(t, err)
	for range 2 {
		round()
	}
	st2, err := os.Stat(filepath.Join(dir, native.FileName))
	require.NoError(t, err)
	t.Logf("data file after one round: %d bytes; after three: %d bytes", st.Size(), st2.Size())
	assert.LessOrEqual(t, st2.Size(), st.Size()*2, "the file reuses what retention freed (%d then %d bytes)", st.Size(), st2.Size())
	ps, err := s.Projects(ctx)
	require.NoError(t, err)
	assert.Contains(t, ps, p)
	// At the next start the file, mostly free pages now, is rewritten
	// without them: its size goes back near that of an empty store.
	require.NoError(t, s.Close())
	s = open(t, native.Options{Dir: dir, Retention: time.Second, CompactAbove: 64 << 10})
	st3, err := os.Stat(filepath.Join(dir, native.FileName))
	require.NoError(t, err)
	t.Logf("after a restart: %d bytes", st3.Size())
	assert.Less(t, st3.Size(), st2.Size()/2, "compacted at start")
	mem, disk := s.Entries(p)
	assert.Zero(t, mem+disk)
	ps, err = s.Projects(ctx)
	require.NoError(t, err)
	assert.Contains(t, ps, p, "what was kept survives the compaction")
}

// TestPingFailsWhenTheStoreCannotAnswer: readiness (/readyz pings the
// store with its budget) fails while the store cannot answer in time,
// and recovers once it can.
func TestPingFailsWhenTheStoreCannotAnswer(t *testing.T) {
	s := open(t, native.Options{Dir: t.TempDir()})
	require.NoError(t, s.Ping(ctx))
	release := s.Hold()
	pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	err := s.Ping(pctx)
	cancel()
	release()
	require.Error(t, err)
	assert.Equal(t, domain.EUnavailable, domain.ErrorCode(err))
	assert.Contains(t, err.Error(), "did not answer in time")
	require.NoError(t, s.Ping(ctx), "ready again once the store answers")
}

// TestQueueOnEndKeptOverRestart: a delivery registered to go when its
// question ends is written with the question, so the store reopened on
// its directory still queues it when the question ends there.
func TestQueueOnEndKeptOverRestart(t *testing.T) {
	dir := t.TempDir()
	s, err := native.Open(native.Options{Dir: dir})
	require.NoError(t, err)
	q := newQ("ops", "run-1")
	_, err = s.Create(ctx, q)
	require.NoError(t, err)
	d := lifecycle.Delivery{ID: "pagerduty.resolve:" + q.ID + ":0", ProjectID: "ops", QuestionID: q.ID,
		Event: "pagerduty.resolve", Payload: []byte(`{"profile":"oncall"}`)}
	queued, err := s.QueueOnEnd(ctx, d, time.Second)
	require.NoError(t, err)
	require.True(t, queued)
	require.NoError(t, s.Close())

	s = open(t, native.Options{Dir: dir})
	queued, err = s.QueueOnEnd(ctx, d, time.Second)
	require.NoError(t, err)
	assert.False(t, queued, "still registered after the restart")
	tr := answer("maria")
	_, err = s.Transition(ctx, "ops", q.ID, tr)
	require.NoError(t, err)
	ds, err := s.ClaimDeliveries(ctx, tr.At.Add(2*time.Second), time.Minute, 10)
	require.NoError(t, err)
	require.Len(t, ds, 1)
	assert.Equal(t, d.ID, ds[0].ID)
	assert.JSONEq(t, `{"profile":"oncall"}`, string(ds[0].Payload))
	require.NotNil(t, ds[0].Question)
	assert.Equal(t, domain.StatusAnswered, ds[0].Question.Status)
}

// TestLeasesOfTheLastProcessAreClaimedAtOnce: one process owns the data
// directory, so a delivery that was leased (in flight) when the bridge
// stopped is due again at once when the store is opened on it, not when
// the lease runs out a minute later. Attempts already made still count.
func TestLeasesOfTheLastProcessAreClaimedAtOnce(t *testing.T) {
	dir := t.TempDir()
	s, err := native.Open(native.Options{Dir: dir})
	require.NoError(t, err)
	q := newQ("ops", "run-1")
	q.Resume = &domain.Resume{URL: "https://runtime.example/resume"}
	_, err = s.Create(ctx, q)
	require.NoError(t, err)
	_, err = s.PauseRun(ctx, "ops", "run-1", "bot", time.Now())
	require.NoError(t, err)
	tr := answer("alice")
	tr.RequirePausedRun, tr.ContinuationRunID, tr.DeliveryID = true, "run-2", "dlv-1"
	_, err = s.Transition(ctx, "ops", q.ID, tr)
	require.NoError(t, err)
	ds, err := s.ClaimDeliveries(ctx, time.Now(), time.Minute, 10)
	require.NoError(t, err)
	require.Len(t, ds, 1, "in flight when the bridge stops")
	require.NoError(t, s.Close())

	s = open(t, native.Options{Dir: dir})
	ds, err = s.ClaimDeliveries(ctx, time.Now(), time.Minute, 10)
	require.NoError(t, err)
	require.Len(t, ds, 1, "due at once after the restart, not a lease later")
	assert.Equal(t, "dlv-1", ds[0].ID)
	assert.Equal(t, 2, ds[0].Attempts, "the attempt in flight at the stop counts")
	again, err := s.ClaimDeliveries(ctx, time.Now(), time.Minute, 10)
	require.NoError(t, err)
	assert.Empty(t, again, "claimed now: leased to this process")
}
