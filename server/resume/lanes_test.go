package resume_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/server/resume"
	"github.com/askbridge/askbridge/store/native"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/stretchr/testify/require"
)

// slowMail stands in for a slow mail server: every mail takes its time.
type slowMail struct {
	delay time.Duration
	mu    sync.Mutex
	sent  int
}

func (s *slowMail) Name() string { return "email" }

func (s *slowMail) Send(ctx context.Context, _ lifecycle.Delivery) error {
	time.Sleep(s.delay)
	s.mu.Lock()
	s.sent++
	s.mu.Unlock()
	return nil
}

func (s *slowMail) count() int { s.mu.Lock(); defer s.mu.Unlock(); return s.sent }

// slowCommits is a store on a busy disk: each claim of the queue (a
// synced commit on the embedded store) takes 5 ms.
type slowCommits struct{ lifecycle.Store }

const commitTime = 5 * time.Millisecond

func (s slowCommits) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, n int) ([]lifecycle.Delivery, error) {
	time.Sleep(commitTime)
	return s.Store.ClaimDeliveries(ctx, now, lease, n)
}

func (s slowCommits) ClaimLanes(ctx context.Context, now time.Time, lease time.Duration, want map[string]int) ([]lifecycle.Delivery, error) {
	time.Sleep(commitTime)
	return s.Store.(resume.LaneQueue).ClaimLanes(ctx, now, lease, want)
}

// TestResumeWebhooksDoNotWaitBehindMail: 3,000 outcome mails of earlier
// answers are queued for a mail server that takes 50 ms for each, on a
// disk where each claim of the queue takes 5 ms; answers keep coming at
// 100/s, each queuing its mail too. Their resume webhooks arrive within
// 200 ms of the answer (p99; 14–18 ms at p50), on each store, while the mails are still
// leaving (before: the deliverer claimed the queue in due order, so it
// had to claim, and put back, every mail due before a webhook first: one
// claim per 64 mails; at 200 emailed answers/s the bench's webhooks took
// 388 ms at p50 and 3.3 s at p99; this test printed p50 228 ms, p99 442 ms
// on Redis and p50 142 ms, p99 550 ms on the embedded store).
func TestResumeWebhooksDoNotWaitBehindMail(t *testing.T) {
	stores := map[string]func(t *testing.T) lifecycle.Store{
		"redis": func(t *testing.T) lifecycle.Store { return openRedisStore(t, storetest.Redis(t).URL) },
		"native": func(t *testing.T) lifecycle.Store {
			s, err := native.Open(native.Options{}) // slowCommits stands for the disk
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			st := slowCommits{open(t)}
			ctx := context.Background()
			mail := &slowMail{delay: 50 * time.Millisecond}
			d := resume.New(resume.Config{Store: st, Egress: localReceivers, Secret: func(string) []byte { return []byte("s") },
				Senders: []resume.Sender{mail}})
			router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st, HasWebhookSecret: func(string) bool { return true },
				Observers: []lifecycle.Observer{d}})
			hooks, hookURL := newArrivals(t, 0)

			const queued = 3000
			earlier, err := router.Ask(ctx, "ops", &domain.AskRequest{RunID: "earlier", AgentID: "bot", Question: "Earlier?"}, "")
			require.NoError(t, err)
			for i := range queued {
				_, err := st.EnqueueDelivery(ctx, lifecycle.Delivery{ID: fmt.Sprint("email.send:earlier:", i), ProjectID: "ops",
					QuestionID: earlier.Question.ID, Event: "email.send", Payload: []byte(`{}`)})
				require.NoError(t, err)
			}
			runCtx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); d.Run(runCtx) }()
			defer func() { cancel(); <-done }()

			// Answers keep coming, each queuing its outcome mail right
			// after, as the email surface's Finish does, faster than the
			// mail server takes them.
			var took []time.Duration
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			ids := map[string]time.Time{}
			for i := 0; i < 100; i++ {
				<-tick.C
				id, at := answered(t, router, st, "ops", fmt.Sprint("run-", i), hookURL)
				ids[id] = at
				_, err := st.EnqueueDelivery(ctx, lifecycle.Delivery{ID: "email.send:" + id, ProjectID: "ops",
					QuestionID: id, Event: "email.send", Payload: []byte(`{}`)})
				require.NoError(t, err)
			}
			require.Eventually(t, func() bool { return hooks.count() == len(ids) }, 60*time.Second, 5*time.Millisecond, "every resume webhook arrives")
			hooks.mu.Lock()
			for id, at := range ids {
				took = append(took, hooks.at[id].Sub(at))
			}
			hooks.mu.Unlock()
			slices.Sort(took)
			p50, p90, p99 := took[len(took)/2], took[len(took)*90/100], took[len(took)*99/100]
			t.Logf("resume webhooks, answer to receipt: p50 %s p90 %s p99 %s; %d of %d mails sent by then",
				p50.Round(time.Millisecond), p90.Round(time.Millisecond), p99.Round(time.Millisecond), mail.count(), queued+len(ids))
			// p90, not the slowest: one scheduling hiccup of a loaded CI
			// machine must not decide it. Behind the mails (one queue for
			// all), p90 was 602 ms (embedded) and 934 ms (Redis) under -race.
			require.Less(t, p90, 300*time.Millisecond, "the resume webhooks' p90 behind the queued mails")
			require.Less(t, mail.count(), queued, "the mails were still queued while the webhooks left")
		})
	}
}

// TestAMailWithoutItsSenderWaitsForAReplicaThatHasIt: a delivery queued by
// a sender this replica lacks (its surface is not configured here) is
// neither sent as a resume webhook nor given up at once: it waits, unsent,
// for a replica that has the sender, and is given up, saying why, only
// after GiveUpAfter (before: it was POSTed to the question's resume url
// as if it were a resume webhook).
func TestAMailWithoutItsSenderWaitsForAReplicaThatHasIt(t *testing.T) {
	ctx := context.Background()
	st, err := native.Open(native.Options{})
	require.NoError(t, err)
	defer st.Close()
	clock := &fakeClock{now: time.Now().UTC()}
	hooks, hookURL := newArrivals(t, 0)
	router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st, Clock: clock, HasWebhookSecret: func(string) bool { return true }})
	id, _ := answered(t, router, st, "ops", "run-1", hookURL)
	_, err = st.EnqueueDelivery(ctx, lifecycle.Delivery{ID: "sms.send:" + id, ProjectID: "ops", QuestionID: id, Event: "sms.send",
		Payload: []byte(`{}`), CreatedAt: clock.Now()})
	require.NoError(t, err)
	d := resume.New(resume.Config{Store: st, Egress: localReceivers, Clock: clock, Secret: func(string) []byte { return []byte("s") },
		GiveUpAfter: time.Hour})
	d.Once(ctx)
	clock.Add(2 * time.Minute)
	d.Once(ctx)
	hooks.mu.Lock()
	posts := len(hooks.posts)
	hooks.mu.Unlock()
	require.Equal(t, 1, posts, "the resume webhook alone was posted, not the mail")
	audit, err := st.Audit(ctx, "ops", id, 100)
	require.NoError(t, err)
	for _, e := range audit {
		require.NotEqual(t, "delivery.failed", e.Type, "given up at once: %s", e.Detail)
	}

	clock.Add(2 * time.Hour)
	d.Once(ctx)
	audit, err = st.Audit(ctx, "ops", id, 100)
	require.NoError(t, err)
	var failed string
	for _, e := range audit {
		if e.Type == "delivery.failed" {
			failed = e.Detail
		}
	}
	require.Contains(t, failed, "sms.send: no sms sender on this replica (is sms configured?) within 1h0m0s")
}

// TestABurstToOneReceiverGoesOutAsFastAsItTakesThem: 48 answers resume
// their runs at once through one receiver that takes 30 ms a webhook: at
// most 8 are in flight to it (its share), and the rest follow as soon as
// each ends, all within 600 ms (before: those over the 8 were put back in
// the queue for at least 250 ms each time they found the host busy; the
// bench's email clicks at 200/s, whose pauses clump clicks, met p99 of
// 0.3-2.2 s that way).
func TestABurstToOneReceiverGoesOutAsFastAsItTakesThem(t *testing.T) {
	ctx := context.Background()
	st, err := native.Open(native.Options{})
	require.NoError(t, err)
	defer st.Close()
	hooks, hookURL := newArrivals(t, 30*time.Millisecond)
	router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st, HasWebhookSecret: func(string) bool { return true }})
	const n = 48
	for i := range n {
		answered(t, router, st, "ops", fmt.Sprint("run-", i), hookURL)
	}
	d := resume.New(resume.Config{Store: st, Egress: localReceivers, Secret: func(string) []byte { return []byte("s") }})
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	start := time.Now()
	go func() { defer close(done); d.Run(runCtx) }()
	defer func() { cancel(); <-done }()
	require.Eventually(t, func() bool { return hooks.count() == n }, 20*time.Second, time.Millisecond)
	took := time.Since(start)
	t.Logf("%d webhooks to one receiver taking 30 ms each: all arrived after %s", n, took.Round(time.Millisecond))
	// 8 at a time, 30 ms each: 180 ms at best; 2.53 s when each burst
	// beyond the 8 went back to the queue for 250 ms. Room for a loaded
	// CI machine, still half the old figure.
	require.Less(t, took, 1200*time.Millisecond)
}
