package main

import (
	"context"
	"encoding/json"
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
)

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
	qs, err := st.List(ctx, "mem", domain.StatusPending, o.memN+50)
	if err != nil {
		return err
	}
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	for _, q := range qs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			a := domain.Resolve(q.Questions, [][]string{{q.Questions[0].Options[0].Label}})
			st.Transition(ctx, "mem", q.ID, lifecycle.Transition{To: domain.StatusAnswered, Answer: &a,
				By: &domain.Person{Platform: "slack", ID: "U0123ABCD", Name: "alice"}})
		})
	}
	wg.Wait()
	answered := float64(used()-before) / float64(o.memN)
	fmt.Printf("    the same %d questions once answered (kept for the retention period): %.0f B per question\n", len(qs), answered)
	// Floor: each pending record as the API returns it, stored as one
	// string key with a TTL and nothing else (no index, run, event).
	recs := make([][]byte, len(qs))
	for i, q := range qs {
		q.Status = domain.StatusPending
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
			items := []domain.Item{{Question: fmt.Sprintf("Deploy build %d of api-server to production?", i), Header: "Deploy",
				Options: []domain.Option{{Label: "Ship it", Description: "Roll out to all regions", Value: "ship"},
					{Label: "Hold", Description: "Keep the current version", Value: "hold"}}}}
			q := &domain.Question{ID: uuid.NewString(), ProjectID: project, RunID: fmt.Sprint("run-", i), AgentID: "deploy-bot",
				AgentName: "Deploy bot", Kind: domain.KindQuestion, Status: domain.StatusPending, Questions: items,
				Context:   "CI passed on main (commit 3f2a9c1). Canary error rate 0.02%.",
				Targets:   []domain.Target{{Platform: "slack", Channel: "C0123ABCD"}},
				CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(30 * time.Minute), Fingerprint: domain.Fingerprint(items)}
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

// oneKeyFloor stores n pending questions of project as the API returns
// them, each as one string key with a TTL and nothing else, and returns
// the used_memory that took per record and the JSON's size; the keys are
// deleted again.
func oneKeyFloor(ctx context.Context, rs *storetest.Server, st *store.Store, project string, n int) (float64, int, error) {
	qs, err := st.List(ctx, project, domain.StatusPending, n)
	if err != nil {
		return 0, 0, err
	}
	if len(qs) == 0 {
		return 0, 0, fmt.Errorf("no pending question in %s", project)
	}
	rdb := st.Client()
	rdb.Do(ctx, "MEMORY", "PURGE")
	before := redisUsed(rs)
	pipe := rdb.Pipeline()
	var keys []string
	size := 0
	for _, q := range qs {
		b, _ := json.Marshal(q)
		size = len(b)
		keys = append(keys, "floor:"+q.ID)
		pipe.Set(ctx, "floor:"+q.ID, b, time.Hour)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, 0, err
	}
	rdb.Do(ctx, "MEMORY", "PURGE")
	per := float64(redisUsed(rs)-before) / float64(len(qs))
	rdb.Del(ctx, keys...)
	return per, size, nil
}
