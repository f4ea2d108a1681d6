package slack

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// BenchmarkConcurrentClicks fires 200 signed clicks at once, each on its own
// question, through a real HTTP server on loopback, with the store on a real
// redis-server. Like Slack, the client keeps its connections alive: round 0
// opens and warms them and is not counted. Reported, in ms:
//
//   - ack-p50/p99: from the request being written on the connection to the
//     response headers arriving: the acknowledgement as Slack sees it.
//   - call-p99: from calling http.Client.Do to the response headers, which
//     adds the in-process client's own queueing on the shared cores.
//   - handler-p99: time inside the handler (verify, parse, hand off).
//   - recorded-p99: from sending the click to the answer being recorded.
func BenchmarkConcurrentClicks(b *testing.B) {
	const clicks = 200
	var mu sync.Mutex
	recorded := map[string]time.Time{}
	e := newEnv(b, func(_ *Config, rc *core.RouterConfig) {
		rc.Store = newRedisStore(b)
		rc.Observe = func(q *core.Question) {
			mu.Lock()
			recorded[q.ID] = time.Now()
			mu.Unlock()
		}
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
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clicks, MaxConnsPerHost: clicks}}

	var acks, calls, answers []time.Duration
	rounds := 0
	round := func(counted bool) {
		rounds++
		type click struct {
			q    *core.Question
			body []byte
		}
		batch := make([]click, clicks)
		for i := range batch {
			req := authQuestion()
			req.RunID = fmt.Sprintf("run-%d-%d", rounds, i)
			req.Targets = req.Targets[:1]
			q := e.ask(req)
			ts := e.copyOn(q, "C1").MessageTS
			batch[i] = click{q, formBody(e.clickPayload(alice, "C1", ts, "API key", nil))}
		}
		start := make(chan struct{})
		called := make([]time.Time, clicks)
		wrote := make([]time.Time, clicks)
		took := make([]time.Duration, clicks)
		ack := make([]time.Duration, clicks)
		var wg sync.WaitGroup
		if counted {
			b.StartTimer()
		}
		for i, c := range batch {
			wg.Go(func() {
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/slack/interactions", strings.NewReader(string(c.body)))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				ts, sig := Sign(testSecret, time.Now(), c.body)
				req.Header.Set("X-Slack-Request-Timestamp", ts)
				req.Header.Set("X-Slack-Signature", sig)
				req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
					WroteRequest: func(httptrace.WroteRequestInfo) { wrote[i] = time.Now() },
				}))
				<-start
				called[i] = time.Now()
				resp, err := client.Do(req)
				now := time.Now()
				took[i], ack[i] = now.Sub(called[i]), now.Sub(wrote[i])
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Errorf("click %d: %v %v", i, err, resp)
					return
				}
				resp.Body.Close()
			})
		}
		close(start)
		wg.Wait()
		if counted {
			b.StopTimer()
		}
		for i, c := range batch {
			got, err := e.router.Wait(context.Background(), c.q.ProjectID, c.q.ID, 10*time.Second)
			if err != nil || got.Status != core.StatusAnswered {
				b.Fatalf("question %d not answered: %v", i, err)
			}
			if counted {
				mu.Lock()
				answers = append(answers, recorded[c.q.ID].Sub(called[i]))
				mu.Unlock()
			}
		}
		// Every copy updated: the background work of this round is over.
		e.wait("copies updated", func() bool { return len(e.fake.Calls("chat.update")) >= len(recorded) })
		if counted {
			acks, calls = append(acks, ack...), append(calls, took...)
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
	b.ReportMetric(pct(handled, 99), "handler-p99-ms")
	b.ReportMetric(pct(answers, 99), "recorded-p99-ms")
}

func pct(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return float64(s[min(max(i-1, 0), len(s)-1)].Microseconds()) / 1000
}
