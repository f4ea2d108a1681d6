package slack

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/internal/bursttest"
	"github.com/askbridge/askbridge/domain"
)

// BenchmarkConcurrentClicks fires 200 signed clicks at once, each on its own
// question, through a real HTTP server on loopback, with the store on a real
// redis-server. The client is a load generator in a process of its own
// (adapters/internal/bursttest), as Slack's servers are not in the bridge's
// process. Like Slack, it keeps its connections alive: round 0 opens and
// warms them and is not counted. Every round also fires the same requests
// at a bare net/http handler that answers 200: the floor. Reported, in ms:
//
//   - ack-p50/p99: from the request being written on the connection to the
//     response headers being read: the acknowledgement as Slack sees it.
//   - call-p99: the same from before writing.
//   - floor-p99 and ack-p99/floor: the bare handler's p99 and the ratio.
//   - handler-p99: time inside the handler (verify, parse, hand off).
//   - recorded-p99: from the burst's start to the answer being recorded.
func BenchmarkConcurrentClicks(b *testing.B) {
	const clicks = 200
	var mu sync.Mutex
	recorded := map[string]time.Time{}
	e := newEnv(b, func(_ *Config, rc *lifecycle.RouterConfig) {
		rc.Store = newRedisStore(b)
		rc.Observers = []lifecycle.Observer{lifecycle.ObserverFunc(func(q *domain.Question) {
			mu.Lock()
			recorded[q.ID] = time.Now()
			mu.Unlock()
		})}
	})
	var handled []time.Duration
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		e.mux.ServeHTTP(w, r)
		d := time.Since(start)
		mu.Lock()
		handled = append(handled, d)
		mu.Unlock()
	}))
	defer srv.Close()
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	}))
	defer bare.Close()
	client := bursttest.Start(b)
	target, floorTarget := bursttest.HostOf(b, srv.URL), bursttest.HostOf(b, bare.URL)

	var acks, calls, answers, floors []time.Duration
	rounds := 0
	round := func(counted bool) {
		rounds++
		qs := make([]*domain.Question, clicks)
		reqs, floorReqs := make([][]byte, clicks), make([][]byte, clicks)
		for i := range clicks {
			req := authQuestion()
			req.RunID = fmt.Sprintf("run-%d-%d", rounds, i)
			req.Targets = req.Targets[:1]
			q := e.ask(req)
			qs[i] = q
			body := formBody(e.clickPayload(alice, "C1", e.copyOn(q, "C1").MessageTS, "API key", nil))
			ts, sig := Sign(testSecret, time.Now(), body)
			h := map[string]string{"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": sig}
			reqs[i] = bursttest.Request(target, "/slack/interactions", "application/x-www-form-urlencoded", h, body)
			floorReqs[i] = bursttest.Request(floorTarget, "/slack/interactions", "application/x-www-form-urlencoded", h, body)
		}
		floor, err := client.Fire(bursttest.Round{Set: "floor", Targets: []string{floorTarget}, Reqs: floorReqs})
		if err != nil {
			b.Fatal(err)
		}
		if counted {
			b.StartTimer()
		}
		started := time.Now()
		res, err := client.Fire(bursttest.Round{Set: "bridge", Targets: []string{target}, Reqs: reqs})
		if counted {
			b.StopTimer()
		}
		if err != nil {
			b.Fatal(err)
		}
		for i := range clicks {
			if res.Err[i] != "" || res.Status[i] != http.StatusOK || floor.Status[i] != http.StatusOK {
				b.Fatalf("click %d: HTTP %d %s (floor %d %s)", i, res.Status[i], res.Err[i], floor.Status[i], floor.Err[i])
			}
		}
		for i, q := range qs {
			got, err := e.router.Wait(context.Background(), q.ProjectID, q.ID, 10*time.Second)
			if err != nil || got.Status != domain.StatusAnswered {
				b.Fatalf("question %d not answered: %v", i, err)
			}
			if counted {
				mu.Lock()
				answers = append(answers, recorded[q.ID].Sub(started))
				mu.Unlock()
			}
		}
		// Every copy updated: the background work of this round is over.
		e.wait("copies updated", func() bool { return len(e.fake.Calls("chat.update")) >= len(recorded) })
		if counted {
			acks, calls, floors = append(acks, res.Lat...), append(calls, res.Call...), append(floors, floor.Lat...)
		}
	}
	b.StopTimer()
	round(false)
	mu.Lock()
	handled = handled[:0]
	mu.Unlock()
	for range b.N {
		round(true)
	}
	b.ReportMetric(pct(acks, 50), "ack-p50-ms")
	b.ReportMetric(pct(acks, 99), "ack-p99-ms")
	b.ReportMetric(pct(calls, 99), "call-p99-ms")
	b.ReportMetric(pct(floors, 99), "floor-p99-ms")
	b.ReportMetric(pct(acks, 99)/pct(floors, 99), "ack-p99/floor")
	b.ReportMetric(pct(handled, 99), "handler-p99-ms")
	b.ReportMetric(pct(answers, 99), "recorded-p99-ms")
}

// TestBurstClientProcess is the client process of BenchmarkConcurrentClicks.
func TestBurstClientProcess(t *testing.T) { bursttest.ClientProcess(t) }

func pct(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return float64(s[min(max(i-1, 0), len(s)-1)].Microseconds()) / 1000
}
