package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/store/storetest"
)

// BenchmarkAskPath is (c)'s ask path, one ask per op: an HTTP POST of
// /agent-questions to a replica built as the bench builds it, through the
// API's decoding and validation, Router.Ask, the store's Create on a real
// redis-server and the Slack adapter's post to the fake Slack over HTTP.
// Like (c), 64 clients ask at once. Besides ns/op and allocs/op (this whole
// process: client, bridge and fake Slack) it reports the CPU each ask costs,
// which the machine's other load moves far less than the wall clock:
// cpu-µs/op is this process (user+system, getrusage), redis-µs/op is the
// redis-server's (INFO cpu). Needs redis-server.
//
//	go test ./bench -run '^$' -bench AskPath -benchtime 20000x -count 5
//
// The file only uses what the bench harness has had since e9194a2
// (newReplica, client, storetest), so it can be copied into an earlier tree
// to measure that build the same way.
func BenchmarkAskPath(b *testing.B) {
	rs, err := storetest.StartServer(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer rs.Kill()
	var chans []string
	for i := range 50 {
		chans = append(chans, fmt.Sprintf("C%03d", i))
	}
	fake := fakeslack.New(chans...)
	defer fake.Close()
	r, err := newReplica(rs.URL, fake)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	c := client(128)
	u := r.web.URL + "/api/projects/asks/agent-questions"
	var seq atomic.Int64
	ask := func() error {
		i := seq.Add(1)
		body, _ := json.Marshal(map[string]any{
			"run_id": fmt.Sprintf("r%d", i), "question": "Deploy build " + fmt.Sprint(i) + "?",
			"options": []map[string]any{{"label": "Yes", "description": "ship it"}, {"label": "No", "description": "hold"}},
			"targets": []map[string]any{{"platform": "slack", "channel": chans[i%int64(len(chans))]}}})
		res, err := c.Post(u, "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		defer res.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
			return err
		}
		io.Copy(io.Discard, res.Body)
		if res.StatusCode != http.StatusCreated {
			return fmt.Errorf("status %d: %v", res.StatusCode, out)
		}
		return nil
	}
	for range 200 { // connections open, scripts loaded, pools warm
		if err := ask(); err != nil {
			b.Fatal(err)
		}
	}
	redis0 := redisCPU(b, rs)
	cpu0 := processCPU()
	b.ReportAllocs()
	b.SetParallelism(32) // 64 clients on 2 cores, as (c)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := ask(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(redisCPU(b, rs)-redis0)/float64(time.Microsecond)/float64(b.N), "redis-µs/op")
}

// processCPU is this process's user+system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// redisCPU is the redis-server's user+system CPU time so far (INFO cpu).
func redisCPU(b *testing.B, rs *storetest.Server) time.Duration {
	out, err := rs.Cli("info", "cpu")
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for _, l := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ":")
		if ok && (k == "used_cpu_sys" || k == "used_cpu_user") {
			f, _ := strconv.ParseFloat(v, 64)
			total += time.Duration(f * float64(time.Second))
		}
	}
	return total
}
