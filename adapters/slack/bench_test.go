package slack

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// BenchmarkConcurrentClicks fires 200 signed clicks at once, each on its own
// question, through a real HTTP server, and reports the acknowledgement
// latency Slack would see (p50, p99) and the time until each answer was
// recorded in the store (p99). handler-p99 is the time inside the handler
// alone (verify, parse, hand off), without the in-process client's and HTTP
// stack's share of the two CPUs.
func BenchmarkConcurrentClicks(b *testing.B) {
	const clicks = 200
	var mu sync.Mutex
	recorded := map[string]time.Time{}
	e := newEnv(b, func(_ *Config, rc *core.RouterConfig) {
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

	var acks, answers []time.Duration
	for b.Loop() {
		b.StopTimer()
		type click struct {
			q    *core.Question
			body []byte
		}
		batch := make([]click, clicks)
		for i := range batch {
			req := authQuestion()
			req.RunID = fmt.Sprintf("run-%d-%d", len(acks), i)
			req.Targets = req.Targets[:1]
			q := e.ask(req)
			ts := e.copyOn(q, "C1").MessageTS
			batch[i] = click{q, formBody(e.clickPayload(alice, "C1", ts, "API key", nil))}
		}
		b.StartTimer()
		start := make(chan struct{})
		sent := make([]time.Time, clicks)
		took := make([]time.Duration, clicks)
		var wg sync.WaitGroup
		for i, c := range batch {
			wg.Go(func() {
				<-start
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/slack/interactions", strings.NewReader(string(c.body)))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				ts, sig := Sign(testSecret, time.Now(), c.body)
				req.Header.Set("X-Slack-Request-Timestamp", ts)
				req.Header.Set("X-Slack-Signature", sig)
				sent[i] = time.Now()
				resp, err := client.Do(req)
				took[i] = time.Since(sent[i])
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Errorf("click %d: %v %v", i, err, resp)
					return
				}
				resp.Body.Close()
			})
		}
		close(start)
		wg.Wait()
		acks = append(acks, took...)
		for i, c := range batch {
			got, err := e.router.Wait(context.Background(), c.q.ProjectID, c.q.ID, 10*time.Second)
			if err != nil || got.Status != core.StatusAnswered {
				b.Fatalf("question %d not answered: %v", i, err)
			}
			mu.Lock()
			answers = append(answers, recorded[c.q.ID].Sub(sent[i]))
			mu.Unlock()
		}
	}
	b.ReportMetric(pct(acks, 50), "ack-p50-ms")
	b.ReportMetric(pct(acks, 99), "ack-p99-ms")
	b.ReportMetric(pct(answers, 99), "recorded-p99-ms")
	b.ReportMetric(pct(handled, 99), "handler-p99-ms")
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
