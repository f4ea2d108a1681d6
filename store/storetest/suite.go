package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// Replicas returns a function that opens a new replica (a new client with
// its own subscriber loop) on one shared backend.
type Replicas func(t *testing.T) func() core.Store

// Run is the conformance suite for core.Store.
func Run(t *testing.T, replicas Replicas) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open func() core.Store)
	}{
		{"CreateGetLocate", testCreateGetLocate},
		{"ListOrderAndFilter", testList},
		{"SupersedeInSameStep", testSupersede},
		{"ReattachIdenticalReask", testReattach},
		{"ApprovalsAndKeyedCallsNeverReuseADecision", testNoReuse},
		{"RunsAndKeysBelongToTheirAgent", testOwnership},
		{"IdempotencyKey", testIdempotency},
		{"FirstTransitionWins100Times", testFirstWins},
		{"WebhookRunPauseAndContinuation", testContinuation},
		{"TransitionAndVoteRefuseAnUnpausedRunAlike", testRunNotPausedAlike},
		{"DeliveriesLeaseRetryFinish", testDeliveries},
		{"DeliveriesFromEveryProjectInTurn", testDeliveriesInterleave},
		{"DeliveryLeasesRenewedAndTakenOver", testDeliveryLeases},
		{"DueDeadlines", testDue},
		{"EventsAfterID", testEvents},
		{"WatchAcrossReplicas", testWatch},
		{"RetentionDropsFinalRecords", testRetention},
		{"CopiesDraftsOnceRead", testMisc},
		{"CopiesReplacedPerTarget", testCopies},
		{"LocateByProjectHint", testLocateHint},
		{"ListPendingKeepsTheNewest", testListPendingLimit},
		{"RunQuestionsInCreationOrder", testRunQuestions},
		{"RecordRoundTrip", testRoundTrip},
		{"KeysEndWithRetention", testKeysEndWithRetention},
		{"TrimKeepsLiveRecords", testTrimKeepsLiveRecords},
		{"CancelNoteKept", testCancelNote},
		{"AuditTrailOldestFirstPerQuestion", testAudit},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, replicas(t)) })
	}
}

var ctx = context.Background()

func newQ(project, run string, items ...core.Item) *core.Question {
	if len(items) == 0 {
		items = []core.Item{{Question: "Deploy " + uuid.NewString()[:8] + "?", Options: []core.Option{{Label: "Yes", Value: "yes"}, {Label: "No", Value: "no"}}}}
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	return &core.Question{ID: uuid.NewString(), ProjectID: project, RunID: run, AgentID: "bot", Kind: core.KindQuestion,
		Status: core.StatusPending, Questions: items, Targets: []core.Target{}, CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(time.Hour), Fingerprint: core.Fingerprint(items)}
}

func project() string { return "p" + uuid.NewString()[:8] }

func create(t *testing.T, s core.Store, q *core.Question) core.CreateResult {
	t.Helper()
	res, err := s.Create(ctx, q)
	require.NoError(t, err)
	return res
}

func answer(by string) core.Transition {
	a := core.Resolve([]core.Item{{Question: "x"}}, [][]string{{"yes"}})
	return core.Transition{To: core.StatusAnswered, Answer: &a, By: &core.Person{Platform: "api", ID: by}, At: time.Now().UTC()}
}
