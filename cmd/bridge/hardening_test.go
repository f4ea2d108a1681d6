package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/webhook"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ask(t *testing.T, p *proc, project string, body map[string]any) string {
	t.Helper()
	code, q := p.call("POST", "/api/projects/"+project+"/agent-questions", body)
	require.Equal(t, 201, code, "%v", q)
	return q["id"].(string)
}

func readyStatus(p *proc) int {
	c := http.Client{Timeout: 3 * time.Second}
	res, err := c.Get(p.URL + "/readyz")
	if err != nil {
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

// TestThreeReplicasAskClickWaitAnywhere: three bridge processes on one
// Redis. Each question is asked on one replica, waited on at a second and
// answered at the same moment on all three: exactly one answer wins, every
// waiter gets it, and questions whose deadline passes expire exactly once
// although all three sweepers run.
func TestThreeReplicasAskClickWaitAnywhere(t *testing.T) {
	srv := storetest.Redis(t)
	reps := []*proc{startBridge(t, "REDIS_URL="+srv.URL), startBridge(t, "REDIS_URL="+srv.URL), startBridge(t, "REDIS_URL="+srv.URL)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := sseEvents(t, ctx, reps[2].URL+"/api/projects/multi/events")

	// Short deadlines first, so their 10 s run alongside the rest.
	var expiring []string
	for i := range 6 {
		expiring = append(expiring, ask(t, reps[i%3], "multi", map[string]any{"run_id": fmt.Sprint("exp-", i),
			"question": fmt.Sprint("Expire ", i, "?"), "timeout": "10s"}))
	}

	const n = 30
	var wg sync.WaitGroup
	var wins, conflicts, woken atomic.Int32
	for i := range n {
		id := ask(t, reps[i%3], "multi", map[string]any{"run_id": fmt.Sprint("run-", i), "question": fmt.Sprint("Deploy ", i, "?"),
			"options": []map[string]any{{"label": "Yes", "value": "yes"}, {"label": "No", "value": "no"}}})
		waiter := reps[(i+1)%3]
		got := make(chan map[string]any, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, rec := waiter.call("GET", "/api/projects/multi/agent-questions/"+id+"/wait?timeout=60s", nil)
			got <- rec
		}()
		var clicks sync.WaitGroup
		for r := range 3 { // the same click reaches all three replicas
			clicks.Add(1)
			go func() {
				defer clicks.Done()
				code, _ := reps[r].call("POST", "/api/projects/multi/agent-questions/"+id+"/respond", map[string]any{"response": []string{"yes", "no", "yes"}[r]})
				switch code {
				case 202:
					wins.Add(1)
				case 409:
					conflicts.Add(1)
				default:
					t.Errorf("respond on replica %d: %d", r, code)
				}
			}()
		}
		clicks.Wait()
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case rec := <-got:
				if rec["status"] == "answered" {
					woken.Add(1)
				}
			case <-time.After(30 * time.Second):
				t.Errorf("waiter for %s not woken", id)
			}
		}()
	}
	wg.Wait()
	assert.EqualValues(t, n, wins.Load(), "exactly one answer wins per question")
	assert.EqualValues(t, 2*n, conflicts.Load(), "the other two get 409")
	assert.EqualValues(t, n, woken.Load(), "every waiter, on another replica, got the answer")

	for _, id := range expiring {
		_, rec := reps[0].call("GET", "/api/projects/multi/agent-questions/"+id+"/wait?timeout=30s", nil)
		assert.Equal(t, "expired", rec["status"])
	}
	time.Sleep(time.Second) // every sweeper has run several more times
	cancel()
	counts := map[string]int{}
	for e := range events {
		counts[e]++
	}
	assert.Equal(t, len(expiring), counts["question.expired"], "each deadline expires once with three sweepers")
	assert.Equal(t, n, counts["question.answered"])
}

// TestWebhooksEffectivelyOnceWhenAReplicaIsKilled: three replicas answer
// webhook-mode questions while the receiver is slow; one replica is killed
// with SIGKILL while deliveries are in flight. Every question's resume
// webhook arrives (at least once), always with one delivery id per question,
// so a receiver that drops repeated ids processes each exactly once.
func TestWebhooksEffectivelyOnceWhenAReplicaIsKilled(t *testing.T) {
	srv := storetest.Redis(t)
	var mu sync.Mutex
	ids := map[string]map[string]int{} // question id -> delivery id -> requests
	var arrived atomic.Int32
	gate := make(chan struct{})
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if webhook.Verify([]byte("s3cret"), r.Header.Get(webhook.HeaderSignature), body, 0, time.Now()) != nil {
			w.WriteHeader(401)
			return
		}
		arrived.Add(1)
		<-gate // in flight until the replica has been killed
		var p struct {
			Question struct{ ID string } `json:"question"`
		}
		if err := json.Unmarshal(body, &p); err != nil {
			w.WriteHeader(400)
			return
		}
		mu.Lock()
		if ids[p.Question.ID] == nil {
			ids[p.Question.ID] = map[string]int{}
		}
		ids[p.Question.ID][r.Header.Get(webhook.HeaderDelivery)]++
		mu.Unlock()
		w.WriteHeader(200)
	}))
	defer receiver.Close()
	env := []string{"REDIS_URL=" + srv.URL, "BRIDGE_WEBHOOK_SECRET=s3cret", "BRIDGE_WEBHOOK_LEASE=2s"}
	reps := []*proc{startBridge(t, env...), startBridge(t, env...), startBridge(t, env...)}
	const n = 24
	var qids []string
	for i := range n {
		run := fmt.Sprint("wh-", i)
		id := ask(t, reps[i%3], "wh", map[string]any{"run_id": run, "question": fmt.Sprint("Resume ", i, "?"),
			"resume": map[string]any{"url": receiver.URL}})
		reps[(i+1)%3].call("POST", "/api/projects/wh/agent-runs/"+run+"/pause", nil)
		code, _ := reps[(i+2)%3].call("POST", "/api/projects/wh/agent-questions/"+id+"/respond", map[string]any{"response": "go"})
		require.Equal(t, 202, code)
		qids = append(qids, id)
	}
	require.Eventually(t, func() bool { return arrived.Load() >= 8 }, 15*time.Second, 20*time.Millisecond, "deliveries in flight")
	reps[0].kill() // SIGKILL mid-flight: its leased deliveries are never acknowledged
	close(gate)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(ids) == n
	}, 30*time.Second, 50*time.Millisecond, "every question's webhook arrives although a replica died")
	time.Sleep(3 * time.Second) // past the lease: nothing else is outstanding
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for _, q := range qids {
		assert.Len(t, ids[q], 1, "question %s: one delivery id on every attempt", q)
		for _, c := range ids[q] {
			total += c
		}
	}
	t.Logf("%d questions, %d requests received (duplicates carry the same delivery id)", n, total)
}

// TestRedisRestartLosesNothingAndBridgeRecovers: Redis with AOF everysec
// is killed mid-flow. /readyz goes red; after Redis is back (same data dir)
// it goes green without restarting the bridge, every pending question is
// still there, a waiter that was waiting all along gets the answer, and a
// deadline that passed during the outage is expired by the sweeper.
func TestRedisRestartLosesNothingAndBridgeRecovers(t *testing.T) {
	srv := storetest.Redis(t, "--appendonly", "yes", "--appendfsync", "everysec")
	b := startBridge(t, "REDIS_URL="+srv.URL)
	var ids []string
	for i := range 20 {
		ids = append(ids, ask(t, b, "fault", map[string]any{"run_id": fmt.Sprint("f-", i), "question": fmt.Sprint("Keep ", i, "?")}))
	}
	short := ask(t, b, "fault", map[string]any{"run_id": "short", "question": "Expire during the outage?", "timeout": "10s"})
	got := make(chan map[string]any, 1)
	go func() {
		_, rec := b.call("GET", "/api/projects/fault/agent-questions/"+ids[0]+"/wait?timeout=120s", nil)
		got <- rec
	}()
	time.Sleep(1500 * time.Millisecond) // everysec: the AOF has been fsynced
	srv.Kill()
	require.Eventually(t, func() bool { return readyStatus(b) == 503 }, 10*time.Second, 100*time.Millisecond, "/readyz goes red")
	code, _ := b.call("POST", "/api/projects/fault/agent-questions", map[string]any{"run_id": "x", "question": "During?"})
	assert.Equal(t, 503, code, "asks fail loudly while Redis is down")
	time.Sleep(9 * time.Second) // the short question's deadline passes while Redis is down
	require.NoError(t, srv.Start())
	require.Eventually(t, func() bool { return readyStatus(b) == 200 }, 15*time.Second, 100*time.Millisecond, "/readyz goes green again")

	code, list := b.call("GET", "/api/projects/fault/agent-questions?status=pending", nil)
	require.Equal(t, 200, code)
	pending := map[string]bool{}
	for _, q := range list["questions"].([]any) {
		pending[q.(map[string]any)["id"].(string)] = true
	}
	for _, id := range ids {
		assert.True(t, pending[id], "pending question %s survived the restart", id)
	}
	code, _ = b.call("POST", "/api/projects/fault/agent-questions/"+ids[0]+"/respond", map[string]any{"response": "kept"})
	require.Equal(t, 202, code)
	select {
	case rec := <-got:
		assert.Equal(t, "answered", rec["status"], "the waiter that waited through the outage gets the answer")
	case <-time.After(15 * time.Second):
		t.Fatal("the waiter was not woken after Redis came back")
	}
	_, rec := b.call("GET", "/api/projects/fault/agent-questions/"+short+"/wait?timeout=10s", nil)
	assert.Equal(t, "expired", rec["status"], "the sweeper recovered and expired the overdue question")
}
