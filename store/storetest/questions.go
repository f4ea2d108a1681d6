package storetest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testCreateGetLocate(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	q := newQ(p, "run-1")
	q.Context = "some *markdown*"
	q.Responders = domain.Responders{Users: []string{"slack:U1"}}
	res := create(t, s, q)
	assert.False(t, res.Reattached)
	got, err := s.Get(ctx, p, q.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusPending, got.Status)
	assert.Equal(t, q.Questions, got.Questions)
	assert.Equal(t, "some *markdown*", got.Context)
	assert.Equal(t, []string{"slack:U1"}, got.Responders.Users)
	assert.True(t, q.ExpiresAt.Equal(got.ExpiresAt))
	loc, err := s.Locate(ctx, q.ID)
	require.NoError(t, err)
	assert.Equal(t, p, loc)
	_, err = s.Get(ctx, "other", q.ID)
	assert.Equal(t, domain.ENotFound, domain.ErrorCode(err), "another project's question is not found")
	_, err = s.Locate(ctx, uuid.NewString())
	assert.Equal(t, domain.ENotFound, domain.ErrorCode(err))
	run, err := s.Run(ctx, p, "run-1")
	require.NoError(t, err)
	assert.Equal(t, domain.RunRunning, run.Status)
	ps, err := s.Projects(ctx)
	require.NoError(t, err)
	assert.Contains(t, ps, p)
}

func testList(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	var ids []string
	for i := 0; i < 3; i++ {
		q := newQ(p, fmt.Sprintf("run-%d", i))
		create(t, s, q)
		ids = append(ids, q.ID)
	}
	list, err := s.List(ctx, p, domain.StatusPending, 0)
	require.NoError(t, err)
	require.Len(t, list, 3)
	for i := range ids {
		assert.Equal(t, ids[i], list[i].ID, "oldest first")
	}
	_, err = s.Transition(ctx, p, ids[1], answer("a"))
	require.NoError(t, err)
	list, _ = s.List(ctx, p, domain.StatusPending, 0)
	assert.Len(t, list, 2)
	list, _ = s.List(ctx, p, domain.StatusAnswered, 0)
	require.Len(t, list, 1)
	assert.Equal(t, ids[1], list[0].ID)
	all, _ := s.List(ctx, p, "", 0)
	assert.Len(t, all, 3)
	other, _ := s.List(ctx, project(), "", 0)
	assert.Empty(t, other, "projects are isolated")
}

func testSupersede(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	first := newQ(p, "run-1")
	create(t, s, first)
	second := newQ(p, "run-1")
	res := create(t, s, second)
	require.NotNil(t, res.Superseded)
	assert.Equal(t, first.ID, res.Superseded.ID)
	assert.Equal(t, domain.StatusCancelled, res.Superseded.Status)
	assert.Equal(t, domain.CancelSuperseded, res.Superseded.CancelReason)
	got, _ := s.Get(ctx, p, first.ID)
	assert.Equal(t, domain.StatusCancelled, got.Status)
	pending, _ := s.List(ctx, p, domain.StatusPending, 0)
	require.Len(t, pending, 1)
	assert.Equal(t, second.ID, pending[0].ID)
	runQs, _ := s.RunQuestions(ctx, p, "run-1")
	require.Len(t, runQs, 2)
	assert.Equal(t, first.ID, runQs[0].ID, "creation order")
	// A superseded question cannot be answered any more.
	_, err := s.Transition(ctx, p, first.ID, answer("a"))
	assert.Equal(t, domain.EQuestionCancelled, domain.ErrorCode(err))
}

func testReattach(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	q := newQ(p, "run-1")
	create(t, s, q)
	again := newQ(p, "run-1", q.Questions...)
	res := create(t, s, again)
	assert.True(t, res.Reattached)
	assert.Equal(t, q.ID, res.Question.ID)
	assert.Nil(t, res.Superseded)
	_, err := s.Locate(ctx, again.ID)
	assert.Equal(t, domain.ENotFound, domain.ErrorCode(err), "the re-ask's id is not left behind")
	// Answered: a retry still gets the answer.
	_, err = s.Transition(ctx, p, q.ID, answer("alice"))
	require.NoError(t, err)
	res = create(t, s, newQ(p, "run-1", q.Questions...))
	assert.True(t, res.Reattached)
	assert.Equal(t, domain.StatusAnswered, res.Question.Status)
	assert.Equal(t, "alice", res.Question.RespondedBy.ID)
	// A different run asks anew.
	res = create(t, s, newQ(p, "run-2", q.Questions...))
	assert.False(t, res.Reattached)
	// Cancelled: asking again creates a new question.
	_, err = s.Transition(ctx, p, res.Question.ID, lifecycle.Transition{To: domain.StatusCancelled, CancelReason: domain.CancelAgent})
	require.NoError(t, err)
	res2 := create(t, s, newQ(p, "run-2", q.Questions...))
	assert.False(t, res2.Reattached)
	assert.NotEqual(t, res.Question.ID, res2.Question.ID)
}

// testNoReuse: nothing is approved twice. An identical approval in the
// same run is a new question once the first was decided, and a call that
// names itself with an idempotency key never takes another call's answer.
func testNoReuse(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	q := newQ(p, "run-1")
	q.Kind = domain.KindApproval
	create(t, s, q)
	pending := newQ(p, "run-1", q.Questions...)
	pending.Kind = domain.KindApproval
	assert.True(t, create(t, s, pending).Reattached, "a retry of a pending approval re-attaches")
	_, err := s.Transition(ctx, p, q.ID, answer("alice"))
	require.NoError(t, err)
	again := newQ(p, "run-1", q.Questions...)
	again.Kind = domain.KindApproval
	res := create(t, s, again)
	assert.False(t, res.Reattached, "an identical approval after the first was allowed is asked anew")
	assert.Equal(t, domain.StatusPending, res.Question.Status)

	k1 := newQ(p, "run-2")
	k1.IdempotencyKey = "toolu_1"
	create(t, s, k1)
	_, err = s.Transition(ctx, p, k1.ID, answer("alice"))
	require.NoError(t, err)
	k2 := newQ(p, "run-2", k1.Questions...)
	k2.IdempotencyKey = "toolu_2"
	res = create(t, s, k2)
	assert.False(t, res.Reattached, "another tool call (another key) is asked anew")
	assert.NotEqual(t, k1.ID, res.Question.ID)
}

func testIdempotency(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	q := newQ(p, "run-1")
	q.IdempotencyKey = "toolu_01"
	create(t, s, q)
	other := newQ(p, "run-9")
	other.IdempotencyKey = "toolu_01"
	res := create(t, s, other)
	assert.True(t, res.Reattached)
	assert.Equal(t, q.ID, res.Question.ID)
}

// testFirstWins: two replicas answer the same question at once, 100 times:
// exactly one wins, the other gets already_answered.
func testFirstWins(t *testing.T, open func() lifecycle.Store) {
	a, b := open(), open()
	p := project()
	for i := 0; i < 100; i++ {
		q := newQ(p, fmt.Sprintf("run-%d", i))
		create(t, a, q)
		var wins, conflicts atomic.Int32
		var wg sync.WaitGroup
		for j, s := range []lifecycle.Store{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.Transition(ctx, p, q.ID, answer(fmt.Sprint("person-", j)))
				switch {
				case err == nil:
					wins.Add(1)
				case domain.ErrorCode(err) == domain.EAlreadyAnswered:
					conflicts.Add(1)
				default:
					t.Errorf("unexpected error: %v", err)
				}
			}()
		}
		wg.Wait()
		require.Equal(t, int32(1), wins.Load(), "round %d", i)
		require.Equal(t, int32(1), conflicts.Load(), "round %d", i)
	}
}

func testDue(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	q := newQ(p, "run-1")
	q.ExpiresAt = time.Now().Add(-time.Second)
	later := newQ(p, "run-2")
	create(t, s, q)
	create(t, s, later)
	refs, err := s.Due(ctx, time.Now(), 100)
	require.NoError(t, err)
	assert.Contains(t, refs, lifecycle.Ref{ProjectID: p, ID: q.ID})
	assert.NotContains(t, refs, lifecycle.Ref{ProjectID: p, ID: later.ID})
	_, err = s.Transition(ctx, p, q.ID, lifecycle.Transition{To: domain.StatusExpired})
	require.NoError(t, err)
	refs, _ = s.Due(ctx, time.Now(), 100)
	assert.NotContains(t, refs, lifecycle.Ref{ProjectID: p, ID: q.ID})
}

func testRetention(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	q := newQ(p, "run-1")
	create(t, s, q)
	tr := answer("a")
	tr.Retention = 1200 * time.Millisecond
	_, err := s.Transition(ctx, p, q.ID, tr)
	require.NoError(t, err)
	_, err = s.Get(ctx, p, q.ID)
	require.NoError(t, err, "kept during retention")
	gone := WaitFor(ctx, 5*time.Second, func() bool {
		_, err := s.Get(ctx, p, q.ID)
		return domain.ErrorCode(err) == domain.ENotFound
	})
	assert.True(t, gone, "dropped after retention")
	all, err := s.List(ctx, p, "", 0)
	require.NoError(t, err)
	assert.Empty(t, all)
}

func testCopies(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	q := newQ(p, "run-1")
	q.Targets = []domain.Target{{Platform: "slack", Channel: "C1"}, {Platform: "discord", Channel: "42"}}
	create(t, s, q)
	attach := func(tg domain.Target) {
		t.Helper()
		require.NoError(t, s.AttachCopy(ctx, p, q.ID, tg))
	}
	attach(domain.Target{Platform: "slack", Channel: "C1", MessageTS: "171.1", URL: "https://x/p171"})
	attach(domain.Target{Platform: "discord", Channel: "42", MessageTS: "900", Refs: map[string]string{"token": "t1"}})
	// The same Discord copy again (a newer interaction token): replaced, not added.
	attach(domain.Target{Platform: "discord", Channel: "42", MessageTS: "900", Refs: map[string]string{"token": "t2"}})
	// A copy in a thread of the same channel is another copy.
	attach(domain.Target{Platform: "slack", Channel: "C1", ThreadTS: "170.0", MessageTS: "171.2"})
	// A target that failed keeps its error.
	attach(domain.Target{Platform: "slack", Channel: "C9", Error: "channel_not_found"})
	got, err := s.Get(ctx, p, q.ID)
	require.NoError(t, err)
	byKey := map[string]domain.Target{}
	for _, tg := range got.Targets {
		_, dup := byKey[tg.Key()]
		assert.False(t, dup, "one copy per target: %s", tg.Key())
		byKey[tg.Key()] = tg
	}
	require.Len(t, got.Targets, 4)
	assert.Equal(t, "171.1", byKey["slack:C1:"].MessageTS)
	assert.Equal(t, "https://x/p171", byKey["slack:C1:"].URL)
	assert.Equal(t, "t2", byKey["discord:42:"].Refs["token"])
	assert.Equal(t, "171.2", byKey["slack:C1:170.0"].MessageTS)
	assert.Equal(t, "channel_not_found", byKey["slack:C9:"].Error)
	assert.Equal(t, q.Questions, got.Questions, "attaching copies leaves the question as asked")
	// Copies survive the transition, and a copy updated afterwards (a
	// later interaction's token) keeps the answer.
	got, err = s.Transition(ctx, p, q.ID, answer("a"))
	require.NoError(t, err)
	assert.Len(t, got.Targets, 4)
	attach(domain.Target{Platform: "discord", Channel: "42", MessageTS: "900", Refs: map[string]string{"token": "t3"}})
	got, err = s.Get(ctx, p, q.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusAnswered, got.Status)
	assert.Equal(t, "yes", got.Response)
	assert.Equal(t, "a", got.RespondedBy.ID)
	require.Len(t, got.Targets, 4)
	for _, tg := range got.Targets {
		if tg.Platform == "discord" {
			assert.Equal(t, "t3", tg.Refs["token"])
		}
	}
}

func testLocateHint(t *testing.T, open func() lifecycle.Store) {
	a, b := open(), open()
	p := project()
	// b has read the projects before p existed: it must still find p's questions.
	_, _ = b.Locate(ctx, domain.NewQuestionID("nothing"))
	q := newQ(p, "run-1")
	q.ID = domain.NewQuestionID(p)
	create(t, a, q)
	for _, s := range []lifecycle.Store{a, b} {
		loc, err := s.Locate(ctx, q.ID)
		require.NoError(t, err)
		assert.Equal(t, p, loc)
	}
	// An id whose hint names another project is still found.
	odd := newQ(p, "run-2")
	odd.ID = domain.NewQuestionID("elsewhere")
	create(t, a, odd)
	loc, err := b.Locate(ctx, odd.ID)
	require.NoError(t, err)
	assert.Equal(t, p, loc)
	_, err = b.Locate(ctx, domain.NewQuestionID(p))
	assert.Equal(t, domain.ENotFound, domain.ErrorCode(err))
	_, err = b.Locate(ctx, "not an id")
	assert.Equal(t, domain.ENotFound, domain.ErrorCode(err))
}

func testListPendingLimit(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	var ids []string
	for i := range 5 {
		q := newQ(p, fmt.Sprintf("run-%d", i))
		// Deadlines in reverse creation order: listing is by creation.
		q.ExpiresAt = q.CreatedAt.Add(time.Duration(10-i) * time.Minute)
		create(t, s, q)
		ids = append(ids, q.ID)
	}
	list, err := s.List(ctx, p, domain.StatusPending, 0)
	require.NoError(t, err)
	require.Len(t, list, 5)
	for i := range ids {
		assert.Equal(t, ids[i], list[i].ID, "oldest first")
	}
	list, err = s.List(ctx, p, domain.StatusPending, 2)
	require.NoError(t, err)
	require.Len(t, list, 2, "the newest two")
	assert.Equal(t, ids[3], list[0].ID)
	assert.Equal(t, ids[4], list[1].ID)
	_, err = s.Transition(ctx, p, ids[4], answer("a"))
	require.NoError(t, err)
	list, _ = s.List(ctx, p, domain.StatusPending, 2)
	require.Len(t, list, 2)
	assert.Equal(t, []string{ids[2], ids[3]}, []string{list[0].ID, list[1].ID})
}

// testRoundTrip: every field of a question reads back as it was stored.
func testRoundTrip(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	q := newQ(p, "run-1", domain.Item{Question: "Ship it?", Header: "Deploy", MultiSelect: true, Options: []domain.Option{
		{Label: "Yes", Description: "all regions", Value: "yes", Recommended: true},
		{Label: "No", Value: "No", Veto: true}, {Label: "Later", Value: ""}}},
		domain.Item{Question: "Why?", Options: []domain.Option{}})
	q.ID = domain.NewQuestionID(p)
	q.AgentName, q.Kind, q.Context = "Deploy bot", domain.KindApproval, "line 1\nline 2 \"quoted\" ☃"
	q.Targets = []domain.Target{{Platform: "slack", Channel: "C1", ThreadTS: "1.2"}}
	q.Responders = domain.Responders{Users: []string{"slack:U1"}, Groups: map[string][]string{"discord_roles": {"9"}}, ExcludeRequester: true}
	q.Resume = &domain.Resume{URL: "https://runtime.example/resume"}
	q.Route, q.IdempotencyKey, q.RequestedBy, q.ApprovalsRequired = "oncall", "toolu_1", "slack:U2", 2
	q.OnTimeout = &domain.OnTimeout{Answer: "No"}
	q.Escalation = []domain.EscalationStep{{After: domain.Duration(time.Minute), Remind: true}}
	q.CreatedAt = time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)
	q.UpdatedAt = q.CreatedAt
	q.ExpiresAt = q.CreatedAt.Add(30*time.Minute + time.Nanosecond)
	create(t, s, q)
	got, err := s.Get(ctx, p, q.ID)
	require.NoError(t, err)
	want := *q
	want.Questions = slicesClone(q.Questions)
	want.Questions[0].Options[2].Value = "Later" // a value defaults to the label
	assert.Equal(t, want.Questions, got.Questions)
	assert.Equal(t, q.AgentID, got.AgentID)
	assert.Equal(t, q.AgentName, got.AgentName)
	assert.Equal(t, q.Kind, got.Kind)
	assert.Equal(t, q.Context, got.Context)
	assert.Equal(t, q.Targets, got.Targets)
	assert.Equal(t, q.Responders, got.Responders)
	assert.Equal(t, q.Resume, got.Resume)
	assert.Equal(t, q.Route, got.Route)
	assert.Equal(t, q.IdempotencyKey, got.IdempotencyKey)
	assert.Equal(t, q.RequestedBy, got.RequestedBy)
	assert.Equal(t, q.ApprovalsRequired, got.ApprovalsRequired)
	assert.Equal(t, q.OnTimeout, got.OnTimeout)
	assert.Equal(t, q.Escalation, got.Escalation)
	assert.Equal(t, q.Fingerprint, got.Fingerprint)
	assert.True(t, q.CreatedAt.Equal(got.CreatedAt), "created_at to the nanosecond: %v", got.CreatedAt)
	assert.True(t, q.ExpiresAt.Equal(got.ExpiresAt), "expires_at to the nanosecond: %v", got.ExpiresAt)
	assert.True(t, q.CreatedAt.Equal(got.UpdatedAt), "updated_at: %v", got.UpdatedAt)
}

func slicesClone(items []domain.Item) []domain.Item {
	out := make([]domain.Item, len(items))
	for i, it := range items {
		out[i] = it
		if it.Options != nil {
			out[i].Options = append([]domain.Option{}, it.Options...)
		}
	}
	return out
}

// testCancelNote: the free-text note given with a cancel is kept on the
// record, read back by another replica, and named in the audit trail.
func testCancelNote(t *testing.T, open func() lifecycle.Store) {
	s, other := open(), open()
	p := project()
	q := newQ(p, "run-1")
	create(t, s, q)
	by := &domain.Person{Platform: "api", ID: "alice"}
	got, err := s.Transition(ctx, p, q.ID, lifecycle.Transition{To: domain.StatusCancelled, CancelReason: domain.CancelUser,
		CancelNote: "no longer needed — rolled back", By: by, At: time.Now().UTC()})
	require.NoError(t, err)
	assert.Equal(t, "no longer needed — rolled back", got.CancelNote)
	again, err := other.Get(ctx, p, q.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusCancelled, again.Status)
	assert.Equal(t, domain.CancelUser, again.CancelReason)
	assert.Equal(t, "no longer needed — rolled back", again.CancelNote)

	plain := newQ(p, "run-2")
	create(t, s, plain)
	got, err = s.Transition(ctx, p, plain.ID, lifecycle.Transition{To: domain.StatusCancelled, CancelReason: domain.CancelAgent, At: time.Now().UTC()})
	require.NoError(t, err)
	assert.Empty(t, got.CancelNote)
}

// testCreateReturnsStored: the question Create returns is the record as
// another replica reads it (Get), field for field — a new run's question
// with escalation and an idempotency key, one superseding it, approvals
// starting and joining a batch, a re-attached re-ask.
func testCreateReturnsStored(t *testing.T, open func() lifecycle.Store) {
	s, other := open(), open()
	p := project()
	same := func(res lifecycle.CreateResult, what string) {
		t.Helper()
		require.NotNil(t, res.Question, what)
		got, err := other.Get(ctx, p, res.Question.ID)
		require.NoError(t, err)
		assert.Equal(t, got, res.Question, what)
		if res.Superseded != nil {
			got, err := other.Get(ctx, p, res.Superseded.ID)
			require.NoError(t, err)
			assert.Equal(t, got, res.Superseded, what+": the superseded question")
		}
	}
	first := newQ(p, "run-1")
	first.ID = domain.NewQuestionID(p)
	first.IdempotencyKey, first.Context = "k1", "ctx"
	first.Escalation = []domain.EscalationStep{{After: domain.Duration(time.Minute), Remind: true}}
	first.Targets = []domain.Target{{Platform: "slack", Channel: "C1"}}
	same(create(t, s, first), "a new run's question")
	second := newQ(p, "run-1")
	res := create(t, s, second)
	require.NotNil(t, res.Superseded)
	same(res, "a question superseding the run's pending one")
	same(create(t, s, newQ(p, "run-1", second.Questions...)), "a re-ask re-attached")
	a1 := newApproval(p, "run-2", "c1", "rm -rf build1", time.Minute)
	same(create(t, s, a1), "an approval starting a batch")
	a2 := newApproval(p, "run-2", "c2", "rm -rf build2", time.Minute)
	res = create(t, s, a2)
	assert.Equal(t, a1.ID, res.Question.BatchID, "the second approval joins the first's batch")
	same(res, "an approval joining a batch")
}
