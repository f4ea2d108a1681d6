package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/storetest"
)

// BenchmarkPendingBytes measures what a pending question costs Redis: on
// a fresh redis-server, REDIS_PENDING_N (default 2,000) pending questions
// as an agent asks them through the API (one item, two options with
// descriptions, a context line, one posted Slack copy, a run each), then
// MEMORY USAGE (SAMPLES 0) of every key, summed by kind of key and divided
// by the number of questions, against the floor: each question's API
// record as one string key with a TTL (target: ratio ≤ 1.5).
//
//	go test ./store -run '^$' -bench PendingBytes -benchtime 1x
func BenchmarkPendingBytes(b *testing.B) {
	n := 2000
	if v, err := strconv.Atoi(os.Getenv("REDIS_PENDING_N")); err == nil && v > 0 {
		n = v
	}
	for range b.N {
		pendingBytes(b, n)
	}
}

func pendingBytes(b *testing.B, n int) {
	ctx := context.Background()
	rs, err := storetest.StartServer(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer rs.Kill()
	st, err := store.Open(ctx, store.Options{URL: rs.URL})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ids := make([]string, n)
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	for i := range ids {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			q := askedQuestion("mem", i)
			ids[i] = q.ID
			_, err := st.Create(ctx, q)
			if err == nil {
				t := q.Targets[0]
				t.MessageTS, t.URL = "1700000000.000100", "https://example.slack.com/archives/C0123ABCD/p1700000000000100"
				err = st.AttachCopy(ctx, "mem", q.ID, t)
			}
			if err != nil {
				mu.Lock()
				failed = err
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if failed != nil {
		b.Fatal(failed)
	}
	rdb := st.Client()
	byKind := map[string]int64{}
	var total int64
	iter := rdb.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		u, err := rdb.MemoryUsage(ctx, k, 0).Result()
		if err != nil {
			b.Fatal(err)
		}
		kind := k[strings.Index(k, "}:")+2:]
		if i := strings.IndexByte(kind, ':'); i >= 0 {
			kind = kind[:i+1]
		}
		byKind[kind] += u
		total += u
	}
	// The floor: each record as the API returns it, one string key with a TTL.
	var floor int64
	for _, id := range ids {
		q, err := st.Get(ctx, "mem", id)
		if err != nil {
			b.Fatal(err)
		}
		j, _ := json.Marshal(q)
		if err := rdb.Set(ctx, "floor:"+id, j, time.Hour).Err(); err != nil {
			b.Fatal(err)
		}
		u, _ := rdb.MemoryUsage(ctx, "floor:"+id, 0).Result()
		floor += u
	}
	per, fl := float64(total)/float64(n), float64(floor)/float64(n)
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return byKind[kinds[i]] > byKind[kinds[j]] })
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, float64(byKind[k])/float64(n)))
	}
	b.ReportMetric(per, "B/pending")
	b.ReportMetric(fl, "floor-B")
	b.ReportMetric(per/fl, "ratio")
	fmt.Printf("Redis, %d pending questions: %.0f B each (MEMORY USAGE of every key; by key: %s), the API record as one key with a TTL %.0f B; ratio %.2f (target ≤ 1.5)\n",
		n, per, strings.Join(parts, ", "), fl, per/fl)
}

func askedQuestion(p string, i int) *domain.Question {
	now := time.Now().UTC()
	items := []domain.Item{{Question: fmt.Sprintf("Deploy build %d of api-server to production?", i), Header: "Deploy",
		Options: []domain.Option{{Label: "Ship it", Description: "Roll out to all regions", Value: "ship"},
			{Label: "Hold", Description: "Keep the current version", Value: "hold"}}}}
	return &domain.Question{ID: domain.NewQuestionID(p), ProjectID: p, RunID: fmt.Sprint("run-", i), AgentID: "deploy-bot",
		AgentName: "Deploy bot", Kind: domain.KindQuestion, Status: domain.StatusPending, Questions: items,
		Context:   "CI passed on main (commit 3f2a9c1). Canary error rate 0.02%.",
		Targets:   []domain.Target{{Platform: "slack", Channel: "C0123ABCD"}},
		CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(30 * time.Minute), Fingerprint: domain.Fingerprint(items)}
}
