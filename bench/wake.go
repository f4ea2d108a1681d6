package main

import (
	"context"
	"fmt"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store/storetest"
)

// benchWake: (b) click → waiter woken. Waiters long-poll on replica A;
// answers arrive on replica B at the click rate; each latency runs from
// sending the answer to the waiter receiving the answered record.
//
// The target compares (b) with a floor measured the way the path runs:
// every hop of (b) crosses processes (client → bridge → Redis → bridge →
// client) and comes at the click rate after an idle gap. So the floor is
// a bare HTTP round trip from the client's process to a handler in the
// bridge's process, plus a Redis PING round trip from the bridge's
// process, both at the click rate. The in-process floor printed first
// (client and server in one process, PINGs back to back) can skip the
// thread wake-ups every hop of the path pays; the ratio to it is printed
// too. The chain floor is (b)'s own hops with no askbridge code (chain.go).
func benchWake(rs *storetest.Server, o opts, inProcess lat) error {
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
	chainIDs := make([]string, n)
	for i := range ids {
		res, err := a.router.Ask(ctx, "wake", &domain.AskRequest{RunID: fmt.Sprint("run-", i), Question: "Ship it?",
			Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}}, "")
		if err != nil {
			return err
		}
		ids[i] = res.Question.ID
		chainIDs[i] = fmt.Sprint("chain-", i)
	}
	bare, err := serve(bareHandler)
	if err != nil {
		return err
	}
	defer bare.Close()
	ch, err := startChain(rs)
	if err != nil {
		return err
	}
	defer ch.Close()
	pings, err := pingAtRate(rs, o.rate)
	if err != nil {
		return err
	}
	res, err := wakeInChild(wakeJob{A: a.web.URL, B: b.web.URL, IDs: ids, Rate: o.rate,
		FloorURL: bare.URL, ChainA: ch.a.URL, ChainB: ch.b.URL, ChainIDs: chainIDs})
	if err != nil {
		return err
	}
	h, r, c := percentiles(res.HTTPFloor), percentiles(pings), percentiles(res.Chain)
	floor := h.p99 + r.p99
	fmt.Printf("(b) floor measured like the path: bare HTTP round trip from the client's process at %d/s p50 %s  p99 %s; Redis PING from the bridge's process at %d/s p50 %s  p99 %s; HTTP+Redis p99 %s\n",
		o.rate, ms(h.p50), ms(h.p99), o.rate, ms(r.p50), ms(r.p99), ms(floor))
	fmt.Printf("(b) chain floor (client → bare B → Redis PUBLISH → bare A → waiter; no askbridge code): p50 %s  p99 %s\n", ms(c.p50), ms(c.p99))
	rt := percentiles(res.Respond)
	fmt.Printf("(b) the answers' own round trip to B (respond → 202): p50 %s  p99 %s\n", ms(rt.p50), ms(rt.p99))
	p := percentiles(res.Wake)
	fmt.Printf("(b) answer → waiter woken, across replicas, %d answers at %d/s: p50 %s  p99 %s  max %s; floor (HTTP+Redis, like the path) p99 %s; ratio p99 %s; target p99 ≤ 3x the floor (issue 13): %s; against the in-process floor (p99 %s): %s; beyond the chain floor: p50 +%s  p99 +%s\n\n",
		n, o.rate, ms(p.p50), ms(p.p99), ms(p.max), ms(floor), ratio(p.p99, floor), verdict(p.p99 <= 3*floor),
		ms(inProcess.p99), ratio(p.p99, inProcess.p99), ms(p.p50-c.p50), ms(p.p99-c.p99))
	return nil
}
