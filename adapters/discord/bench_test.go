package discord

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/adapters/internal/bursttest"
	"github.com/askbridge/askbridge/domain"
)

// BenchmarkInteractionResponse measures how long the bridge takes to
// acknowledge an interaction with 200 answering clicks in flight at once,
// spread over two replicas that share one real redis-server. Like Discord,
// the client keeps its connections alive: round 0 opens and warms them and
// is not counted. The client is a load generator in a process of its own
// (adapters/internal/bursttest), so it neither shares the bridge's Go scheduler nor takes
// more CPU than it must from the 2 cores the bridge replicas, the fake
// Discord, redis-server and it share. Each latency runs from
// the request being written on the connection to the response headers
// being read (call-p99 from before the write; handler-p99 is the time inside
// the handler: verify, parse, decide).
//
// Floor: in every round the same 200 requests are also fired, with the same
// client, at two bare net/http servers whose handler reads the body and
// answers {"type":6}; floor-p99 is their p99, and p99/floor the ratio.
//
// After every round the benchmark checks that each question was answered
// and each copy shows the outcome. Reported too: how many clicks were
// answered with the final state in the response (type 7) rather than
// acknowledged first (type 6) and edited afterwards, and cpu-ms/burst, the
// CPU time this process (bridge and fake Discord; not the client or
// redis-server) spent from the clicks' start until the last response
// arrived. With BURST_CPUPROFILE=dir each counted burst is CPU-profiled
// alone into dir/burst-N.pprof; merge them with go tool pprof -top
// dir/*.pprof (not with -cpuprofile, which holds the one CPU profiler for
// the whole run). BURST_DEBUG=1 logs each counted round's p50, p90, p99 and
// max, to see which rounds set the p99.
func BenchmarkInteractionResponse(b *testing.B) {
	const concurrent = 200
	f := fakediscord.New(b)
	st := redisReplicas(b, 2)
	defaults := func(_ *lifecycle.RouterConfig, c *Config) { c.AckAfter = 0 } // as configured in production
	r1 := newEnv(b, f, st[0], defaults)
	r2 := newEnv(b, f, st[1], defaults)
	// Each replica's endpoint, timed inside the handler.
	var mu sync.Mutex
	var handled []time.Duration
	var targets, floors []string
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
		targets = append(targets, srv.URL)
		bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			io.Copy(io.Discard, req.Body)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "11")
			w.Write([]byte(`{"type":6}` + "\n"))
		}))
		b.Cleanup(bare.Close)
		floors = append(floors, bare.URL)
	}
	client := bursttest.Start(b)
	for i := range targets {
		targets[i], floors[i] = bursttest.HostOf(b, targets[i]), bursttest.HostOf(b, floors[i])
	}
	var lat, calls, floorLat []time.Duration
	inline := 0
	var burstCPU time.Duration
	profDir := os.Getenv("BURST_CPUPROFILE")
	b.StopTimer()
	for n := range b.N + 1 { // round 0 warms up connections and is not counted
		qs := make([]*domain.Question, concurrent)
		reqs := make([][]byte, concurrent)
		floorReqs := make([][]byte, concurrent)
		toks := make([]*fakediscord.Token, concurrent)
		for i := range concurrent {
			env := []*env{r1, r2}[i%2]
			q := env.ask(&domain.AskRequest{RunID: fmt.Sprintf("bench-%d-%d", n, i), Questions: []domain.Item{authItem()}})
			qs[i] = q
			m := f.Message(env.copyOf(q))
			in, tok, _ := f.Interaction(alice, m, 3, map[string]any{"custom_id": m.Components[0].Components[0].CustomID, "component_type": 2})
			toks[i] = tok
			body, _ := json.Marshal(in)
			sig, stamp := f.Sign(body, time.Now())
			h := map[string]string{"X-Signature-Ed25519": sig, "X-Signature-Timestamp": stamp}
			reqs[i] = bursttest.Request(targets[i%2], "/discord/interactions", "application/json", h, body)
			floorReqs[i] = bursttest.Request(floors[i%2], "/discord/interactions", "application/json", h, body)
		}
		if n == 1 {
			mu.Lock()
			handled = handled[:0] // round 0 is not counted
			mu.Unlock()
		}
		// The floor first, on the same cores in the same round.
		floor, err := client.Fire(bursttest.Round{Set: "floor", Targets: floors, Reqs: floorReqs})
		if err != nil {
			b.Fatal(err)
		}
		for i, st := range floor.Status {
			if floor.Err[i] != "" || st != 200 {
				b.Fatalf("floor: HTTP %d, %s", st, floor.Err[i])
			}
			if n > 0 {
				floorLat = append(floorLat, floor.Lat[i])
			}
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
		res, err := client.Fire(bursttest.Round{Set: "bridge", Targets: targets, Reqs: reqs})
		if err != nil {
			b.Fatal(err)
		}
		if n > 0 {
			b.StopTimer()
			burstCPU += processCPU() - cpu0
		}
		if prof != nil {
			pprof.StopCPUProfile()
			prof.Close()
		}
		if n > 0 && os.Getenv("BURST_DEBUG") != "" {
			ls := slices.Clone(res.Lat)
			slices.Sort(ls)
			at := func(p float64) time.Duration { return ls[int(float64(len(ls)-1)*p)] }
			b.Logf("round %d: p50 %v p90 %v p99 %v max %v", n, at(0.5), at(0.9), at(0.99), ls[len(ls)-1])
		}
		for i, st := range res.Status {
			var resp fakediscord.Response
			if res.Err[i] == "" {
				if err := json.Unmarshal(res.Bodies[i], &resp); err != nil {
					res.Err[i] = err.Error()
				}
			}
			if res.Err[i] != "" || st != 200 || (resp.Type != 7 && resp.Type != 6) {
				b.Fatalf("interaction: HTTP %d type %d: %s", st, resp.Type, res.Err[i])
			}
			f.Apply(toks[i], &resp) // Discord applies the responses on its side
			if n > 0 {
				lat = append(lat, res.Lat[i])
				calls = append(calls, res.Call[i])
				if resp.Type == 7 {
					inline++
				}
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
			// Checked: the fake keeps no more than a bridge would.
			f.Forget(r1.copyOf(q))
		}
	}
	slices.Sort(lat)
	slices.Sort(calls)
	slices.Sort(handled)
	slices.Sort(floorLat)
	pct := func(ds []time.Duration, p float64) float64 {
		return float64(ds[min(len(ds)-1, int(float64(len(ds))*p))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(lat, 0.50), "p50-ms")
	b.ReportMetric(pct(lat, 0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1])/float64(time.Millisecond), "max-ms")
	b.ReportMetric(pct(calls, 0.99), "call-p99-ms")
	b.ReportMetric(pct(handled, 0.99), "handler-p99-ms")
	b.ReportMetric(pct(floorLat, 0.99), "floor-p99-ms")
	b.ReportMetric(pct(lat, 0.99)/pct(floorLat, 0.99), "p99/floor")
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
		q := e.ask(&domain.AskRequest{RunID: fmt.Sprintf("click-%d", i), Questions: []domain.Item{authItem()}})
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
	q := e.ask(&domain.AskRequest{RunID: "ack", Questions: []domain.Item{authItem()}})
	m := f.Message(e.copyOf(q))
	in, _, _ := f.Interaction(alice, m, 3, map[string]any{"custom_id": m.Components[0].Components[0].CustomID, "component_type": 2})
	body, _ := json.Marshal(in)
	sig, stamp := f.Sign(body, time.Now())
	h := e.ad.InteractionsHandler()
	busy := make(chan struct{})
	for range maxWorkers {
		e.ad.pool.TryGo(func(context.Context) { <-busy })
	}
	b.Cleanup(func() {
		e.ad.pool.Stop() // the queued handling gives up
		close(busy)
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

// TestBurstClientProcess is the client process of BenchmarkInteractionResponse.
func TestBurstClientProcess(t *testing.T) { bursttest.ClientProcess(t) }
