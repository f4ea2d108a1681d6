package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/store/storetest"
)

// benchAsks: (c) asks per second through the API, each posted to a fake
// Slack over HTTP (50 channels), from 64 concurrent clients, and the CPU
// each ask took (this process and redis-server), which the machine's
// other work moves far less than the rate.
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
	redis0, err := redisCPU(rs)
	if err != nil {
		return err
	}
	cpu0 := processCPU()
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
	cpu := processCPU() - cpu0
	redis1, err := redisCPU(rs)
	if err != nil {
		return err
	}
	perAsk := func(d time.Duration) string {
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond)/float64(max(done.Load(), 1)))
	}
	rate := float64(done.Load()) / float64(o.secs)
	p := percentiles(ls)
	posted := len(fake.Calls("chat.postMessage"))
	fmt.Printf("(c) asks through the API to a fake Slack: %.0f asks/s (%d in %d s, %d failed, %d chat.postMessage); latency p50 %s p99 %s; floor (HTTP+Redis) p50 %s, ratio p50 %s; target ≥ 2000/s: %s\n",
		rate, done.Load(), o.secs, failed.Load(), posted, ms(p.p50), ms(p.p99), ms(floor.p50), ratio(p.p50, floor.p50), verdict(rate >= 2000))
	fmt.Printf("    CPU per ask: %s in this process (client, bridge, fake Slack), %s in redis-server\n\n", perAsk(cpu), perAsk(redis1-redis0))
	return nil
}
