package lifecycle_test

import (
	"context"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// webhookQuestion asks a webhook-mode question whose run has not paused.
func webhookQuestion(t *testing.T, wait time.Duration) (*lifecycle.Router, lifecycle.Store, *domain.Question) {
	t.Helper()
	st, err := store.Open(context.Background(), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	r := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st, PauseWait: wait,
		HasWebhookSecret: func(string) bool { return true }})
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	res, err := r.Ask(context.Background(), "p", &domain.AskRequest{RunID: "run-1", AgentID: "bot", Question: "Deploy?",
		Options: []domain.Option{{Label: "Yes"}, {Label: "No"}},
		Resume:  &domain.ResumeRequest{URL: "https://runtime.example/resume"}}, "")
	require.NoError(t, err)
	return r, st, res.Question
}

// TestAClickBeforeThePauseWaitsForIt: a person's answer that arrives
// before the runtime reports its pause is recorded once the pause comes,
// on the lifecycle's own wait (no surface retries it).
func TestAClickBeforeThePauseWaitsForIt(t *testing.T) {
	r, st, q := webhookQuestion(t, 5*time.Second)
	yes := "Yes"
	go func() {
		time.Sleep(300 * time.Millisecond)
		_, _ = st.PauseRun(context.Background(), "p", "run-1", "bot", time.Now())
	}()
	start := time.Now()
	final, err := r.AnswerRead(context.Background(), q, domain.RespondRequest{Response: &yes}, domain.Person{Platform: "slack", ID: "U1"})
	require.NoError(t, err)
	assert.Equal(t, domain.StatusAnswered, final.Status)
	assert.NotEmpty(t, final.ResumedRunID, "the answer resumed the run")
	took := time.Since(start)
	assert.GreaterOrEqual(t, took, 250*time.Millisecond, "recorded only after the pause")
	assert.Less(t, took, 2*time.Second, "recorded soon after the pause, not at the end of the wait")
}

// TestAClickWithNoPauseIsRefusedAfterTheWait: with no pause within
// PauseWait the answer is refused with run_not_paused and nothing changes.
func TestAClickWithNoPauseIsRefusedAfterTheWait(t *testing.T) {
	r, st, q := webhookQuestion(t, 300*time.Millisecond)
	yes := "Yes"
	start := time.Now()
	_, err := r.Answer(context.Background(), "p", q.ID, domain.RespondRequest{Response: &yes}, domain.Person{Platform: "slack", ID: "U1"})
	assert.Equal(t, domain.ERunNotPaused, domain.ErrorCode(err))
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "it waited for the pause")
	got, err := st.Get(context.Background(), "p", q.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusPending, got.Status)
}

// TestTheAPIIsToldAtOnce: the API's respond does not wait; the runtime
// that answers through it gets run_not_paused at once and retries itself.
func TestTheAPIIsToldAtOnce(t *testing.T) {
	r, _, q := webhookQuestion(t, 5*time.Second)
	yes := "Yes"
	start := time.Now()
	_, err := r.AnswerAtOnce(context.Background(), q, domain.RespondRequest{Response: &yes}, domain.Person{Platform: "api", ID: "op"})
	assert.Equal(t, domain.ERunNotPaused, domain.ErrorCode(err))
	assert.Less(t, time.Since(start), time.Second)
}

// TestThePauseWaitIsTenSecondsByDefault: the wait the docs promise.
func TestThePauseWaitIsTenSecondsByDefault(t *testing.T) {
	assert.Equal(t, 10*time.Second, lifecycle.DefaultPauseWait)
}
