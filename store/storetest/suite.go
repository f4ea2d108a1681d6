package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// Replicas returns a function that opens a new replica (a new client with
// its own subscriber loop) on one shared backend.
type Replicas func(t *testing.T) func() lifecycle.Store

// Run is the conformance suite for lifecycle.Store.
func Run(t *testing.T, replicas Replicas) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open func() lifecycle.Store)
	}{
		{"CreateGetLocate", testCreateGetLocate},
		{"ListOrderAndFilter", testList},
		{"SupersedeInSameStep", testSupersede},
		{"ReattachIdenticalReask", testReattach},
		{"ApprovalsAndKeyedCallsNeverReuseADecision", testNoReuse},
		{"ApprovalsOfDistinctCallsCoexist", testApprovalsCoexist},
		{"SameCallReattachesWhateverItsState", testCallKeyReattach},
		{"ApprovalsBatchedWithinTheWindow", testBatchWindow},
		{"BatchCallsShareOneContinuation", testBatchContinuation},
		{"RunsAndKeysBelongToTheirAgent", testOwnership},
		{"IdempotencyKey", testIdempotency},
		{"FirstTransitionWins100Times", testFirstWins},
		{"WebhookRunPauseAndContinuation", testContinuation},
		{"TransitionAndVoteRefuseAnUnpausedRunAlike", testRunNotPausedAlike},
		{"DeliveriesLeaseRetryFinish", testDeliveries},
		{"DeliveriesFromEveryProjectInTurn", testDeliveriesInterleave},
		{"DeliveryLeasesRenewedAndTakenOver", testDeliveryLeases},
		{"SenderDeliveriesQueuedOncePerID", testEnqueueDelivery},
		{"DeliveryLanesApart", testDeliveryLanes},
		{"DeliveriesQueuedWhenTheQuestionEnds", testQueueOnEnd},
		{"DueDeadlines", testDue},
		{"EventsAfterID", testEvents},
		{"WatchAcrossReplicas", testWatch},
		{"RetentionDropsFinalRecords", testRetention},
		{"CopiesDraftsOnceRead", testMisc},
		{"CopiesReplacedPerTarget", testCopies},
		{"LocateByProjectHint", testLocateHint},
		{"ListPendingKeepsTheNewest", testListPendingLimit},
		{"ListPagesThroughEveryQuestion", testListPages},
		{"ListCursorStableWhenQuestionsEnd", testListCursorStable},
		{"DeadlinesNearestFirstAndCounted", testDeadlines},
		{"RunQuestionsInCreationOrder", testRunQuestions},
		{"RecordRoundTrip", testRoundTrip},
		{"CreateReturnsTheRecordAsStored", testCreateReturnsStored},
		{"AdaptiveQuestionsRoundTrip", testAdaptiveRoundTrip},
		{"HistoryOfTheSameQuestion", testHistory},
		{"KeysEndWithRetention", testKeysEndWithRetention},
		{"TrimKeepsLiveRecords", testTrimKeepsLiveRecords},
		{"CancelNoteKept", testCancelNote},
		{"AuditTrailOldestFirstPerQuestion", testAudit},
		{"StatsBacklogAndWaiters", testStats},
		{"TraceContextKept", testTraceContextKept},
		{"RemarksOnPendingQuestionsOnly", testRemarks},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, replicas(t)) })
	}
}

var ctx = context.Background()

func newQ(project, run string, items ...domain.Item) *domain.Question {
	if len(items) == 0 {
		items = []domain.Item{{Question: "Deploy " + uuid.NewString()[:8] + "?", Options: []domain.Option{{Label: "Yes", Value: "yes"}, {Label: "No", Value: "no"}}}}
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	return &domain.Question{ID: uuid.NewString(), ProjectID: project, RunID: run, AgentID: "bot", Kind: domain.KindQuestion,
		Status: domain.StatusPending, Questions: items, Targets: []domain.Target{}, CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(time.Hour), Fingerprint: domain.Fingerprint(items)}
}

func project() string { return "p" + uuid.NewString()[:8] }

func create(t *testing.T, s lifecycle.Store, q *domain.Question) lifecycle.CreateResult {
	t.Helper()
	res, err := s.Create(ctx, q)
	require.NoError(t, err)
	return res
}

func answer(by string) lifecycle.Transition {
	a := domain.Resolve([]domain.Item{{Question: "x"}}, [][]string{{"yes"}})
	return lifecycle.Transition{To: domain.StatusAnswered, Answer: &a, By: &domain.Person{Platform: "api", ID: by}, At: time.Now().UTC()}
}
