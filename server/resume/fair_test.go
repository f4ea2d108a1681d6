package resume_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/server/resume"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blackHole accepts connections and never answers. It reports how many
// connections it holds.
func blackHole(t *testing.T) (url string, held *atomic.Int32, closeAll func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	held = &atomic.Int32{}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	closeAll = func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}
	t.Cleanup(closeAll)
	return "http://" + ln.Addr().String() + "/resume", held, closeAll
}

// arrivals is a receiver that records when each question's webhook came.
type arrivals struct {
	mu      sync.Mutex
	at      map[string]time.Time // question id -> first arrival
	posts   map[string]int       // delivery id -> POSTs
	payload map[string]resume.Payload
	delay   time.Duration
	code    func() int
}

func newArrivals(t *testing.T, delay time.Duration) (*arrivals, string) {
	a := &arrivals{at: map[string]time.Time{}, posts: map[string]int{}, payload: map[string]resume.Payload{}, delay: delay}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var p resume.Payload
		_ = json.Unmarshal(body, &p)
		time.Sleep(a.delay)
		code := 204
		if a.code != nil {
			code = a.code()
		}
		a.mu.Lock()
		if code < 300 {
			if _, ok := a.at[p.Question.ID]; !ok {
				a.at[p.Question.ID] = time.Now()
				a.payload[p.Question.ID] = p
			}
		}
		a.posts[r.Header.Get("X-Askbridge-Delivery")]++
		a.mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(srv.Close)
	return a, srv.URL + "/resume"
}

func (a *arrivals) count() int { a.mu.Lock(); defer a.mu.Unlock(); return len(a.at) }

// answered asks a webhook-mode question, pauses its run and answers it;
// it returns the question id and when the answer was taken.
func answered(t *testing.T, router *lifecycle.Router, st lifecycle.Store, project, run, url string) (string, time.Time) {
	ctx := context.Background()
	res, err := router.Ask(ctx, project, &domain.AskRequest{RunID: run, AgentID: "bot", Question: "Continue " + run + "?",
		Resume: &domain.ResumeRequest{URL: url}}, "")
	require.NoError(t, err)
	_, err = st.PauseRun(ctx, project, run, "bot", time.Now())
	require.NoError(t, err)
	yes := "yes"
	_, err = router.Answer(ctx, project, res.Question.ID, domain.RespondRequest{Response: &yes}, domain.Person{Platform: "api", ID: "u"})
	require.NoError(t, err)
	return res.Question.ID, time.Now()
}

func openRedisStore(t *testing.T, url string) *store.Store {
	st, err := store.Open(context.Background(), store.Options{URL: url})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

// TestBlackHoleReceiverDelaysOnlyItsOwnDeliveries: 200 deliveries wait on a
// receiver that accepts and never answers; webhooks to a healthy receiver,
// in the same project and in another, still arrive within 2 s of their
// answer (before: they waited behind whole batches of the black hole's 15 s
// timeouts, 74 s and 404 s in the issue).
func TestBlackHoleReceiverDelaysOnlyItsOwnDeliveries(t *testing.T) {
	srv := storetest.Redis(t)
	st := openRedisStore(t, srv.URL)
	// Wired as cmd/bridge wires it: a webhook-mode answer kicks the deliverer.
	d := resume.New(resume.Config{Store: st, Egress: localReceivers, Secret: func(string) []byte { return []byte("s") }})
	router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st, HasWebhookSecret: func(string) bool { return true },
		Observers: []lifecycle.Observer{d}})
	hole, held, closeHole := blackHole(t)
	healthy, healthyURL := newArrivals(t, 0)

	for i := range 200 {
		answered(t, router, st, "busy", fmt.Sprint("hole-", i), hole)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	defer func() { closeHole(); cancel(); <-done }()
	require.Eventually(t, func() bool { return held.Load() >= 4 }, 5*time.Second, 10*time.Millisecond, "the black hole holds deliveries")

	answeredAt := map[string]time.Time{}
	for i := range 5 {
		id, at := answered(t, router, st, "busy", fmt.Sprint("ok-busy-", i), healthyURL)
		answeredAt[id] = at
		id, at = answered(t, router, st, "calm", fmt.Sprint("ok-calm-", i), healthyURL)
		answeredAt[id] = at
	}
	require.Eventually(t, func() bool { return healthy.count() == len(answeredAt) }, 10*time.Second, 10*time.Millisecond,
		"every healthy webhook arrives while the black hole holds its own")
	healthy.mu.Lock()
	defer healthy.mu.Unlock()
	for id, at := range answeredAt {
		assert.Less(t, healthy.at[id].Sub(at), 2*time.Second, "question %s: answer to receipt", id)
	}
	assert.LessOrEqual(t, held.Load(), int32(8), "the black hole never holds more than its share of workers")
}

// TestSlowLeasedDeliveriesAreNotPostedTwice: two replicas share one Redis
// with a 1 s lease; the receiver takes 2.5 s for each webhook. The holder
// renews its leases while the POST is in flight, so no delivery is taken
// over and posted twice (before: every delivery slower than the lease was).
func TestSlowLeasedDeliveriesAreNotPostedTwice(t *testing.T) {
	srv := storetest.Redis(t)
	a, b := openRedisStore(t, srv.URL), openRedisStore(t, srv.URL)
	router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: a, HasWebhookSecret: func(string) bool { return true }})
	slow, slowURL := newArrivals(t, 2500*time.Millisecond)
	const n = 24
	for i := range n {
		answered(t, router, a, "slow", fmt.Sprint("run-", i), slowURL)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, st := range []*store.Store{a, b} {
		d := resume.New(resume.Config{Store: st, Egress: localReceivers, Secret: func(string) []byte { return []byte("s") },
			Lease: time.Second, Poll: 50 * time.Millisecond})
		wg.Add(1)
		go func() { defer wg.Done(); d.Run(ctx) }()
	}
	require.Eventually(t, func() bool { return slow.count() == n }, 30*time.Second, 20*time.Millisecond)
	time.Sleep(1500 * time.Millisecond) // anything taken over would be posted by now
	cancel()
	wg.Wait()
	slow.mu.Lock()
	defer slow.mu.Unlock()
	total := 0
	for id, posts := range slow.posts {
		assert.Equal(t, 1, posts, "delivery %s posted once", id)
		total += posts
	}
	assert.Equal(t, n, total, "0 duplicate POSTs")
}

// TestDeliveryOutlivesRetention: the question's record expires with a 1 s
// retention while the receiver answers 503 for 2.5 s; the delivery keeps
// what it needs and arrives, complete, once the receiver is back (before:
// it vanished with the record, without a word).
func TestDeliveryOutlivesRetention(t *testing.T) {
	srv := storetest.Redis(t)
	st := openRedisStore(t, srv.URL)
	router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st, Retention: time.Second, HasWebhookSecret: func(string) bool { return true }})
	recv, url := newArrivals(t, 0)
	back := time.Now().Add(2500 * time.Millisecond)
	recv.code = func() int {
		if time.Now().Before(back) {
			return 503
		}
		return 200
	}
	id, _ := answered(t, router, st, "short", "run-1", url)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var outcomes sync.Map
	d := resume.New(resume.Config{Store: st, Egress: localReceivers, Secret: func(string) []byte { return []byte("s") },
		MinBackoff: 200 * time.Millisecond, MaxBackoff: 400 * time.Millisecond, Poll: 50 * time.Millisecond,
		Observe: func(o string) { v, _ := outcomes.LoadOrStore(o, new(atomic.Int32)); v.(*atomic.Int32).Add(1) }})
	go d.Run(ctx)
	require.Eventually(t, func() bool {
		_, err := st.Get(context.Background(), "short", id)
		return domain.ErrorCode(err) == domain.ENotFound
	}, 5*time.Second, 50*time.Millisecond, "the record expires with its retention")
	require.Eventually(t, func() bool { return recv.count() == 1 }, 10*time.Second, 20*time.Millisecond,
		"delivered after the outage although the record is gone")
	recv.mu.Lock()
	p := recv.payload[id]
	recv.mu.Unlock()
	assert.Equal(t, "question.answered", p.Event)
	assert.Equal(t, "yes", p.Question.Response, "the payload carries the answer")
	assert.Equal(t, "run-1", p.Run.ResumedFrom)
	assert.NotEmpty(t, p.Run.ID)
	v, _ := outcomes.Load("retried")
	require.NotNil(t, v)
	assert.Greater(t, v.(*atomic.Int32).Load(), int32(1), "it was retried through the outage")
	_, failed := outcomes.Load("failed")
	assert.False(t, failed)
}

// TestGivingUpIsNeverSilent: a receiver that never recovers is given up
// after GiveUpAfter, and so is a delivery whose record is gone: each with a
// resume.failed event naming the delivery and the reason, an ERROR log with
// the delivery id, and the "failed" metric.
func TestGivingUpIsNeverSilent(t *testing.T) {
	srv := storetest.Redis(t)
	st := openRedisStore(t, srv.URL)
	router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st, Retention: 500 * time.Millisecond, HasWebhookSecret: func(string) bool { return true }})
	recv, url := newArrivals(t, 0)
	recv.code = func() int { return 503 }
	clock := &fakeClock{now: time.Now().UTC()}
	var logs bytes.Buffer
	var lmu sync.Mutex
	var failed atomic.Int32
	d := resume.New(resume.Config{Store: st, Egress: localReceivers, Secret: func(string) []byte { return []byte("s") },
		Clock: clock, GiveUpAfter: time.Hour,
		Logger: slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &lmu}, nil)),
		Observe: func(o string) {
			if o == "failed" {
				failed.Add(1)
			}
		}})
	id, _ := answered(t, router, st, "gone", "run-1", url)
	_, _ = answered(t, router, st, "gone", "run-2", url)
	// The second delivery's record disappears (as if kept too briefly).
	ids, err := st.Client().ZRange(context.Background(), "askbridge:{gone}:outbox", 0, -1).Result()
	require.NoError(t, err)
	require.Len(t, ids, 2)
	var lostID string
	for _, dl := range ids {
		q, _ := st.Client().HGet(context.Background(), "askbridge:{gone}:dlv:"+dl, "question").Result()
		if q != id {
			lostID = dl
			require.NoError(t, st.Client().Del(context.Background(), "askbridge:{gone}:dlv:"+dl).Err())
		}
	}
	time.Sleep(600 * time.Millisecond) // the records' retention passes
	for start := clock.Now(); clock.Now().Sub(start) < 2*time.Hour; clock.Add(time.Minute) {
		d.Once(context.Background())
	}
	assert.EqualValues(t, 2, failed.Load(), "both given up, each once")
	evs, err := st.Events(context.Background(), "gone", "", 1000)
	require.NoError(t, err)
	reasons := map[string]string{}
	for _, e := range evs {
		if e.Type == domain.EventResumeFailed {
			var m map[string]string
			require.NoError(t, json.Unmarshal(e.Data, &m))
			reasons[m["delivery"]] = m["reason"]
		}
	}
	require.Len(t, reasons, 2)
	assert.Contains(t, reasons[lostID], "expired before it could be sent")
	for dl, why := range reasons {
		if dl != lostID {
			assert.Contains(t, why, "gave up after 1h0m0s")
		}
	}
	lmu.Lock()
	defer lmu.Unlock()
	for dl := range reasons {
		assert.Regexp(t, `level=ERROR msg="resume webhook failed for good" delivery=`+dl, logs.String())
	}
	assert.Zero(t, recv.count())
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
