package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// benchLifetimes: (g) storage returns to its baseline. On a fresh
// redis-server, two replicas' sweepers run as in `askbridge serve` (every
// 250 ms); N questions in 10 projects are asked (half with an idempotency
// key, one Slack copy each, a draft on every tenth) and answered, with a
// short retention. Once the retention has passed, Redis's used_memory and
// DBSIZE are compared with the baseline taken after a warm-up round of the
// same kind had itself passed its retention (scripts loaded, projects
// registered).
func benchLifetimes(dir string, o opts) error {
	d := filepath.Join(dir, "lifetimes")
	os.MkdirAll(d, 0o700)
	rs, err := storetest.StartServer(d)
	if err != nil {
		return err
	}
	defer rs.Kill()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var st *store.Store
	for range 2 {
		s, err := store.Open(ctx, store.Options{URL: rs.URL, Retention: o.lifeRetention})
		if err != nil {
			return err
		}
		defer s.Close()
		r := lifecycle.NewRouter(lifecycle.RouterConfig{Store: s, Retention: o.lifeRetention})
		go r.Sweep(ctx, 250*time.Millisecond)
		if st == nil {
			st = s
		}
	}
	rdb := st.Client()
	// used is Redis's used_memory. The slow log is emptied first: on a
	// loaded machine it fills with the load's commands (up to 128 entries
	// of ~1 KB), which is Redis's diagnostics, not askbridge's storage.
	// So are the statistics CONFIG RESETSTAT clears: Redis 7 keeps a
	// latency histogram for every command it has run (latency-tracking,
	// on by default), and a command the load ran that the warm-up did not
	// made the memory after the load 50–140 KB (2.6–7.5 %) over the
	// baseline with no key left.
	used := func() int64 {
		rdb.Do(ctx, "SLOWLOG", "RESET")
		rdb.Do(ctx, "CONFIG", "RESETSTAT")
		rdb.Do(ctx, "MEMORY", "PURGE")
		return infoInt(ctx, rdb, "memory", "used_memory")
	}
	detail := func() string {
		var out []string
		for _, f := range []string{"used_memory_dataset", "used_memory_overhead", "mem_clients_normal", "used_memory_scripts"} {
			out = append(out, fmt.Sprintf("%s %d", strings.TrimPrefix(f, "used_memory_"), infoInt(ctx, rdb, "memory", f)))
		}
		return strings.Join(out, ", ")
	}
	size := func() int64 { return must(rdb.DBSize(ctx).Result()) }
	// keys names the keys left (at most 5) with their type and MEMORY USAGE.
	keys := func() string {
		var out []string
		iter := rdb.Scan(ctx, 0, "*", 100).Iterator()
		for iter.Next(ctx) && len(out) < 5 {
			k := iter.Val()
			out = append(out, fmt.Sprintf("%s (%s, %d B)", k, rdb.Type(ctx, k).Val(), rdb.MemoryUsage(ctx, k, 0).Val()))
		}
		return strings.Join(out, ", ")
	}
	// settle waits until DBSIZE is back to want (or limit passes) and
	// returns how long that took after the retention.
	settle := func(want int64, limit time.Duration) time.Duration {
		t0 := time.Now()
		for size() > want && time.Since(t0) < limit {
			time.Sleep(100 * time.Millisecond)
		}
		return time.Since(t0)
	}

	cold, coldKeys := used(), size()
	if _, err := askAndAnswer(ctx, st, 1000); err != nil {
		return err
	}
	time.Sleep(o.lifeRetention)
	settle(int64(1), 30*time.Second)
	time.Sleep(time.Second) // Redis's cron resizes its tables
	base, baseKeys := used(), size()
	baseDetail, baseLeft := detail(), keys()

	t0 := time.Now()
	n, err := askAndAnswer(ctx, st, o.lifeN)
	if err != nil {
		return err
	}
	took := time.Since(t0)
	peak, peakKeys := used(), size()
	time.Sleep(o.lifeRetention)
	after := settle(baseKeys, 60*time.Second)
	time.Sleep(time.Second)
	end, endKeys := used(), size()
	dm := float64(end-base) / float64(base) * 100
	fmt.Printf("(g) storage after %d questions asked and answered in %.1f s (retention %s), once the retention passed: used_memory %s (baseline %s, %+.1f %%; cold %s, at the end of the load %s); DBSIZE %d (baseline %d; cold %d; at the end of the load %d), back %.1f s after the retention; target used_memory within 5 %% and DBSIZE baseline ± 2: %s\n",
		n, took.Seconds(), o.lifeRetention, mb(end), mb(base), dm, mb(cold), mb(peak), endKeys, baseKeys, coldKeys, peakKeys,
		after.Seconds(), verdict(dm <= 5 && dm >= -5 && endKeys >= baseKeys-2 && endKeys <= baseKeys+2))
	fmt.Printf("    INFO memory (bytes) baseline: %s; after: %s\n", baseDetail, detail())
	fmt.Printf("    keys baseline: %s; after: %s\n\n", baseLeft, keys())
	return nil
}

func mb(n int64) string { return fmt.Sprintf("%.2f MB", float64(n)/1e6) }

func infoInt(ctx context.Context, rdb redis.UniversalClient, section, field string) int64 {
	info, _ := rdb.Info(ctx, section).Result()
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), field+":"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// askAndAnswer asks n questions over 10 projects and 500 runs per project,
// 32 at a time, and answers each.
func askAndAnswer(ctx context.Context, st *store.Store, n int) (int, error) {
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	var firstErr atomic.Value
	var done atomic.Int64
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			p := fmt.Sprintf("life%d", i%10)
			now := time.Now().UTC()
			items := []domain.Item{{Question: fmt.Sprintf("Deploy build %d of api-server to production?", i), Header: "Deploy",
				Options: []domain.Option{{Label: "Ship it", Description: "Roll out to all regions", Value: "ship"},
					{Label: "Hold", Description: "Keep the current version", Value: "hold"}}}}
			q := &domain.Question{ID: domain.NewQuestionID(p), ProjectID: p, RunID: fmt.Sprint("run-", i%5000), AgentID: "deploy-bot",
				Kind: domain.KindQuestion, Status: domain.StatusPending, Questions: items,
				Context:   "CI passed on main (commit 3f2a9c1). Canary error rate 0.02%.",
				Targets:   []domain.Target{{Platform: "slack", Channel: "C0123ABCD"}},
				CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(30 * time.Minute), Fingerprint: domain.Fingerprint(items)}
			if i%2 == 0 {
				q.IdempotencyKey = uuid.NewString()
			}
			fail := func(err error) { firstErr.CompareAndSwap(nil, err) }
			if _, err := st.Create(ctx, q); err != nil {
				fail(err)
				return
			}
			t := q.Targets[0]
			t.MessageTS, t.URL = "1700000000.000100", "https://example.slack.com/archives/C0123ABCD/p1700000000000100"
			if err := st.AttachCopy(ctx, p, q.ID, t); err != nil {
				fail(err)
				return
			}
			if i%10 == 0 {
				if err := st.PutDraft(ctx, p, q.ID, "slack:U0123ABCD", map[string][]string{items[0].Question: {"Ship it"}}, 31*time.Minute); err != nil {
					fail(err)
					return
				}
			}
			a := domain.Resolve(q.Questions, [][]string{{"Ship it"}})
			if _, err := st.Transition(ctx, p, q.ID, lifecycle.Transition{To: domain.StatusAnswered, Answer: &a,
				By: &domain.Person{Platform: "slack", ID: "U0123ABCD", Name: "alice"}}); err != nil {
				fail(err)
				return
			}
			done.Add(1)
		})
	}
	wg.Wait()
	if e, _ := firstErr.Load().(error); e != nil {
		return int(done.Load()), e
	}
	return int(done.Load()), nil
}
