package lifecycle_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bash is the approval of one Bash call, as the Claude Code hook asks it.
func bash(run, callID, cmd string) *domain.AskRequest {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return &domain.AskRequest{RunID: run, Kind: domain.KindApproval, Question: "Allow Bash: " + cmd + "?", Header: "Approval",
		Options: []domain.Option{{Label: "Allow"}, {Label: "Deny"}},
		Action:  &domain.Action{Tool: "Bash", Input: in, CallID: callID}}
}

func batchOf(run string, cmds ...string) *domain.BatchRequest {
	b := &domain.BatchRequest{RunID: run}
	for i, c := range cmds {
		in, _ := json.Marshal(map[string]string{"command": c})
		b.Approvals = append(b.Approvals, domain.BatchCall{Action: &domain.Action{Tool: "Bash", Input: in, CallID: fmt.Sprintf("toolu_%d", i+1)}})
	}
	return b
}

func status(t *testing.T, f *fixture, id string) string {
	t.Helper()
	q, err := f.store.Get(ctx, "ops", id)
	require.NoError(t, err)
	if q.Status == domain.StatusCancelled {
		return "cancelled (" + q.CancelReason + ")"
	}
	if q.Decision != nil {
		return string(q.Status) + " (" + q.Decision.Behavior + ")"
	}
	return string(q.Status)
}

// TestParallelApprovalsCoexistInABatch: three approvals of one run asked
// at once (as three concurrent hooks ask them) all stay pending, in one
// batch; an ask_user question neither supersedes them nor is superseded
// by them, and a later question still supersedes it; the same call asked
// again re-attaches; an approval after the window opens a new batch.
func TestParallelApprovalsCoexistInABatch(t *testing.T) {
	f := newFixture(t, "")
	question, err := f.router.Ask(ctx, "ops", &domain.AskRequest{RunID: "s1", Question: "Which cache?"}, "")
	require.NoError(t, err)
	var wg sync.WaitGroup
	ids := make([]string, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := f.router.Ask(ctx, "ops", bash("s1", fmt.Sprint("toolu_", i), fmt.Sprint("rm -rf build", i+1)), "")
			require.NoError(t, err)
			ids[i] = res.Question.ID
		}()
	}
	wg.Wait()
	batch := ""
	for i, id := range ids {
		assert.Equal(t, "pending", status(t, f, id), "approval %d", i+1)
		q, _ := f.store.Get(ctx, "ops", id)
		if batch == "" {
			batch = q.BatchID
		}
		assert.Equal(t, batch, q.BatchID, "one batch")
	}
	assert.Equal(t, "pending", status(t, f, question.Question.ID), "approvals supersede no question")
	b, err := f.router.Batch(ctx, "ops", batch)
	require.NoError(t, err)
	assert.Len(t, b.Questions, 3)
	assert.Equal(t, domain.BatchPending, b.Status)

	again, err := f.router.Ask(ctx, "ops", bash("s1", "toolu_1", "rm -rf build2"), "")
	require.NoError(t, err)
	assert.False(t, again.Created)
	assert.Equal(t, ids[1], again.Question.ID, "the same call re-attaches")

	later, err := f.router.Ask(ctx, "ops", &domain.AskRequest{RunID: "s1", Question: "Which database?"}, "")
	require.NoError(t, err)
	assert.Equal(t, "cancelled (superseded)", status(t, f, question.Question.ID), "a question still supersedes the run's question")
	assert.Equal(t, "pending", status(t, f, later.Question.ID))
	for _, id := range ids {
		assert.Equal(t, "pending", status(t, f, id), "a question supersedes no approval")
	}

	f.clock.add(2 * time.Second)
	fourth, err := f.router.Ask(ctx, "ops", bash("s1", "toolu_9", "make"), "")
	require.NoError(t, err)
	assert.NotEqual(t, batch, fourth.Question.BatchID, "asked after the window: a new batch")
}

// TestBatchWindowFromTheRoute: a route's batch_window replaces the default.
func TestBatchWindowFromTheRoute(t *testing.T) {
	f := newFixture(t, "", domain.Route{Name: "slow", BatchWindow: 10 * time.Second})
	a := bash("s1", "c1", "ls")
	a.Route = "slow"
	first, err := f.router.Ask(ctx, "ops", a, "")
	require.NoError(t, err)
	f.clock.add(5 * time.Second)
	b := bash("s1", "c2", "pwd")
	b.Route = "slow"
	second, err := f.router.Ask(ctx, "ops", b, "")
	require.NoError(t, err)
	assert.Equal(t, first.Question.BatchID, second.Question.BatchID, "5 s apart, within the route's 10 s")
}

// TestAllowAllKeepsEarlierDecisions: "Allow all" decides every call still
// pending, each its own record with its own decision and audit entry,
// each waiter woken with its own record; a call denied before keeps its
// denial.
func TestAllowAllKeepsEarlierDecisions(t *testing.T) {
	f := newFixture(t, "")
	res, err := f.router.AskBatch(ctx, "ops", batchOf("s1", "rm -rf build1", "rm -rf build2", "rm -rf build3"), "")
	require.NoError(t, err)
	require.Equal(t, 3, res.Created)
	assert.Contains(t, res.Message, "3 approval(s) asked")
	ids := []string{res.Questions[0].ID, res.Questions[1].ID, res.Questions[2].ID}
	for _, q := range res.Questions {
		assert.Equal(t, res.BatchID, q.BatchID)
	}
	assert.Equal(t, "Allow Bash: rm -rf build2?", res.Questions[1].Questions[0].Question, "the default text names the call")

	waited := make([]chan *domain.Question, 3)
	for i, id := range ids {
		waited[i] = make(chan *domain.Question, 1)
		go func() {
			q, _ := f.router.Wait(ctx, "ops", id, 10*time.Second)
			waited[i] <- q
		}()
	}
	reason := "keep build2"
	_, err = f.router.Answer(ctx, "ops", ids[1], domain.RespondRequest{Reason: &reason}, slackP("alice"))
	require.NoError(t, err)

	out, err := f.router.DecideBatch(ctx, "ops", res.BatchID, domain.BatchRespondRequest{Decision: domain.DecideAllow}, slackP("bob"), false)
	require.NoError(t, err)
	assert.Equal(t, []string{ids[0], ids[2]}, out.Decided)
	assert.Equal(t, []string{ids[1]}, out.Already)
	assert.Empty(t, out.Refused)
	assert.Equal(t, domain.BatchDecided, out.Batch.Status)
	assert.Equal(t, []string{"answered (allow)", "answered (deny)", "answered (allow)"},
		[]string{status(t, f, ids[0]), status(t, f, ids[1]), status(t, f, ids[2])})
	for i, id := range ids {
		select {
		case q := <-waited[i]:
			require.NotNil(t, q)
			assert.Equal(t, id, q.ID, "each waiter gets its own call")
			assert.Equal(t, domain.StatusAnswered, q.Status)
		case <-time.After(5 * time.Second):
			t.Fatalf("waiter %d not woken", i)
		}
	}
	q, _ := f.store.Get(ctx, "ops", ids[1])
	assert.Equal(t, "alice", q.RespondedBy.ID, "the earlier decision stands")
	assert.Equal(t, "keep build2", q.Decision.Message)
	trail, err := f.store.Audit(ctx, "ops", ids[0], 0)
	require.NoError(t, err)
	var types []string
	for _, e := range trail {
		types = append(types, e.Type)
	}
	assert.Contains(t, types, "answered")
	assert.Contains(t, types, "batch_decided")

	_, err = f.router.DecideBatch(ctx, "ops", res.BatchID, domain.BatchRespondRequest{Decision: domain.DecideDeny}, slackP("bob"), false)
	assert.Equal(t, domain.EAlreadyAnswered, domain.ErrorCode(err), "a second Deny all changes nothing")
	assert.Equal(t, "answered (allow)", status(t, f, ids[0]))
}

// TestDenyAllWithReason: each call is denied with the reason as the
// agent's feedback; only the calls the person saw are decided.
func TestDenyAllWithReason(t *testing.T) {
	f := newFixture(t, "")
	res, err := f.router.AskBatch(ctx, "ops", batchOf("s1", "rm -rf a", "rm -rf b"), "")
	require.NoError(t, err)
	joined, err := f.router.Ask(ctx, "ops", bash("s1", "toolu_late", "rm -rf c"), "")
	require.NoError(t, err)
	require.Equal(t, res.BatchID, joined.Question.BatchID, "a call asked within the window joins the batch")
	reason := "not today"
	out, err := f.router.DecideBatch(ctx, "ops", res.BatchID, domain.BatchRespondRequest{Decision: domain.DecideDeny, Reason: &reason,
		Questions: []string{res.Questions[0].ID, res.Questions[1].ID}}, slackP("bob"), false)
	require.NoError(t, err)
	assert.Len(t, out.Decided, 2)
	for _, q := range res.Questions {
		got, _ := f.store.Get(ctx, "ops", q.ID)
		require.NotNil(t, got.Decision)
		assert.Equal(t, "deny", got.Decision.Behavior)
		assert.Equal(t, "not today", got.Decision.Message)
	}
	assert.Equal(t, "pending", status(t, f, joined.Question.ID), "a call the person had not seen stays pending")
	assert.Equal(t, domain.BatchPending, out.Batch.Status)
}

// TestBatchRespondersCheckedPerCall: a person allowed to decide one call
// and not another decides the first; the second stays pending and the
// person is told who may decide it. Someone allowed for none changes
// nothing.
func TestBatchRespondersCheckedPerCall(t *testing.T) {
	f := newFixture(t, "")
	a := bash("s1", "c1", "ls")
	a.Responders = &domain.Responders{Users: []string{"slack:U1"}}
	b := bash("s1", "c2", "rm -rf /srv/data")
	b.Responders = &domain.Responders{Users: []string{"slack:U2"}}
	qa, err := f.router.Ask(ctx, "ops", a, "")
	require.NoError(t, err)
	qb, err := f.router.Ask(ctx, "ops", b, "")
	require.NoError(t, err)
	require.Equal(t, qa.Question.BatchID, qb.Question.BatchID)

	_, err = f.router.DecideBatch(ctx, "ops", qa.Question.BatchID, domain.BatchRespondRequest{Decision: domain.DecideAllow}, slackP("U3"), false)
	assert.Equal(t, domain.ENotAllowed, domain.ErrorCode(err))
	assert.Contains(t, err.Error(), "you may decide none of the pending calls")
	assert.Equal(t, "pending", status(t, f, qa.Question.ID))

	out, err := f.router.DecideBatch(ctx, "ops", qa.Question.BatchID, domain.BatchRespondRequest{Decision: domain.DecideAllow}, slackP("U1"), false)
	require.NoError(t, err)
	assert.Equal(t, []string{qa.Question.ID}, out.Decided)
	require.Len(t, out.Refused, 1)
	assert.Equal(t, qb.Question.ID, out.Refused[0].ID)
	assert.Equal(t, domain.ENotAllowed, out.Refused[0].Code)
	assert.Contains(t, out.Refused[0].Message, "slack:U2", "the person is told who may decide it")
	assert.Equal(t, "answered (allow)", status(t, f, qa.Question.ID))
	assert.Equal(t, "pending", status(t, f, qb.Question.ID))
}

// TestBatchValidatedBeforeAnyCallIsAsked: a batch with one bad call asks
// nothing, and names the call.
func TestBatchValidatedBeforeAnyCallIsAsked(t *testing.T) {
	f := newFixture(t, "")
	req := batchOf("s1", "ls", "pwd")
	req.Approvals[1].Action.Tool = ""
	req.Approvals = append(req.Approvals, domain.BatchCall{})
	_, err := f.router.AskBatch(ctx, "ops", req, "")
	var de *domain.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, domain.EInvalid, de.Code)
	assert.Equal(t, []domain.Detail{{Field: "approvals[2]", Problem: "needs an action (the tool call to approve) or a question"}}, de.Details)
	req.Approvals = req.Approvals[:2]
	_, err = f.router.AskBatch(ctx, "ops", req, "")
	require.ErrorAs(t, err, &de)
	require.NotEmpty(t, de.Details)
	assert.Equal(t, "approvals[1].action.tool", de.Details[0].Field)
	qs, _ := f.store.List(ctx, "ops", "", 0)
	assert.Empty(t, qs, "nothing asked")
}

// TestWebhookBatchResumesEachCall: in webhook mode every call's decision
// is delivered on its own, all naming the one continuation run.
func TestWebhookBatchResumesEachCall(t *testing.T) {
	f := newFixture(t, "")
	req := batchOf("s1", "rm -rf a", "rm -rf b", "rm -rf c")
	req.Resume = &domain.ResumeRequest{URL: "https://runtime.example/resume"}
	res, err := f.router.AskBatch(ctx, "ops", req, "")
	require.NoError(t, err)
	_, err = f.store.PauseRun(ctx, "ops", "s1", "agent", f.clock.Now())
	require.NoError(t, err)
	out, err := f.router.DecideBatch(ctx, "ops", res.BatchID, domain.BatchRespondRequest{Decision: domain.DecideAllow}, slackP("bob"), false)
	require.NoError(t, err)
	require.Len(t, out.Decided, 3)
	cont := ""
	for _, q := range out.Batch.Questions {
		require.NotEmpty(t, q.ResumedRunID)
		if cont == "" {
			cont = q.ResumedRunID
		}
		assert.Equal(t, cont, q.ResumedRunID, "one continuation")
	}
	ds, err := f.store.ClaimDeliveries(ctx, time.Now().Add(time.Minute), time.Minute, 10)
	require.NoError(t, err)
	assert.Len(t, ds, 3, "a resume webhook per call")
}

var _ = lifecycle.BatchOutcome{}
