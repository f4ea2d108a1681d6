package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store/native"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/google/uuid"
)

// benchEmbedded: (i) the embedded store (durable, in a data directory)
// beside a single replica on the real redis-server, in the same run:
// asks/s as (c), wake-up p99 on one replica, then with embN retained
// (answered) and embPending pending questions: the inbox's first page,
// the pending list API and ask latency; the restart with them; memory
// per retained record; and the data file through retention.
func benchEmbedded(rs *storetest.Server, dir string, o opts) error {
	backends := []struct {
		name string
		s    app.Settings
	}{
		{"redis", app.Settings{Addr: "127.0.0.1:0", RedisURL: rs.URL, RedisPrefix: "emb" + strconv.Itoa(rand.IntN(1e6))}},
		{"embedded", app.Settings{Addr: "127.0.0.1:0", DataDir: filepath.Join(dir, "embedded")}},
	}
	for _, b := range backends {
		if err := embeddedOne(rs, b.name, b.s, o); err != nil {
			return fmt.Errorf("%s: %w", b.name, err)
		}
	}
	return embeddedDurableRedis(dir, o)
}

// embeddedDurableRedis: the embedded store syncs every answer to disk
// before anyone is told of it; the Redis above keeps nothing on disk. For
// the same promise, Redis must append every write to its log and fsync it
// (appendfsync always): asks/s and the wake-up on that Redis, for the
// comparison at equal durability.
func embeddedDurableRedis(dir string, o opts) error {
	d := filepath.Join(dir, "redis-aof")
	if err := os.MkdirAll(d, 0o700); err != nil {
		return err
	}
	rs, err := storetest.StartServer(d, "--appendonly", "yes", "--appendfsync", "always")
	if err != nil {
		return err
	}
	defer rs.Kill()
	chans := slackChannels()
	fake := fakeslack.New(chans...)
	defer fake.Close()
	s := app.Settings{Addr: "127.0.0.1:0", RedisURL: rs.URL, RedisPrefix: "aof"}
	s.Slack.BotToken, s.Slack.SigningSecret, s.Slack.APIURL = fake.BotToken, signingSecret, fake.APIURL()
	r, err := startReplica(s)
	if err != nil {
		return err
	}
	defer r.Close()
	rate, askLat, failed := askLoad(r, "asks", 64, time.Duration(o.secs)*time.Second, chans)
	fmt.Printf("(i) %-8s asks/s (64 clients, %d s, fake Slack): %.0f asks/s, %d failed; ask p50 %s p99 %s\n",
		"redis-aof", o.secs, rate, failed, ms(askLat.p50), ms(askLat.p99))
	wake, err := wakeOne(r, o.rate, o.rate*min(o.secs, 5))
	if err != nil {
		return err
	}
	fmt.Printf("(i) %-8s wake-up on one replica (%d answers at %d/s): p50 %s p99 %s max %s (redis-server with appendfsync always)\n",
		"redis-aof", o.rate*min(o.secs, 5), o.rate, ms(wake.p50), ms(wake.p99), ms(wake.max))
	return nil
}

func embeddedOne(rs *storetest.Server, name string, s app.Settings, o opts) error {
	ctx := context.Background()
	// asks/s, as (c): 64 clients, each ask posted to a fake Slack.
	chans := slackChannels()
	fake := fakeslack.New(chans...)
	defer fake.Close()
	withSlack := s
	withSlack.Slack.BotToken, withSlack.Slack.SigningSecret, withSlack.Slack.APIURL = fake.BotToken, signingSecret, fake.APIURL()
	r, err := startReplica(withSlack)
	if err != nil {
		return err
	}
	rate, askLat, failed := askLoad(r, "asks", 64, time.Duration(o.secs)*time.Second, chans)
	fmt.Printf("(i) %-8s asks/s (64 clients, %d s, fake Slack): %.0f asks/s, %d failed; ask p50 %s p99 %s\n",
		name, o.secs, rate, failed, ms(askLat.p50), ms(askLat.p99))
	wake, err := wakeOne(r, o.rate, o.rate*min(o.secs, 5))
	if err != nil {
		r.Close()
		return err
	}
	fmt.Printf("(i) %-8s wake-up on one replica (%d answers at %d/s): p50 %s p99 %s max %s\n",
		name, o.rate*min(o.secs, 5), o.rate, ms(wake.p50), ms(wake.p99), ms(wake.max))

	// Retained and pending records, through the store itself.
	heap0, redis0 := heapInUse(), redisUsed(rs)
	t0 := time.Now()
	if err := preload(ctx, r.app.Store(), "team", o.embN, o.embPending); err != nil {
		r.Close()
		return err
	}
	fmt.Printf("(i) %-8s loaded %d answered + %d pending questions in %s\n", name, o.embN, o.embPending, time.Since(t0).Round(time.Millisecond))
	heap1, redis1 := heapInUse(), redisUsed(rs)
	n := int64(o.embN + o.embPending)
	if name == "redis" {
		fmt.Printf("(i) %-8s memory per record: %d B in redis-server (used_memory), %d B in the bridge\n", name, (redis1-redis0)/n, (heap1-heap0)/n)
	} else {
		st := r.app.Store().(*native.Store)
		file, used := st.DiskUsage()
		fmt.Printf("(i) %-8s memory per record: %d B in the bridge (Go heap in use); data file %d B per record (%d MB, %d MB in use)\n",
			name, (heap1-heap0)/n, file/n, file>>20, used>>20)
	}
	c := client(32)
	inbox, err := timeGets(c, r.web.URL+"/", 30)
	if err != nil {
		r.Close()
		return err
	}
	list, err := timeGets(c, r.web.URL+"/api/projects/team/agent-questions?status=pending", 30)
	if err != nil {
		r.Close()
		return err
	}
	_, one, oneFailed := askLoad(r, "team", 1, 3*time.Second, chans)
	fmt.Printf("(i) %-8s with %d retained + %d pending: ask one at a time p50 %s p99 %s (%d failed)\n",
		name, o.embN, o.embPending, ms(one.p50), ms(one.p99), oneFailed)
	_, ask, askFailed := askLoad(r, "team", 16, 5*time.Second, chans)
	fmt.Printf("(i) %-8s with %d retained + %d pending: inbox first page p50 %s p99 %s (target ≤ 50 ms: %s); pending list API p50 %s p99 %s (target ≤ 50 ms: %s); ask p50 %s p99 %s (16 clients, %d failed; target ≤ 10 ms: %s)\n",
		name, o.embN, o.embPending, ms(inbox.p50), ms(inbox.p99), verdict(inbox.p99 <= 50*time.Millisecond),
		ms(list.p50), ms(list.p99), verdict(list.p99 <= 50*time.Millisecond), ms(ask.p50), ms(ask.p99), askFailed, verdict(ask.p99 <= 10*time.Millisecond))

	// Restart: a new bridge on the same data (directory or Redis) until
	// /readyz answers 200.
	r.Close()
	t0 = time.Now()
	r, err = startReplica(s)
	if err != nil {
		return err
	}
	for {
		res, err := http.Get(r.web.URL + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Printf("(i) %-8s restart with %d records: ready in %s (target ≤ 2 s: %s)\n", name, n, time.Since(t0).Round(time.Millisecond),
		verdict(time.Since(t0) <= 2*time.Second))
	if st, ok := r.app.Store().(*native.Store); ok {
		// Retention: every answered record goes; the file keeps its size,
		// its pages are free and reused by what comes next.
		file0, used0 := st.DiskUsage()
		for {
			k, err := st.Trim(ctx, time.Now().Add(8*24*time.Hour))
			if err != nil || k == 0 {
				break
			}
		}
		file1, used1 := st.DiskUsage()
		if err := preload(ctx, st, "team2", o.embN/10, 0); err != nil {
			r.Close()
			return err
		}
		file2, used2 := st.DiskUsage()
		fmt.Printf("(i) %-8s data file through retention: %d MB (%d MB in use) → trimmed %d MB (%d MB in use) → %d more answered: %d MB (%d MB in use)\n",
			name, file0>>20, used0>>20, file1>>20, used1>>20, o.embN/10, file2>>20, used2>>20)
	}
	r.Close()
	fmt.Println()
	return nil
}

// askLoad asks from clients goroutines for d in project p and returns the
// rate, the latencies and the failures.
func askLoad(r *replica, p string, clients int, d time.Duration, chans []string) (float64, lat, int64) {
	return askLoadURL(r.web.URL, p, clients, d, chans)
}

// askLoadURL is askLoad against the bridge at base; with no chans the
// questions have no target (the inbox shows them).
func askLoadURL(base, p string, clients int, d time.Duration, chans []string) (float64, lat, int64) {
	c := client(clients * 2)
	var done, failed atomic.Int64
	var mu sync.Mutex
	var ls []time.Duration
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for w := range clients {
		wg.Go(func() {
			for i := 0; time.Now().Before(deadline); i++ {
				t := time.Now()
				ask := map[string]any{
					"run_id": fmt.Sprintf("%s-w%d-%d", uuid.NewString()[:6], w, i), "question": "Deploy build " + fmt.Sprint(i) + "?",
					"options": []map[string]any{{"label": "Yes", "description": "ship it"}, {"label": "No", "description": "hold"}}}
				if len(chans) > 0 {
					ask["targets"] = []map[string]any{{"platform": "slack", "channel": chans[(w+i)%len(chans)]}}
				}
				code, _, err := postJSON(c, base+"/api/projects/"+p+"/agent-questions", ask)
				if err != nil || code != 201 {
					failed.Add(1)
					continue
				}
				done.Add(1)
				mu.Lock()
				ls = append(ls, time.Since(t))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return float64(done.Load()) / d.Seconds(), percentiles(ls), failed.Load()
}

// wakeOne: n questions, a waiter each, answered at rate on the same
// replica; the time from sending the answer to the waiter's reply.
func wakeOne(r *replica, rate, n int) (lat, error) {
	ctx := context.Background()
	ids := make([]string, n)
	for i := range ids {
		res, err := r.router.Ask(ctx, "wake", &domain.AskRequest{RunID: "run-" + uuid.NewString(), Question: "Ship it?",
			Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}}, "")
		if err != nil {
			return lat{}, err
		}
		ids[i] = res.Question.ID
	}
	c := client(n + 16)
	woken := make([]chan time.Time, n)
	for i, id := range ids {
		woken[i] = make(chan time.Time, 1)
		go func() {
			res, err := c.Get(r.web.URL + "/api/projects/wake/agent-questions/" + id + "/wait?timeout=120s")
			if err == nil {
				res.Body.Close()
			}
			woken[i] <- time.Now()
		}()
	}
	time.Sleep(time.Second) // every waiter parked
	ls, _, err := openLoop(rate, time.Duration(n/rate)*time.Second, func(i int) (time.Duration, error) {
		t := time.Now()
		code, _, err := postJSON(c, r.web.URL+"/api/projects/wake/agent-questions/"+ids[i]+"/respond", map[string]any{"response": "yes"})
		if err != nil {
			return 0, err
		}
		if code != 202 {
			return 0, fmt.Errorf("respond: %d", code)
		}
		return (<-woken[i]).Sub(t), nil
	})
	return percentiles(ls), err
}

// preload creates answered (retained) and pending questions in p
// through the store, as the API would have kept them.
func preload(ctx context.Context, st lifecycle.Store, p string, answered, pending int) error {
	_, err := preloadIDs(ctx, st, p, answered, pending)
	return err
}

// filled is a pending question of a preload, and what an agent asks to
// re-attach to it: the same items in its run, as fillAgent.
type filled struct{ project, id, run, question string }

// fillAgent is the agent of preloaded questions; an MCP host re-attaching
// to one names itself so (clientInfo.name).
const fillAgent = "deploy-bot"

// fillItems are the items of preloaded question i, normalized as the API
// normalizes an ask (an option's value is its label), so the same ask made
// again over the API or MCP in its run has its fingerprint.
func fillItems(question string) []domain.Item {
	return domain.NormalizeItems([]domain.Item{{Question: question, Header: "Deploy",
		Options: []domain.Option{{Label: "Ship it", Description: "Roll out to all regions"},
			{Label: "Hold", Description: "Keep the current version"}}}})
}

// preloadIDs is preload, returning the pending questions.
func preloadIDs(ctx context.Context, st lifecycle.Store, p string, answered, pending int) ([]filled, error) {
	out := make([]filled, pending)
	batch := uuid.NewString()[:8] // runs of another call are other runs
	sem := make(chan struct{}, 128)
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for i := range answered + pending {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			now := time.Now().UTC()
			text := fmt.Sprintf("Deploy build %d of api-server to production?", i)
			items := fillItems(text)
			q := &domain.Question{ID: domain.NewQuestionID(p), ProjectID: p, RunID: fmt.Sprint("run-", batch, "-", i), AgentID: fillAgent,
				AgentName: "Deploy bot", Kind: domain.KindQuestion, Status: domain.StatusPending, Questions: items,
				Context:   "CI passed on main (commit 3f2a9c1). Canary error rate 0.02%.",
				Targets:   []domain.Target{{Platform: "slack", Channel: "C0123ABCD"}},
				CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour), Fingerprint: domain.Fingerprint(items)}
			if _, err := st.Create(ctx, q); err != nil {
				firstErr.CompareAndSwap(nil, err)
				return
			}
			if i >= answered {
				out[i-answered] = filled{project: p, id: q.ID, run: q.RunID, question: text}
			}
			if i < answered {
				a := domain.Resolve(items, [][]string{{"Ship it"}})
				if _, err := st.Transition(ctx, p, q.ID, lifecycle.Transition{To: domain.StatusAnswered, Answer: &a,
					By: &domain.Person{Platform: "slack", ID: "U1", Name: "Alice"}, At: time.Now().UTC()}); err != nil {
					firstErr.CompareAndSwap(nil, err)
				}
			}
		})
	}
	wg.Wait()
	if e, _ := firstErr.Load().(error); e != nil {
		return nil, e
	}
	return out, nil
}

// timeGets times n GETs of u one after the other.
func timeGets(c *http.Client, u string, n int) (lat, error) {
	var ls []time.Duration
	for range n {
		t := time.Now()
		res, err := c.Get(u)
		if err != nil {
			return lat{}, err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			return lat{}, fmt.Errorf("GET %s: %d", u, res.StatusCode)
		}
		ls = append(ls, time.Since(t))
	}
	return percentiles(ls), nil
}

func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

func redisUsed(rs *storetest.Server) int64 {
	out, _ := rs.Cli("info", "memory")
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "used_memory:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}
