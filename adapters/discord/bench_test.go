package discord

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// BenchmarkInteractionResponse measures how long the bridge takes to
// answer an interaction (HTTP endpoint, signature check, Redis read and
// atomic answer, type 7 update) with 200 interactions in flight at once,
// spread over two replicas sharing one store. Reported: p50/p99/max in ms.
func BenchmarkInteractionResponse(b *testing.B) {
	const concurrent = 200
	f := newFakeDiscord(b)
	st := redisReplicas(b, 2)
	r1 := newEnv(b, f, st[0])
	r2 := newEnv(b, f, st[1])
	targets := []string{r1.srv.URL + "/discord/interactions", r2.srv.URL + "/discord/interactions"}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrent, MaxConnsPerHost: concurrent}}
	var lat []time.Duration
	b.ResetTimer()
	for n := range b.N + 1 { // round 0 warms up connections and is not counted
		b.StopTimer()
		reqs := make([][]byte, concurrent)
		heads := make([][2]string, concurrent)
		for i := range concurrent {
			env := []*env{r1, r2}[i%2]
			q := env.ask(&core.AskRequest{RunID: fmt.Sprintf("bench-%d-%d", n, i), Questions: []core.Item{authItem()}})
			m := f.message(env.copyOf(q))
			in, _, _ := f.interaction(alice, m, 3, map[string]any{"custom_id": m.Components[0].Components[0].CustomID, "component_type": 2})
			reqs[i], _ = json.Marshal(in)
			sig, stamp := f.sign(reqs[i], time.Now())
			heads[i] = [2]string{sig, stamp}
		}
		b.StartTimer()
		var wg sync.WaitGroup
		var mu sync.Mutex
		start := make(chan struct{})
		for i := range concurrent {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest("POST", targets[i%2], bytes.NewReader(reqs[i]))
				req.Header.Set("X-Signature-Ed25519", heads[i][0])
				req.Header.Set("X-Signature-Timestamp", heads[i][1])
				<-start
				t0 := time.Now()
				res, err := client.Do(req)
				d := time.Since(t0)
				if err != nil {
					b.Error(err)
					return
				}
				var resp fResponse
				_ = json.NewDecoder(res.Body).Decode(&resp)
				res.Body.Close()
				if res.StatusCode != 200 || resp.Type != 7 {
					b.Errorf("interaction: HTTP %d type %d", res.StatusCode, resp.Type)
				}
				if n > 0 {
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
			}()
		}
		close(start)
		wg.Wait()
		b.StopTimer()
		r1.settle()
		r2.settle()
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(float64(len(lat))*p))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1])/float64(time.Millisecond), "max-ms")
	b.ReportMetric(float64(len(lat)), "interactions")
}

// BenchmarkHandleClick is the CPU cost of one answering click, in process:
// signature check, parse, store, render, response.
func BenchmarkHandleClick(b *testing.B) {
	f := newFakeDiscord(b)
	e := newEnv(b, f, redisReplicas(b, 1)[0])
	h := e.ad.InteractionsHandler()
	type prepared struct {
		body       []byte
		sig, stamp string
	}
	reqs := make([]prepared, b.N)
	for i := range b.N {
		q := e.ask(&core.AskRequest{RunID: fmt.Sprintf("click-%d", i), Questions: []core.Item{authItem()}})
		m := f.message(e.copyOf(q))
		in, _, _ := f.interaction(alice, m, 3, map[string]any{"custom_id": m.Components[0].Components[0].CustomID, "component_type": 2})
		body, _ := json.Marshal(in)
		sig, stamp := f.sign(body, time.Now())
		reqs[i] = prepared{body, sig, stamp}
	}
	b.ResetTimer()
	for i := range b.N {
		req := httptest.NewRequest("POST", "/discord/interactions", bytes.NewReader(reqs[i].body))
		req.Header.Set("X-Signature-Ed25519", reqs[i].sig)
		req.Header.Set("X-Signature-Timestamp", reqs[i].stamp)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
	b.StopTimer()
	e.settle()
}
