package pagerduty_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A question nobody answers expires at its deadline, and its page is
// resolved saying so.
func TestExpiredQuestionResolvesItsPage(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the shortest deadline a question may have (10s)")
	}
	b := newBridge(t)
	timeout := domain.Duration(domain.MinTimeout)
	res, err := b.app.Router().Ask(context.Background(), "ops", &domain.AskRequest{RunID: "run-x", AgentID: "deploy-bot", AgentName: "Deploy bot",
		Question: "Expire me?", Options: []domain.Option{{Label: "Allow"}, {Label: "Deny"}}, Route: "oncall", Timeout: &timeout}, "")
	require.NoError(t, err)
	q := res.Question
	assert.Equal(t, []string{"trigger: Deploy bot asks: Expire me?"}, b.waitEvents(t, q.ID, 1))
	require.Eventually(t, func() bool { return len(b.events(q.ID)) >= 2 }, domain.MinTimeout+15*time.Second, 50*time.Millisecond,
		"the page is resolved after the deadline: %v", b.events(q.ID))
	assert.Equal(t, []string{"trigger: Deploy bot asks: Expire me?", "resolve: Expired"}, b.waitEvents(t, q.ID, 2))
	a, _ := b.pd.Alert(routingKey, q.ID)
	assert.Equal(t, "resolved", a.Status)
	final, err := b.app.Store().Get(context.Background(), "ops", q.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusExpired, final.Status)
}

// onRedis points a bridge at a shared Redis under prefix.
func onRedis(url, prefix string) func(*app.Settings) {
	return func(s *app.Settings) { s.RedisURL, s.RedisPrefix = url, prefix }
}

// Two replicas on one Redis, the same question asked on both: PagerDuty
// is paged once, and resolved once when it is answered on the other one.
func TestTwoReplicasPageOnce(t *testing.T) {
	srv := storetest.Redis(t)
	pd, _ := newFake(t)
	prefix := "pd-" + uuid.NewString()[:6]
	a := buildBridge(t, pd, onRedis(srv.URL, prefix))
	b := buildBridge(t, pd, onRedis(srv.URL, prefix))
	a.start(t)
	b.start(t)

	qa := a.ask(t, "oncall", "run-r", "Deploy api 1.5?")
	qb := b.ask(t, "oncall", "run-r", "Deploy api 1.5?")
	require.Equal(t, qa.ID, qb.ID, "the second replica re-attaches to the same question")
	assert.Equal(t, []string{"trigger: Deploy bot asks: Deploy api 1.5?"}, a.waitEvents(t, qa.ID, 1))
	time.Sleep(500 * time.Millisecond) // both deliverers have polled the queue
	assert.Len(t, a.events(qa.ID), 1, "one page for two replicas")

	_, err := b.app.Router().Answer(context.Background(), "ops", qa.ID, pick("Allow"), domain.Person{Platform: "slack", ID: "UANA", Name: "ana"})
	require.NoError(t, err)
	assert.Equal(t, []string{"trigger: Deploy bot asks: Deploy api 1.5?", "resolve: Answered by ana on Slack: Allow"}, a.waitEvents(t, qa.ID, 2))
	time.Sleep(500 * time.Millisecond)
	assert.Len(t, a.events(qa.ID), 2, "one resolve for two replicas")
}

// A replica claims the page's delivery and dies before sending it (its
// lease is never renewed): the other replica's deliverer takes the page
// over once the lease runs out, and PagerDuty receives it once.
func TestReplicaDyingMidPageIsTakenOver(t *testing.T) {
	srv := storetest.Redis(t)
	pd, _ := newFake(t)
	prefix := "pd-" + uuid.NewString()[:6]
	survivor := buildBridge(t, pd, onRedis(srv.URL, prefix)) // not started yet: the dead replica claims first
	q := survivor.ask(t, "oncall", "run-k", "Deploy api 1.6?")

	// The replica that dies: its store claims the trigger with a lease
	// and then does nothing more (no send, no renewal).
	ctx := context.Background()
	dead, err := store.Open(ctx, store.Options{URL: srv.URL, Prefix: prefix})
	require.NoError(t, err)
	const lease = 2 * time.Second
	claimed, err := dead.ClaimDeliveries(ctx, time.Now().UTC(), lease, 10)
	require.NoError(t, err)
	var events []string
	for _, d := range claimed {
		events = append(events, d.Event+" "+d.QuestionID)
	}
	require.Equal(t, []string{"pagerduty.trigger " + q.ID}, events, "the dead replica holds the trigger")
	claimedAt := time.Now()
	require.NoError(t, dead.Close())

	survivor.start(t)
	time.Sleep(lease / 2)
	assert.Empty(t, survivor.events(q.ID), "nobody sends while the lease holds")
	assert.Equal(t, []string{"trigger: Deploy bot asks: Deploy api 1.6?"}, survivor.waitEvents(t, q.ID, 1))
	assert.GreaterOrEqual(t, time.Since(claimedAt), lease, "taken over after the lease ran out")
	time.Sleep(time.Second)
	assert.Len(t, survivor.events(q.ID), 1, "the page arrives once")
	trail := strings.Join(survivor.audit(t, q.ID), "\n")
	assert.Equal(t, 1, strings.Count(trail, "delivery.sent: pagerduty.trigger"), trail)
}

// A replica answers a question and dies before anything after the answer
// runs (its Router never queues the resolve): the resolve was queued in
// the same step as the answer, so the other replica sends it and the
// incident does not stay open.
func TestReplicaDyingRightAfterTheAnswerStillResolves(t *testing.T) {
	srv := storetest.Redis(t)
	pd, _ := newFake(t)
	prefix := "pd-" + uuid.NewString()[:6]
	survivor := buildBridge(t, pd, onRedis(srv.URL, prefix))
	survivor.start(t)
	q := survivor.ask(t, "oncall", "run-z", "Deploy api 1.7?")
	assert.Equal(t, []string{"trigger: Deploy bot asks: Deploy api 1.7?"}, survivor.waitEvents(t, q.ID, 1))

	// The replica that dies: only its store's transition ran.
	ctx := context.Background()
	dead, err := store.Open(ctx, store.Options{URL: srv.URL, Prefix: prefix})
	require.NoError(t, err)
	answerInStore(t, dead, q)
	require.NoError(t, dead.Close())

	assert.Equal(t, []string{"trigger: Deploy bot asks: Deploy api 1.7?", "resolve: Answered by ana on Slack: Allow"},
		survivor.waitEvents(t, q.ID, 2))
	a, _ := survivor.pd.Alert(routingKey, q.ID)
	assert.Equal(t, "resolved", a.Status)
	time.Sleep(500 * time.Millisecond)
	assert.Len(t, survivor.events(q.ID), 2, "resolved once")
}

// The same on the built-in store: the transition alone, with nothing the
// Router does after it, queues the resolve.
func TestTransitionAloneResolvesThePage(t *testing.T) {
	b := newBridge(t)
	q := b.ask(t, "oncall", "run-y", "Deploy api 1.8?")
	assert.Equal(t, []string{"trigger: Deploy bot asks: Deploy api 1.8?"}, b.waitEvents(t, q.ID, 1))
	answerInStore(t, b.app.Store(), q)
	assert.Equal(t, []string{"trigger: Deploy bot asks: Deploy api 1.8?", "resolve: Answered by ana on Slack: Allow"},
		b.waitEvents(t, q.ID, 2))
}

// answerInStore answers q with "Allow" by ana on Slack through the store
// alone, as a replica dying right after its transition leaves it.
func answerInStore(t *testing.T, s lifecycle.Questions, q *domain.Question) {
	t.Helper()
	ans := domain.Resolve(q.Questions, [][]string{{"Allow"}})
	_, err := s.Transition(context.Background(), "ops", q.ID, lifecycle.Transition{To: domain.StatusAnswered, Answer: &ans,
		By: &domain.Person{Platform: "slack", ID: "UANA", Name: "ana"}, At: time.Now().UTC()})
	require.NoError(t, err)
}
