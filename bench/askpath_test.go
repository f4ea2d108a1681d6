package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/app"
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
// Besides cputime.go it only uses what the bench harness has had since
// e9194a2 (newReplica, client, storetest): copy the two files into an
// earlier tree to measure that build the same way.
func BenchmarkAskPath(b *testing.B) {
	rs, err := storetest.StartServer(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer rs.Kill()
	chans := slackChannels()
	fake := fakeslack.New(chans...)
	defer fake.Close()
	r, err := newReplica(rs.URL, fake)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	redis0, err := redisCPU(rs)
	if err != nil {
		b.Fatal(err)
	}
	askPath(b, r, chans, "asks")
	redis1, err := redisCPU(rs)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(redis1-redis0)/float64(time.Microsecond)/float64(b.N), "redis-µs/op")
}

// BenchmarkAskPathEmbedded is BenchmarkAskPath on the embedded store (a
// data directory, every ask synced before it is answered), with
// ASKPATH_RETAINED answered questions of the same project kept beforehand
// (default none; (i) keeps 100,000).
//
//	ASKPATH_RETAINED=100000 go test ./bench -run '^$' -bench AskPathEmbedded -benchtime 20000x -count 3
func BenchmarkAskPathEmbedded(b *testing.B) {
	chans := slackChannels()
	fake := fakeslack.New(chans...)
	defer fake.Close()
	s := app.Settings{Addr: "127.0.0.1:0", DataDir: b.TempDir()}
	s.Slack = slack.Config{BotToken: fake.BotToken, SigningSecret: signingSecret, APIURL: fake.APIURL()}
	r, err := startReplica(s)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	if n, _ := strconv.Atoi(os.Getenv("ASKPATH_RETAINED")); n > 0 {
		if err := preload(context.Background(), r.app.Store(), "asks", n, 0); err != nil {
			b.Fatal(err)
		}
	}
	askPath(b, r, chans, "asks")
}

// askPath asks through r's API from 64 clients, one ask per op, and
// reports the process's CPU per ask.
func askPath(b *testing.B, r *replica, chans []string, project string) {
	c := client(128)
	u := r.web.URL + "/api/projects/" + project + "/agent-questions"
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
	cpu := processCPU() - cpu0
	b.ReportMetric(float64(cpu)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
}
