package resume_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/agent/webhook"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/server/egress"
	"github.com/askbridge/askbridge/server/resume"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// localReceivers admits the tests' httptest receivers on loopback, as the
// local default (no tokens, loopback address) does.
var localReceivers = egress.MustNew(egress.Config{AllowLoopback: true})

// fakeClock is a clock the test moves forward.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestReceiverDownForAnHourGetsEveryDeliveryAfterItReturns: the resume
// receiver answers 503 or drops the connection for an hour (on an injected
// clock, so the hour passes without sleeping). The deliverer keeps backing
// off (never more than 5 minutes between attempts), gives nothing up, and
// once the receiver is back every question's webhook arrives, signed, with
// its delivery id, exactly once.
func TestReceiverDownForAnHourGetsEveryDeliveryAfterItReturns(t *testing.T) {
	ctx := context.Background()
	srv := storetest.Redis(t)
	st, err := store.Open(ctx, store.Options{URL: srv.URL})
	require.NoError(t, err)
	defer st.Close()
	clock := &fakeClock{now: time.Now().UTC()}
	secret := []byte("s3cret")

	var down atomic.Bool
	down.Store(true)
	var downHits atomic.Int32
	var mu sync.Mutex
	got := map[string][]string{} // delivery id -> events
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if down.Load() {
			if downHits.Add(1)%2 == 0 { // half the time the connection just drops
				c, _, _ := w.(http.Hijacker).Hijack()
				c.Close()
				return
			}
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if err := webhook.Verify(secret, r.Header.Get(webhook.HeaderSignature), body, 0, clock.Now()); err != nil {
			t.Errorf("signature: %v", err)
		}
		mu.Lock()
		got[r.Header.Get(webhook.HeaderDelivery)] = append(got[r.Header.Get(webhook.HeaderDelivery)], r.Header.Get(webhook.HeaderEvent))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st, Clock: clock, HasWebhookSecret: func(string) bool { return true }})
	const n = 12
	for i := range n {
		run := fmt.Sprint("run-", i)
		res, err := router.Ask(ctx, "hour", &domain.AskRequest{RunID: run, AgentID: "bot", Question: fmt.Sprint("Continue ", i, "?"),
			Resume: &domain.ResumeRequest{URL: receiver.URL}}, "")
		require.NoError(t, err)
		_, err = st.PauseRun(ctx, "hour", run, "bot", clock.Now())
		require.NoError(t, err)
		if i%3 == 2 { // some are cancelled by a person: they resume too
			_, err = router.Cancel(ctx, "hour", res.Question.ID, domain.CancelUser, &domain.Person{Platform: "api", ID: "u"})
		} else {
			resp := "yes"
			_, err = router.Answer(ctx, "hour", res.Question.ID, domain.RespondRequest{Response: &resp}, domain.Person{Platform: "api", ID: "u"})
		}
		require.NoError(t, err)
	}

	outcomes := map[string]int{}
	var omu sync.Mutex
	d := resume.New(resume.Config{Store: st, Egress: localReceivers, Clock: clock, Secret: func(string) []byte { return secret },
		Client:  &http.Client{Timeout: 5 * time.Second},
		Observe: func(o string) { omu.Lock(); outcomes[o]++; omu.Unlock() }})

	start := clock.Now()
	for clock.Now().Sub(start) < time.Hour {
		d.Once(ctx)
		clock.Add(20 * time.Second)
	}
	mu.Lock()
	assert.Empty(t, got, "nothing arrives while the receiver is down")
	mu.Unlock()
	omu.Lock()
	retries := outcomes["retried"]
	assert.Zero(t, outcomes["failed"], "nothing is given up during the hour")
	omu.Unlock()
	// The dead host is probed by one delivery at a time after a pause that
	// grows to 30 s (its circuit), each delivery backing off up to 5 min:
	// it keeps being tried all hour, but far less than once every poll per
	// delivery (12 × 180).
	assert.Greater(t, retries, 60)
	assert.Less(t, retries, n*25)

	down.Store(false)
	back := clock.Now()
	for clock.Now().Sub(back) <= 5*time.Minute {
		d.Once(ctx)
		clock.Add(20 * time.Second)
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Len(t, got, n, "every delivery arrives within 5 minutes of the receiver's return")
	for id, evs := range got {
		assert.Len(t, evs, 1, "delivery %s arrives once after its 2xx", id)
	}
	omu.Lock()
	assert.Equal(t, n, outcomes["delivered"])
	assert.Zero(t, outcomes["failed"])
	omu.Unlock()
	evs, err := st.Events(ctx, "hour", "", 1000)
	require.NoError(t, err)
	for _, e := range evs {
		assert.NotEqual(t, domain.EventResumeFailed, e.Type, "no resume.failed event")
	}
	ds, err := st.ClaimDeliveries(ctx, clock.Now().Add(48*time.Hour), time.Minute, 100)
	require.NoError(t, err)
	assert.Empty(t, ds, "the queue is empty")
}

// TestDeliveryGivesUpAfter24Hours: the other side of the promise: a
// receiver that never comes back is given up after 24 h with a
// resume.failed event, not retried forever.
func TestDeliveryGivesUpAfter24Hours(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{})
	require.NoError(t, err)
	defer st.Close()
	clock := &fakeClock{now: time.Now().UTC()}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(502) }))
	defer receiver.Close()
	router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st, Clock: clock, HasWebhookSecret: func(string) bool { return true }})
	res, err := router.Ask(ctx, "gone", &domain.AskRequest{RunID: "r", AgentID: "bot", Question: "Continue?",
		Resume: &domain.ResumeRequest{URL: receiver.URL}}, "")
	require.NoError(t, err)
	_, err = st.PauseRun(ctx, "gone", "r", "bot", clock.Now())
	require.NoError(t, err)
	resp := "yes"
	_, err = router.Answer(ctx, "gone", res.Question.ID, domain.RespondRequest{Response: &resp}, domain.Person{Platform: "api", ID: "u"})
	require.NoError(t, err)
	var failed atomic.Int32
	d := resume.New(resume.Config{Store: st, Egress: localReceivers, Clock: clock, Secret: func(string) []byte { return []byte("k") },
		Observe: func(o string) {
			if o == "failed" {
				failed.Add(1)
			}
		}})
	start := clock.Now()
	for clock.Now().Sub(start) < 23*time.Hour {
		d.Once(ctx)
		clock.Add(5 * time.Minute)
	}
	assert.Zero(t, failed.Load(), "still retrying after 23 h")
	for clock.Now().Sub(start) < 25*time.Hour {
		d.Once(ctx)
		clock.Add(5 * time.Minute)
	}
	assert.EqualValues(t, 1, failed.Load(), "given up once after 24 h")
	evs, _ := st.Events(ctx, "gone", "", 100)
	var sawFailed bool
	for _, e := range evs {
		sawFailed = sawFailed || e.Type == domain.EventResumeFailed
	}
	assert.True(t, sawFailed, "resume.failed event")
}
