package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/askbridge/askbridge/store/storetest"
	"github.com/redis/go-redis/v9"
)

// The chain floor: the hops of (b) with no askbridge code behind them.
// The client answers on a bare "replica B", which publishes the id on
// Redis and answers 202; a bare "replica A" subscribed to Redis answers
// the waiter parked on that id. Same client, same paths, same processes
// and rate as (b): what (b) takes beyond it is askbridge's own (reading
// the question, checking the answer, the transition script, parking).
type chain struct {
	a, b       *server
	rdbA, rdbB *redis.Client
	ps         *redis.PubSub

	mu    sync.Mutex
	woken map[string]chan struct{}
}

const chainChannel = "bench:chain"

func startChain(rs *storetest.Server) (*chain, error) {
	c := &chain{woken: map[string]chan struct{}{},
		rdbA: redis.NewClient(&redis.Options{Addr: rs.Addr}), rdbB: redis.NewClient(&redis.Options{Addr: rs.Addr})}
	ctx := context.Background()
	c.ps = c.rdbA.Subscribe(ctx, chainChannel)
	if _, err := c.ps.Receive(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("chain floor: subscribe: %w", err)
	}
	go func() {
		for m := range c.ps.Channel() {
			c.fire(m.Payload)
		}
	}()
	const p = "/api/projects/{p}/agent-questions/{id}/"
	ma, mb := http.NewServeMux(), http.NewServeMux()
	ma.HandleFunc("GET "+p+"wait", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-c.done(r.PathValue("id")):
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"status":"answered"}`)
		case <-r.Context().Done():
		}
	})
	mb.HandleFunc("POST "+p+"respond", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if err := c.rdbB.Publish(r.Context(), chainChannel, r.PathValue("id")).Err(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"status":"answered"}`)
	})
	var err error
	if c.a, err = serve(ma); err == nil {
		c.b, err = serve(mb)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// done is the channel closed once id's answer has been published.
func (c *chain) done(id string) chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch, ok := c.woken[id]
	if !ok {
		ch = make(chan struct{})
		c.woken[id] = ch
	}
	return ch
}

// fire wakes id's waiter; an id published twice wakes it once.
func (c *chain) fire(id string) {
	ch := c.done(id)
	select {
	case <-ch:
	default:
		close(ch) // only the subscriber goroutine closes
	}
}

func (c *chain) Close() {
	for _, s := range []*server{c.a, c.b} {
		if s != nil {
			s.Close()
		}
	}
	if c.ps != nil {
		c.ps.Close()
	}
	c.rdbA.Close()
	c.rdbB.Close()
}
