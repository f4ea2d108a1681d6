package main

import (
	"context"
	"fmt"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/store/storetest"
)

// benchWake: (b) click → waiter woken. Waiters long-poll on replica A;
// answers arrive on replica B at the click rate; each latency runs from
// sending the answer to the waiter receiving the answered record.
func benchWake(rs *storetest.Server, o opts, floor lat) error {
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
	for i := range ids {
		res, err := a.router.Ask(ctx, "wake", &core.AskRequest{RunID: fmt.Sprint("run-", i), Question: "Ship it?",
			Options: []core.Option{{Label: "Yes"}, {Label: "No"}}}, "")
		if err != nil {
			return err
		}
		ids[i] = res.Question.ID
	}
	ls, err := wakeInChild(wakeJob{A: a.web.URL, B: b.web.URL, IDs: ids, Rate: o.rate})
	if err != nil {
		return err
	}
	p := percentiles(ls)
	fmt.Printf("(b) answer → waiter woken, across replicas, %d answers at %d/s: p50 %s  p99 %s  max %s; floor (HTTP+Redis) p99 %s; ratio p99 %s; target p99 ≤ 3x the floor (issue 13; 50 ms before): %s\n\n",
		n, o.rate, ms(p.p50), ms(p.p99), ms(p.max), ms(floor.p99), ratio(p.p99, floor.p99), verdict(p.p99 <= 3*floor.p99))
	return nil
}
