package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/server/resume"
	"github.com/askbridge/askbridge/store/storetest"
)

// benchResume: (f) fair resume delivery. Two replicas (each a store, a
// router and a deliverer with the default settings) share the Redis. First,
// with an empty queue, webhook-mode answers arrive at a healthy receiver at
// 20/s, alternating two projects: answer → receipt is the floor. Then 1,000
// answered questions in project "busy" resume to a black hole (accepts, never
// answers) and the same healthy answers are measured again, half in "busy",
// half in "calm".
func benchResume(rs *storetest.Server, o opts) error {
	// A fresh prefix: earlier benchmarks' projects stay out of the way.
	prefix := fmt.Sprintf("bench-f-%d", time.Now().UnixNano())
	var reps []*resumeReplica
	for range 2 {
		r, err := newResumeReplica(rs.URL, prefix)
		if err != nil {
			return err
		}
		defer r.close()
		reps = append(reps, r)
	}
	got := newReceipts()
	healthy, err := serve(got)
	if err != nil {
		return err
	}
	defer healthy.Close()
	hole, err := newBlackHole()
	if err != nil {
		return err
	}
	defer hole.close()

	const n, rate = 100, 20
	measure := func(phase string) (lat, error) {
		var ls []time.Duration
		for i := range n {
			project := []string{"busy", "calm"}[i%2]
			r := reps[i%2]
			run := fmt.Sprint(phase, "-", i)
			id, at, err := r.answer(project, run, healthy.URL+"/resume")
			if err != nil {
				return lat{}, err
			}
			got.expect(id, at)
			time.Sleep(time.Second / rate)
		}
		deadline := time.Now().Add(60 * time.Second)
		for !got.all() && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		ls, missing := got.take()
		if missing > 0 {
			return lat{}, fmt.Errorf("%s: %d healthy webhooks did not arrive within 60 s", phase, missing)
		}
		return percentiles(ls), nil
	}
	floor, err := measure("floor")
	if err != nil {
		return err
	}
	const pending = 1000
	for i := range pending {
		if _, _, err := reps[i%2].answer("busy", fmt.Sprint("hole-", i), hole.url); err != nil {
			return err
		}
	}
	time.Sleep(time.Second) // the deliverers have taken up the black hole's queue
	p, err := measure("loaded")
	if err != nil {
		return err
	}
	fmt.Printf("(f) answer → resume webhook received, %d answers at %d/s to a healthy receiver (projects busy and calm) "+
		"while %d deliveries to a black hole are pending in busy (%d connections held): p50 %s  p99 %s  max %s; "+
		"floor (same, empty queue) p50 %s  p99 %s; ratio p99 %s; target p99 < 2 s: %s\n\n",
		n, rate, pending, hole.held(), ms(p.p50), ms(p.p99), ms(p.max), ms(floor.p50), ms(floor.p99), ratio(p.p99, floor.p99),
		verdict(p.p99 < 2*time.Second))
	return nil
}

// resumeReplica is a replica whose deliverer signs every webhook; it runs
// from the start (app.App.Run), and a webhook-mode transition kicks it.
type resumeReplica struct{ *replica }

func newResumeReplica(redisURL, prefix string) (*resumeReplica, error) {
	r, err := startReplica(app.Settings{Addr: "127.0.0.1:0", RedisURL: redisURL, RedisPrefix: prefix, WebhookSecret: "bench"})
	if err != nil {
		return nil, err
	}
	return &resumeReplica{r}, nil
}

func (r *resumeReplica) close() { r.Close() }

// answer asks a webhook-mode question, pauses its run and answers it; at is
// just before the answer.
func (r *resumeReplica) answer(project, run, url string) (id string, at time.Time, err error) {
	ctx := context.Background()
	res, err := r.router.Ask(ctx, project, &domain.AskRequest{RunID: run, AgentID: "bot", Question: "Continue?",
		Resume: &domain.ResumeRequest{URL: url}}, "")
	if err != nil {
		return "", at, err
	}
	if _, err := r.app.Store().PauseRun(ctx, project, run, "bot", time.Now()); err != nil {
		return "", at, err
	}
	yes := "yes"
	at = time.Now()
	_, err = r.router.Answer(ctx, project, res.Question.ID, domain.RespondRequest{Response: &yes}, domain.Person{Platform: "api", ID: "u"})
	return res.Question.ID, at, err
}

// receipts is the healthy receiver: it notes when each question's webhook
// arrives (it may arrive before answer() has returned).
type receipts struct {
	mu       sync.Mutex
	answered map[string]time.Time // question id -> answered at
	arrived  map[string]time.Time // question id -> first arrival
}

func newReceipts() *receipts {
	return &receipts{answered: map[string]time.Time{}, arrived: map[string]time.Time{}}
}

func (g *receipts) expect(id string, at time.Time) { g.mu.Lock(); g.answered[id] = at; g.mu.Unlock() }

func (g *receipts) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var p resume.Payload
	body, _ := io.ReadAll(r.Body)
	now := time.Now()
	if err := json.Unmarshal(body, &p); err == nil && p.Question != nil {
		g.mu.Lock()
		if _, ok := g.arrived[p.Question.ID]; !ok {
			g.arrived[p.Question.ID] = now
		}
		g.mu.Unlock()
	}
	w.WriteHeader(204)
}

func (g *receipts) all() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for id := range g.answered {
		if _, ok := g.arrived[id]; !ok {
			return false
		}
	}
	return true
}

// take returns the latencies of the questions answered since the last
// take, and how many have not arrived.
func (g *receipts) take() ([]time.Duration, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var ls []time.Duration
	missing := 0
	for id, at := range g.answered {
		if got, ok := g.arrived[id]; ok {
			ls = append(ls, got.Sub(at))
		} else {
			missing++
		}
	}
	g.answered = map[string]time.Time{}
	return ls, missing
}

// blackHole accepts connections and never answers.
type blackHole struct {
	url   string
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	once  sync.Once
}

func newBlackHole() (*blackHole, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &blackHole{url: "http://" + ln.Addr().String() + "/resume", ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			h.conns = append(h.conns, c)
			h.mu.Unlock()
		}
	}()
	return h, nil
}

func (h *blackHole) held() int { h.mu.Lock(); defer h.mu.Unlock(); return len(h.conns) }

func (h *blackHole) close() {
	h.once.Do(func() {
		h.ln.Close()
		h.mu.Lock()
		for _, c := range h.conns {
			c.Close()
		}
		h.mu.Unlock()
	})
}
