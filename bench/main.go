// Command bench measures askbridge near its limits and prints each figure
// next to the floor measured in the same run (a bare HTTP round trip on
// loopback and Redis's own latency), as a ratio. See bench/README.md.
//
//	go run ./bench                 # everything
//	go run ./bench -only wake,mem  # some
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/app"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == wakeClientFlag {
		if err := runWakeClient(); err != nil {
			fmt.Fprintln(os.Stderr, "bench wake client:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type opts struct {
	only    map[string]bool
	rate    int
	secs    int
	waiters int
	memN    int
	memArgs []string

	abandonN      int
	lifeN         int
	lifeRetention time.Duration
}

func run() error {
	only := flag.String("only", "floor,ack,wake,asks,mem,waiters,resume,lifetimes,abandon", "comma-separated benchmarks")
	o := opts{only: map[string]bool{}}
	flag.IntVar(&o.rate, "rate", 200, "click arrival rate per second for ack and wake")
	flag.IntVar(&o.secs, "secs", 10, "seconds of load for ack, wake and asks")
	flag.IntVar(&o.waiters, "waiters", 10000, "concurrent waiters for the waiters benchmark")
	flag.IntVar(&o.memN, "mem-n", 10000, "pending questions for the mem benchmark")
	flag.IntVar(&o.abandonN, "abandon-n", 2000, "long-polls closed by their clients for the abandon benchmark")
	flag.IntVar(&o.lifeN, "life-n", 100000, "questions asked and answered for the lifetimes benchmark")
	flag.DurationVar(&o.lifeRetention, "life-retention", 5*time.Second, "retention for the lifetimes benchmark")
	memArgs := flag.String("mem-redis-args", "", "extra redis-server arguments for the mem benchmark, e.g. \"--hash-max-listpack-value 1024\"")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (client, bridge and fakes in this process) to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	o.memArgs = strings.Fields(*memArgs)
	for _, s := range strings.Split(*only, ",") {
		o.only[strings.TrimSpace(s)] = true
	}
	dir, err := os.MkdirTemp("", "askbridge-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rs, err := storetest.StartServer(dir)
	if err != nil {
		return err
	}
	defer rs.Kill()
	fmt.Printf("askbridge bench — %s, GOMAXPROCS=%d, redis %s\n\n", time.Now().UTC().Format(time.RFC3339), numCPU(), redisVersion(rs))

	httpFloor, err := floorHTTP(o)
	if err != nil {
		return err
	}
	redisFloor, cliLine, err := floorRedis(rs)
	if err != nil {
		return err
	}
	fmt.Printf("floor  bare HTTP round trip on loopback at %d req/s: p50 %s  p99 %s\n", o.rate, ms(httpFloor.p50), ms(httpFloor.p99))
	fmt.Printf("floor  Redis PING round trip (go-redis): p50 %s  p99 %s; redis-cli --latency: %s\n\n", ms(redisFloor.p50), ms(redisFloor.p99), cliLine)
	floor := lat{p50: httpFloor.p50 + redisFloor.p50, p99: httpFloor.p99 + redisFloor.p99}

	if o.only["ack"] {
		if err := benchAck(rs, o, httpFloor); err != nil {
			return fmt.Errorf("ack: %w", err)
		}
	}
	if o.only["wake"] {
		if err := benchWake(rs, o, floor); err != nil {
			return fmt.Errorf("wake: %w", err)
		}
	}
	if o.only["asks"] {
		if err := benchAsks(rs, o, floor); err != nil {
			return fmt.Errorf("asks: %w", err)
		}
	}
	if o.only["mem"] {
		if err := benchMem(dir, o); err != nil {
			return fmt.Errorf("mem: %w", err)
		}
	}
	if o.only["resume"] {
		if err := benchResume(rs, o); err != nil {
			return fmt.Errorf("resume: %w", err)
		}
	}
	if o.only["abandon"] {
		if err := benchAbandon(rs, o); err != nil {
			return fmt.Errorf("abandon: %w", err)
		}
	}
	if o.only["lifetimes"] {
		if err := benchLifetimes(dir, o); err != nil {
			return fmt.Errorf("lifetimes: %w", err)
		}
	}
	if o.only["waiters"] {
		if err := benchWaiters(rs, o); err != nil {
			return fmt.Errorf("waiters: %w", err)
		}
	}
	return nil
}

func numCPU() int {
	return int(must(strconv.Atoi(strings.TrimSpace(envOr("GOMAXPROCS", fmt.Sprint(runtimeCPU()))))))
}

func must[T any](v T, _ error) T { return v }

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

func redisVersion(rs *storetest.Server) string {
	out, _ := rs.Cli("info", "server")
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "redis_version:"); ok {
			return v
		}
	}
	return "?"
}

type lat struct{ p50, p99, max time.Duration }

func percentiles(ds []time.Duration) lat {
	if len(ds) == 0 {
		return lat{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(p int) time.Duration { return s[min(max((len(s)*p+99)/100-1, 0), len(s)-1)] }
	return lat{p50: at(50), p99: at(99), max: s[len(s)-1]}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1fx", float64(a)/float64(b))
}

func verdict(ok bool) string {
	if ok {
		return "MET"
	}
	return "MISSED"
}

// openLoop calls f at rate per second for d, each call in its own
// goroutine (arrivals do not wait for earlier calls), and returns the
// latencies f reports.
func openLoop(rate int, d time.Duration, f func(i int) (time.Duration, error)) ([]time.Duration, int, error) {
	n := int(d.Seconds() * float64(rate))
	interval := time.Second / time.Duration(rate)
	out := make([]time.Duration, n)
	var failed atomic.Int32
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
			time.Sleep(wait)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := f(i)
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err)
				return
			}
			out[i] = l
		}()
	}
	wg.Wait()
	if e, _ := firstErr.Load().(error); e != nil {
		return nil, int(failed.Load()), e
	}
	return out, 0, nil
}

func client(conns int) *http.Client {
	return &http.Client{Timeout: 3 * time.Minute, Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: 0}}
}

// floorHTTP is a bare HTTP POST round trip on loopback (a handler that
// reads the body and answers 200) at the same arrival rate as the clicks.
func floorHTTP(o opts) (lat, error) {
	srv, err := serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(200)
	}))
	if err != nil {
		return lat{}, err
	}
	defer srv.Close()
	c := client(256)
	body := bytes.Repeat([]byte("x"), 1500)
	ls, _, err := openLoop(o.rate, time.Duration(min(o.secs, 5))*time.Second, func(int) (time.Duration, error) {
		t := time.Now()
		res, err := c.Post(srv.URL, "application/x-www-form-urlencoded", bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return time.Since(t), nil
	})
	return percentiles(ls), err
}

// floorRedis is a PING round trip through go-redis, and redis-cli --latency.
func floorRedis(rs *storetest.Server) (lat, string, error) {
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rdb.Close()
	ctx := context.Background()
	var ls []time.Duration
	for range 5000 {
		t := time.Now()
		if err := rdb.Ping(ctx).Err(); err != nil {
			return lat{}, "", err
		}
		ls = append(ls, time.Since(t))
	}
	line := "(redis-cli not installed)"
	if storetest.HaveRedisCli() {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		out, _ := exec.CommandContext(cctx, "redis-cli", "-p", fmt.Sprint(rs.Port), "--latency", "--raw").Output()
		line = lastLine(string(out)) + " (min max avg ms, samples; 5 s)"
	}
	return percentiles(ls), line, nil
}

func lastLine(s string) string {
	ls := strings.Split(strings.TrimSpace(strings.ReplaceAll(s, "\r", "\n")), "\n")
	return strings.TrimSpace(ls[len(ls)-1])
}

// server is an HTTP server on a loopback port.
type server struct {
	URL string
	srv *http.Server
}

func serve(h http.Handler) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &server{URL: "http://" + ln.Addr().String(), srv: &http.Server{Handler: h}}
	go s.srv.Serve(ln)
	return s, nil
}

func (s *server) Close() { s.srv.Close() }

// replica is one bridge in this process, built by app.New as `bridge
// serve` builds it, with its Slack adapter pointed at a fake Slack.
type replica struct {
	app    *app.App
	router *core.Router
	web    *server
	stop   context.CancelFunc
	done   chan error
}

const signingSecret = "bench-signing-secret"

func newReplica(redisURL string, fake *fakeslack.Server) (*replica, error) {
	s := app.Settings{Addr: "127.0.0.1:0", RedisURL: redisURL}
	if fake != nil {
		s.Slack = slack.Config{BotToken: fake.BotToken, SigningSecret: signingSecret, APIURL: fake.APIURL()}
	}
	return startReplica(s)
}

// startReplica builds a bridge from s and runs it until Close.
func startReplica(s app.Settings) (*replica, error) {
	a, err := app.New(context.Background(), s)
	if err != nil {
		return nil, err
	}
	addr, err := a.Listen()
	if err != nil {
		_ = a.Close(context.Background())
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	r := &replica{app: a, router: a.Router(), web: &server{URL: "http://" + addr.String()}, stop: stop, done: make(chan error, 1)}
	go func() { r.done <- a.Run(ctx) }()
	return r, nil
}

func (r *replica) Close() {
	r.stop()
	<-r.done
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = r.app.Close(ctx)
}

func postJSON(c *http.Client, u string, body any) (int, map[string]any, error) {
	b, _ := json.Marshal(body)
	res, err := c.Post(u, "application/json", bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out, nil
}

// benchWake: (b) click → waiter woken. Waiters long-poll on replica A;
// answers arrive on replica B at the click rate; each latency runs from
// sending the answer to the waiter receiving the answered record.
func benchWake(rs *storetest.Server, o opts, floor lat) error {
	a, err := newReplica(rs.URL, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := newReplica(rs.URL, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	ctx := context.Background()
	n := o.rate * min(o.secs, 10)
	ids := make([]string, n)
	for i := range ids {
		res, err := a.router.Ask(ctx, "wake", &core.AskRequest{RunID: fmt.Sprint("run-", i), Question: "Ship it?",
			Options: []core.Option{{Label: "Yes"}, {Label: "No"}}}, "")
		if err != nil {
			return err
		}
		ids[i] = res.Question.ID
	}
	ls, err := wakeInChild(wakeJob{A: a.web.URL, B: b.web.URL, IDs: ids, Rate: o.rate})
	if err != nil {
		return err
	}
	p := percentiles(ls)
	fmt.Printf("(b) answer → waiter woken, across replicas, %d answers at %d/s: p50 %s  p99 %s  max %s; floor (HTTP+Redis) p99 %s; ratio p99 %s; target p99 ≤ 3x the floor (issue 13; 50 ms before): %s\n\n",
		n, o.rate, ms(p.p50), ms(p.p99), ms(p.max), ms(floor.p99), ratio(p.p99, floor.p99), verdict(p.p99 <= 3*floor.p99))
	return nil
}

// benchAsks: (c) asks per second through the API, each posted to a fake
// Slack over HTTP (50 channels), from 64 concurrent clients.
func benchAsks(rs *storetest.Server, o opts, floor lat) error {
	var chans []string
	for i := range 50 {
		chans = append(chans, fmt.Sprintf("C%03d", i))
	}
	fake := fakeslack.New(chans...)
	defer fake.Close()
	r, err := newReplica(rs.URL, fake)
	if err != nil {
		return err
	}
	defer r.Close()
	c := client(128)
	var done, failed atomic.Int64
	var mu sync.Mutex
	var ls []time.Duration
	deadline := time.Now().Add(time.Duration(o.secs) * time.Second)
	var wg sync.WaitGroup
	for w := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				t := time.Now()
				code, _, err := postJSON(c, r.web.URL+"/api/projects/asks/agent-questions", map[string]any{
					"run_id": fmt.Sprintf("w%d-%d", w, i), "question": "Deploy build " + fmt.Sprint(i) + "?",
					"options": []map[string]any{{"label": "Yes", "description": "ship it"}, {"label": "No", "description": "hold"}},
					"targets": []map[string]any{{"platform": "slack", "channel": chans[(w+i)%len(chans)]}}})
				if err != nil || code != 201 {
					failed.Add(1)
					continue
				}
				done.Add(1)
				mu.Lock()
				ls = append(ls, time.Since(t))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	rate := float64(done.Load()) / float64(o.secs)
	p := percentiles(ls)
	posted := len(fake.Calls("chat.postMessage"))
	fmt.Printf("(c) asks through the API to a fake Slack: %.0f asks/s (%d in %d s, %d failed, %d chat.postMessage); latency p50 %s p99 %s; floor (HTTP+Redis) p50 %s, ratio p50 %s; target ≥ 2000/s: %s\n\n",
		rate, done.Load(), o.secs, failed.Load(), posted, ms(p.p50), ms(p.p99), ms(floor.p50), ratio(p.p50, floor.p50), verdict(rate >= 2000))
	return nil
}

// benchAck: (a) interaction acknowledgement latency: signed Slack
// block_actions clicks on posted questions arrive at the click rate; each
// latency is the HTTP round trip of the click, next to a bare HTTP round
// trip at the same rate.
func benchAck(rs *storetest.Server, o opts, floor lat) error {
	fake := fakeslack.New("C1", "C2", "C3", "C4")
	defer fake.Close()
	r, err := newReplica(rs.URL, fake)
	if err != nil {
		return err
	}
	defer r.Close()
	ctx := context.Background()
	n := o.rate * min(o.secs, 10)
	bodies := make([][]byte, n)
	chans := []string{"C1", "C2", "C3", "C4"}
	for i := range n {
		ch := chans[i%len(chans)]
		res, err := r.router.Ask(ctx, "ack", &core.AskRequest{RunID: fmt.Sprint("run-", i), Question: "Ship it?",
			Options: []core.Option{{Label: "Yes"}, {Label: "No"}}, Targets: []core.Target{{Platform: "slack", Channel: ch}}}, "")
		if err != nil {
			return err
		}
		var ts string
		for _, t := range res.Question.Targets {
			ts = t.MessageTS
		}
		m, ok := fake.Message(ch, ts)
		if !ok {
			return fmt.Errorf("question %d was not posted", i)
		}
		actionID, blockID, value := findButton(m.Blocks, "Yes")
		if actionID == "" {
			return fmt.Errorf("no Yes button in %s", m.Blocks)
		}
		p := map[string]any{"type": "block_actions", "trigger_id": fake.Trigger(),
			"user":      map[string]any{"id": "U1", "username": "alice", "name": "alice"},
			"container": map[string]any{"type": "message", "channel_id": ch, "message_ts": ts},
			"channel":   map[string]any{"id": ch},
			"actions":   []any{map[string]any{"action_id": actionID, "block_id": blockID, "type": "button", "value": value, "action_ts": "1.1"}}}
		b, _ := json.Marshal(p)
		bodies[i] = []byte(url.Values{"payload": {string(b)}}.Encode())
	}
	c := client(512)
	ls, _, err := openLoop(o.rate, time.Duration(n/o.rate)*time.Second, func(i int) (time.Duration, error) {
		req, _ := http.NewRequest(http.MethodPost, r.web.URL+"/slack/interactions", bytes.NewReader(bodies[i]))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		ts, sig := slack.Sign(signingSecret, time.Now(), bodies[i])
		req.Header.Set("X-Slack-Request-Timestamp", ts)
		req.Header.Set("X-Slack-Signature", sig)
		t := time.Now()
		res, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			return 0, fmt.Errorf("click answered %d", res.StatusCode)
		}
		return time.Since(t), nil
	})
	if err != nil {
		return err
	}
	p := percentiles(ls)
	answered := 0
	storetest.WaitFor(ctx, 30*time.Second, func() bool {
		qs, _ := r.app.Store().List(ctx, "ack", core.StatusAnswered, n+10)
		answered = len(qs)
		return answered == n
	})
	fmt.Printf("(a) Slack click acknowledgement, %d signed clicks at %d/s: p50 %s  p99 %s  max %s; floor (bare HTTP) p99 %s; ratio p99 %s; %d/%d answers recorded; target p99 < 25 ms: %s\n\n",
		n, o.rate, ms(p.p50), ms(p.p99), ms(p.max), ms(floor.p99), ratio(p.p99, floor.p99), answered, n, verdict(p.p99 < 25*time.Millisecond))
	return nil
}

// findButton finds a button by its text in Block Kit JSON.
func findButton(blocks json.RawMessage, text string) (actionID, blockID, value string) {
	var bs []map[string]any
	json.Unmarshal(blocks, &bs)
	for _, b := range bs {
		els, _ := b["elements"].([]any)
		if acc, ok := b["accessory"].(map[string]any); ok {
			els = append(els, acc)
		}
		for _, e := range els {
			el, _ := e.(map[string]any)
			t, _ := el["text"].(map[string]any)
			if el["type"] == "button" && t != nil && t["text"] == text {
				a, _ := el["action_id"].(string)
				bid, _ := b["block_id"].(string)
				v, _ := el["value"].(string)
				return a, bid, v
			}
		}
	}
	return "", "", ""
}

// benchMem: (d) Redis memory per pending question: used_memory before and
// after N realistic pending questions (one item, two options with
// descriptions, context, one posted Slack copy), on a fresh redis-server.
func benchMem(dir string, o opts) error {
	d := filepath.Join(dir, "mem")
	os.MkdirAll(d, 0o700)
	rs, err := storetest.StartServer(d, o.memArgs...)
	if err != nil {
		return err
	}
	defer rs.Kill()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{URL: rs.URL})
	if err != nil {
		return err
	}
	defer st.Close()
	rdb := st.Client()
	// Warm up the project (set, seq, stream) so the delta is per question.
	if err := createPending(ctx, st, "mem", 0, 50); err != nil {
		return err
	}
	used := func() int64 {
		rdb.Do(ctx, "MEMORY", "PURGE")
		info, _ := rdb.Info(ctx, "memory").Result()
		for _, l := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "used_memory:"); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
		}
		return 0
	}
	before := used()
	if err := createPending(ctx, st, "mem", 50, o.memN); err != nil {
		return err
	}
	after := used()
	per := float64(after-before) / float64(o.memN)
	keys, _ := rdb.Keys(ctx, "askbridge:{mem}:q:*").Result()
	var hash int64
	if len(keys) > 0 {
		hash, _ = rdb.MemoryUsage(ctx, keys[len(keys)/2]).Result()
	}
	breakdown := []string{}
	for _, k := range []string{"all", "deadlines", "events", "audit"} {
		n, _ := rdb.MemoryUsage(ctx, "askbridge:{mem}:"+k).Result()
		breakdown = append(breakdown, fmt.Sprintf("%s %.0f B", k, float64(n)/float64(o.memN+50)))
	}
	fmt.Printf("(d) Redis memory per pending question (%d questions, INFO used_memory delta, redis-server %s): %.0f B; question hash MEMORY USAGE %d B; per question in indexes: %s; target ≤ 2048 B: %s\n",
		o.memN, strings.Join(append([]string{"defaults"}, o.memArgs...), " "), per, hash, strings.Join(breakdown, ", "), verdict(per <= 2048))
	// The same questions once answered, as kept for the retention period
	// (for sizing; the target is about pending ones).
	qs, err := st.List(ctx, "mem", core.StatusPending, o.memN+50)
	if err != nil {
		return err
	}
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	for _, q := range qs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			a := core.Resolve(q.Questions, [][]string{{q.Questions[0].Options[0].Label}})
			st.Transition(ctx, "mem", q.ID, core.Transition{To: core.StatusAnswered, Answer: &a,
				By: &core.Person{Platform: "slack", ID: "U0123ABCD", Name: "alice"}})
		})
	}
	wg.Wait()
	answered := float64(used()-before) / float64(o.memN)
	fmt.Printf("    the same %d questions once answered (kept for the retention period): %.0f B per question\n", len(qs), answered)
	// Floor: each pending record as the API returns it, stored as one
	// string key with a TTL and nothing else (no index, run, event).
	recs := make([][]byte, len(qs))
	for i, q := range qs {
		q.Status = core.StatusPending
		q.Answers, q.Selections, q.Response, q.RespondedBy, q.RespondedAt = nil, nil, "", nil, nil
		recs[i], _ = json.Marshal(q)
	}
	rdb.FlushAll(ctx)
	base := used()
	pipe := rdb.Pipeline()
	for i, b := range recs {
		pipe.Set(ctx, "floor:"+qs[i].ID, b, time.Hour)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}
	floor := float64(used()-base) / float64(len(recs))
	fmt.Printf("    floor: the API record (%d bytes of JSON) as one string key with a TTL: %.0f B; ratio %.2fx\n\n", len(recs[0]), floor, per/floor)
	return nil
}

func createPending(ctx context.Context, st *store.Store, project string, from, n int) error {
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for i := from; i < from+n; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			now := time.Now().UTC()
			items := []core.Item{{Question: fmt.Sprintf("Deploy build %d of api-server to production?", i), Header: "Deploy",
				Options: []core.Option{{Label: "Ship it", Description: "Roll out to all regions", Value: "ship"},
					{Label: "Hold", Description: "Keep the current version", Value: "hold"}}}}
			q := &core.Question{ID: uuid.NewString(), ProjectID: project, RunID: fmt.Sprint("run-", i), AgentID: "deploy-bot",
				AgentName: "Deploy bot", Kind: core.KindQuestion, Status: core.StatusPending, Questions: items,
				Context:   "CI passed on main (commit 3f2a9c1). Canary error rate 0.02%.",
				Targets:   []core.Target{{Platform: "slack", Channel: "C0123ABCD"}},
				CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(30 * time.Minute), Fingerprint: core.Fingerprint(items)}
			if _, err := st.Create(ctx, q); err != nil {
				firstErr.CompareAndSwap(nil, err)
				return
			}
			t := q.Targets[0]
			t.MessageTS = "1700000000.000100"
			t.URL = "https://example.slack.com/archives/C0123ABCD/p1700000000000100"
			if err := st.AttachCopy(ctx, project, q.ID, t); err != nil {
				firstErr.CompareAndSwap(nil, err)
			}
		}()
	}
	wg.Wait()
	if e, _ := firstErr.Load().(error); e != nil {
		return e
	}
	return nil
}

// benchWaiters: (e) process memory per concurrent waiter: the real bridge
// binary on Redis, N long-poll waiters each on its own pending question;
// RSS (and Go heap from /metrics if exposed) before and after.
func benchWaiters(rs *storetest.Server, o opts) error {
	dir, err := os.MkdirTemp("", "bridge-bin")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "bridge")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/bridge").CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v: %s", err, out)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{URL: rs.URL})
	if err != nil {
		return err
	}
	defer st.Close()
	if err := createPending(ctx, st, "waiters", 0, o.waiters); err != nil {
		return err
	}
	qs, err := st.List(ctx, "waiters", core.StatusPending, o.waiters)
	if err != nil {
		return err
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve", "--addr", addr)
	cmd.Env = append(os.Environ(), "REDIS_URL="+rs.URL, "BRIDGE_LOG_LEVEL=error")
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	base := "http://" + addr
	if !storetest.WaitFor(ctx, 15*time.Second, func() bool {
		res, err := http.Get(base + "/readyz")
		if err == nil {
			res.Body.Close()
		}
		return err == nil && res.StatusCode == 200
	}) {
		return errors.New("bridge did not start")
	}
	c := client(o.waiters + 100)
	var parked atomic.Int64
	wait := func(qs []*core.Question) {
		for _, q := range qs {
			go func() {
				req, _ := http.NewRequest("GET", base+"/api/projects/waiters/agent-questions/"+q.ID+"/wait?timeout=120s", nil)
				parked.Add(1)
				res, err := c.Do(req)
				if err == nil {
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
			}()
		}
	}
	// Warm up: 100 waiters, so pools and buffers that do not grow per
	// waiter are already counted in the baseline.
	wait(qs[:100])
	time.Sleep(2 * time.Second)
	rss0 := rss(cmd.Process.Pid)
	start := time.Now()
	wait(qs[100:])
	for parked.Load() < int64(len(qs)) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(5 * time.Second) // all requests are read and parked in Wait
	rssNow := rss(cmd.Process.Pid)
	// Parking 9,900 connections at once leaves garbage and free heap that
	// the Go runtime gives back over the next seconds (a GC, then the
	// scavenger), so the steady state is read once RSS stops falling:
	// no new low for 10 s, at most 90 s (the waits last 120 s).
	rss1, low := rssNow, time.Now()
	for settle := time.Now(); time.Since(settle) < 90*time.Second && time.Since(low) < 10*time.Second; {
		time.Sleep(time.Second)
		if r := rss(cmd.Process.Pid); r < rss1 {
			rss1, low = r, time.Now()
		}
	}
	settled := time.Since(start)
	n := len(qs) - 100
	per := float64(rss1-rss0) / float64(n)
	conns := countConns(cmd.Process.Pid)
	fmt.Printf("(e) process memory per concurrent waiter, %d waiters on one bridge: RSS %.1f MB → %.1f MB once settled (%s after the waiters began; %.1f MB right after they parked, %.2f KB per waiter), %.2f KB per waiter; bridge holds %d sockets; target ≤ 10 KB: %s\n\n",
		len(qs), float64(rss0)/1e6, float64(rss1)/1e6, settled.Round(time.Second), float64(rssNow)/1e6,
		float64(rssNow-rss0)/float64(n)/1024, per/1024, conns, verdict(per <= 10*1024))
	// The waiters still work: answer one through the API.
	code, _, err := postJSON(c, base+"/api/projects/waiters/agent-questions/"+qs[len(qs)-1].ID+"/respond", map[string]any{"response": "ship"})
	if err != nil || code != 202 {
		return fmt.Errorf("answering under load: %d %v", code, err)
	}
	return nil
}

func rss(pid int) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			f := strings.Fields(v)
			n, _ := strconv.ParseInt(f[0], 10, 64)
			return n * 1024
		}
	}
	return 0
}

func countConns(pid int) int {
	es, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	n := 0
	for _, e := range es {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name())); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}
