package discord

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/core"
)

// BenchmarkInteractionResponse measures how long the bridge takes to
// acknowledge an interaction with 200 answering clicks in flight at once,
// spread over two replicas that share one real redis-server. Like Discord,
// the client keeps its connections alive: round 0 opens and warms them and
// is not counted. Each latency runs from the request being written on the
// connection to the response headers arriving (call-p99 adds the in-process
// client's own queueing, from calling http.Client.Do; handler-p99 is the time
// inside the handler: verify, parse, decide). After every round the
// benchmark checks that each question was answered and each copy shows the
// outcome. Reported: p50/p99/max in ms, and how many clicks were answered
// with the final state in the response (type 7) rather than acknowledged
// first (type 6) and edited afterwards. cpu-ms/burst is the CPU time this
// process (bridge, fake Discord and client; not redis-server) spent from the
// clicks' start until the last response arrived. With BURST_CPUPROFILE=dir
// each counted burst is CPU-profiled alone into dir/burst-N.pprof;
// merge them with go tool pprof -top dir/*.pprof (not with -cpuprofile,
// which holds the one CPU profiler for the whole run).
func BenchmarkInteractionResponse(b *testing.B) {
	const concurrent = 200
	f := fakediscord.New(b)
	st := redisReplicas(b, 2)
	defaults := func(_ *core.RouterConfig, c *Config) { c.AckAfter = 0 } // as configured in production
	r1 := newEnv(b, f, st[0], defaults)
	r2 := newEnv(b, f, st[1], defaults)
	// Each replica's endpoint, timed inside the handler.
	var mu sync.Mutex
	var handled []time.Duration
	var targets []string
	for _, r := range []*env{r1, r2} {
		mux := http.NewServeMux()
		r.ad.Register(mux)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			start := time.Now()
			mux.ServeHTTP(w, req)
			d := time.Since(start)
			mu.Lock()
			handled = append(handled, d)
			mu.Unlock()
		}))
		b.Cleanup(srv.Close)
		targets = append(targets, srv.URL+"/discord/interactions")
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrent, MaxConnsPerHost: concurrent}}
	var lat, calls []time.Duration
	inline := 0
	var burstCPU time.Duration
	profDir := os.Getenv("BURST_CPUPROFILE")
	b.StopTimer()
	for n := range b.N + 1 { // round 0 warms up connections and is not counted
		qs := make([]*core.Question, concurrent)
		reqs := make([]*http.Request, concurrent)
		toks := make([]*fakediscord.Token, concurrent)
		resps := make([]*fakediscord.Response, concurrent)
		wrote := make([]time.Time, concurrent)
		for i := range concurrent {
			env := []*env{r1, r2}[i%2]
			q := env.ask(&core.AskRequest{RunID: fmt.Sprintf("bench-%d-%d", n, i), Questions: []core.Item{authItem()}})
			qs[i] = q
			m := f.Message(env.copyOf(q))
			in, tok, _ := f.Interaction(alice, m, 3, map[string]any{"custom_id": m.Components[0].Components[0].CustomID, "component_type": 2})
			toks[i] = tok
			body, _ := json.Marshal(in)
			sig, stamp := f.Sign(body, time.Now())
			req, _ := http.NewRequest("POST", targets[i%2], bytes.NewReader(body))
			req.Header.Set("X-Signature-Ed25519", sig)
			req.Header.Set("X-Signature-Timestamp", stamp)
			reqs[i] = req.WithContext(httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
				WroteRequest: func(httptrace.WroteRequestInfo) { wrote[i] = time.Now() }}))
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		if n == 1 {
			mu.Lock()
			handled = handled[:0] // round 0 is not counted
			mu.Unlock()
		}
		var prof *os.File
		if n > 0 && profDir != "" {
			var err error
			if prof, err = os.Create(filepath.Join(profDir, fmt.Sprintf("burst-%d-%d.pprof", time.Now().UnixNano(), n))); err != nil {
				b.Fatal(err)
			}
			if err := pprof.StartCPUProfile(prof); err != nil {
				b.Fatal(err)
			}
		}
		cpu0 := processCPU()
		if n > 0 {
			b.StartTimer()
		}
		for i := range concurrent {
			wg.Go(func() {
				<-start
				t0 := time.Now()
				res, err := client.Do(reqs[i])
				now := time.Now()
				if err != nil {
					b.Error(err)
					return
				}
				var resp fakediscord.Response
				_ = json.NewDecoder(res.Body).Decode(&resp)
				res.Body.Close()
				if res.StatusCode != 200 || (resp.Type != 7 && resp.Type != 6) {
					b.Errorf("interaction: HTTP %d type %d", res.StatusCode, resp.Type)
				}
				resps[i] = &resp
				if n > 0 {
					mu.Lock()
					lat = append(lat, now.Sub(wrote[i]))
					calls = append(calls, now.Sub(t0))
					if resp.Type == 7 {
						inline++
					}
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		if n > 0 {
			b.StopTimer()
			burstCPU += processCPU() - cpu0
		}
		if prof != nil {
			pprof.StopCPUProfile()
			prof.Close()
		}
		for i, r := range resps { // Discord applies the responses on its side
			if r != nil {
				f.Apply(toks[i], r)
			}
		}
		for i, q := range qs {
			env := []*env{r1, r2}[i%2]
			if final := env.wait(q); final.Response != "oauth" {
				b.Fatalf("question %d: response %q", i, final.Response)
			}
		}
		r1.settle()
		r2.settle()
		for _, q := range qs {
			r1.assertFinished(r1.copyOf(q), "Answered by alice: OAuth 2.0")
		}
	}
	slices.Sort(lat)
	slices.Sort(calls)
	slices.Sort(handled)
	pct := func(ds []time.Duration, p float64) float64 {
		return float64(ds[min(len(ds)-1, int(float64(len(ds))*p))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(lat, 0.50), "p50-ms")
	b.ReportMetric(pct(lat, 0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1])/float64(time.Millisecond), "max-ms")
	b.ReportMetric(pct(calls, 0.99), "call-p99-ms")
	b.ReportMetric(pct(handled, 0.99), "handler-p99-ms")
	b.ReportMetric(float64(inline)/float64(b.N), "type7/round")
	b.ReportMetric(float64(burstCPU)/float64(b.N)/float64(time.Millisecond), "cpu-ms/burst")
}

// processCPU is the user+system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHandleClick is the CPU cost of one answering click, in process:
// signature check, parse, store, render, response.
func BenchmarkHandleClick(b *testing.B) {
	f := fakediscord.New(b)
	e := newEnv(b, f, redisReplicas(b, 1)[0])
	h := e.ad.InteractionsHandler()
	type prepared struct {
		body       []byte
		sig, stamp string
	}
	reqs := make([]prepared, b.N)
	for i := range b.N {
		q := e.ask(&core.AskRequest{RunID: fmt.Sprintf("click-%d", i), Questions: []core.Item{authItem()}})
		m := f.Message(e.copyOf(q))
		in, _, _ := f.Interaction(alice, m, 3, map[string]any{"custom_id": m.Components[0].Components[0].CustomID, "component_type": 2})
		body, _ := json.Marshal(in)
		sig, stamp := f.Sign(body, time.Now())
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

// BenchmarkAckDuringBurst is the CPU cost of acknowledging one click while
// every worker is busy, as during a burst: signature check, parse, the
// deferred update written, the handling queued (the workers stay busy, so
// none of it runs). In process, without the network.
func BenchmarkAckDuringBurst(b *testing.B) {
	f := fakediscord.New(b)
	e := newEnv(b, f, newTestStore(b))
	q := e.ask(&core.AskRequest{RunID: "ack", Questions: []core.Item{authItem()}})
	m := f.Message(e.copyOf(q))
	in, _, _ := f.Interaction(alice, m, 3, map[string]any{"custom_id": m.Components[0].Components[0].CustomID, "component_type": 2})
	body, _ := json.Marshal(in)
	sig, stamp := f.Sign(body, time.Now())
	h := e.ad.InteractionsHandler()
	for range maxWorkers {
		e.ad.work <- struct{}{}
	}
	b.Cleanup(func() {
		e.ad.bgCancel() // the queued handling gives up
		for range maxWorkers {
			<-e.ad.work
		}
	})
	reqs := make([]*http.Request, b.N)
	for i := range reqs {
		reqs[i] = httptest.NewRequest("POST", "/discord/interactions", bytes.NewReader(body))
		reqs[i].Header.Set("X-Signature-Ed25519", sig)
		reqs[i].Header.Set("X-Signature-Timestamp", stamp)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, reqs[i])
		if rec.Code != 200 || !bytes.Equal(bytes.TrimSpace(rec.Body.Bytes()), []byte(`{"type":6}`)) {
			b.Fatalf("HTTP %d %s", rec.Code, rec.Body)
		}
	}
}
