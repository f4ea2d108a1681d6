package main

import (
	"fmt"
	"time"

	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/store/storetest"
)

// benchAsks: (c) asks per second through the API, each posted to a fake
// Slack over HTTP (50 channels), from 64 concurrent clients, and the CPU
// each ask took (this process and redis-server), which the machine's
// other work moves far less than the rate.
// slackChannels are the fake Slack's channels the ask benchmarks post to.
func slackChannels() []string {
	var chans []string
	for i := range 50 {
		chans = append(chans, fmt.Sprintf("C%03d", i))
	}
	return chans
}

func benchAsks(rs *storetest.Server, o opts, floor lat) error {
	chans := slackChannels()
	fake := fakeslack.New(chans...)
	defer fake.Close()
	r, err := newReplica(rs.URL, fake)
	if err != nil {
		return err
	}
	defer r.Close()
	redis0, err := redisCPU(rs)
	if err != nil {
		return err
	}
	cpu0 := processCPU()
	rate, p, failed := askLoad(r, "asks", 64, time.Duration(o.secs)*time.Second, chans)
	done := int64(rate*float64(o.secs) + 0.5)
	cpu := processCPU() - cpu0
	redis1, err := redisCPU(rs)
	if err != nil {
		return err
	}
	perAsk := func(d time.Duration) string {
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond)/float64(max(done, 1)))
	}
	posted := len(fake.Calls("chat.postMessage"))
	fmt.Printf("(c) asks through the API to a fake Slack: %.0f asks/s (%d in %d s, %d failed, %d chat.postMessage); latency p50 %s p99 %s; floor (HTTP+Redis) p50 %s, ratio p50 %s; target ≥ 2000/s: %s\n",
		rate, done, o.secs, failed, posted, ms(p.p50), ms(p.p99), ms(floor.p50), ratio(p.p50, floor.p50), verdict(rate >= 2000))
	fmt.Printf("    CPU per ask: %s in this process (client, bridge, fake Slack), %s in redis-server\n\n", perAsk(cpu), perAsk(redis1-redis0))
	return nil
}
