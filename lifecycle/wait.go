package lifecycle

import (
	"context"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// Wait blocks until the question is final, ctx ends, or timeout passes, and
// returns the latest record.
func (r *Router) Wait(ctx context.Context, project, id string, timeout time.Duration) (*domain.Question, error) {
	wake, stop := r.store.Watch(project, id)
	defer stop()
	q, err := r.store.Get(ctx, project, id)
	if err != nil || q.Status.Final() || timeout <= 0 {
		return q, err
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	// Wake-ups travel over pub/sub, which can drop messages while a
	// connection is re-established; a slow re-read bounds that loss.
	recheck := time.NewTicker(10 * time.Second)
	defer recheck.Stop()
	for {
		select {
		case <-ctx.Done():
			return q, ctx.Err()
		case <-timer.C:
			return r.store.Get(context.WithoutCancel(ctx), project, id)
		case <-recheck.C:
		case <-wake:
		}
		fresh, err := r.store.Get(ctx, project, id)
		if domain.ErrorCode(err) == domain.EUnavailable {
			// The store is down for a while (a Redis restart or failover):
			// keep waiting; the subscriber wakes everyone when it is back.
			continue
		}
		if err != nil || fresh.Status.Final() {
			return fresh, err
		}
		q = fresh
	}
}

// Waiter is carried in the context of a caller that bounds its concurrent
// work (a surface's worker pool). Before the Router waits on something
// outside the caller's control (a webhook-mode answer waiting for its run
// to pause) it calls Leave, and Return when the wait is over, so waiting
// answers do not hold up others. Return may block until the caller's worker
// is free again, and fails only when ctx ends first.
type Waiter interface {
	Leave()
	Return(ctx context.Context) error
}

type waiterKey struct{}

// WithWaiter returns ctx carrying w (see Waiter).
func WithWaiter(ctx context.Context, w Waiter) context.Context {
	return context.WithValue(ctx, waiterKey{}, w)
}

// WaiterOf returns the Waiter ctx carries, if any.
func WaiterOf(ctx context.Context) (Waiter, bool) {
	w, ok := ctx.Value(waiterKey{}).(Waiter)
	return w, ok
}

// leaveWhileWaiting calls the context's Waiter's Leave, if it has one, and
// returns what gives the worker back.
func leaveWhileWaiting(ctx context.Context) (back func()) {
	w, ok := WaiterOf(ctx)
	if !ok {
		return func() {}
	}
	w.Leave()
	return func() { _ = w.Return(ctx) }
}
