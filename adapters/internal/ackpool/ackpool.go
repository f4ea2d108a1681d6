// Package ackpool is the background work of a chat adapter: answer work
// runs in a bounded pool of workers that gives way to acknowledgements
// (which have the platform's 3 s deadline and cost little), and all of it
// is tracked so Close can wait for it.
package ackpool

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/askbridge/askbridge/lifecycle"
)

// Work queued behind a burst gives way to acknowledgements: it starts once
// no acknowledgement is being written and no request has arrived for
// Quiet, or after MaxYield at the latest. On two cores a burst of both
// otherwise makes the acknowledgements wait for the CPU.
const (
	Quiet    = time.Millisecond
	MaxYield = 100 * time.Millisecond
)

// Pool runs an adapter's tracked background work, at most a fixed number
// of bounded jobs at a time.
type Pool struct {
	slots  chan struct{} // one token per bounded job running
	lastIn atomic.Int64  // unix nanoseconds of the last request to acknowledge
	acking atomic.Int64  // acknowledgements being written
	bg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
}

// New returns a pool running at most workers bounded jobs at once.
func New(workers int) *Pool {
	p := &Pool{slots: make(chan struct{}, max(workers, 1))}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p
}

// Arrived notes that a request to acknowledge has come in.
func (p *Pool) Arrived() { p.lastIn.Store(time.Now().UnixNano()) }

// Acking notes that an acknowledgement is being written until the
// returned function is called; queued work waits meanwhile.
func (p *Pool) Acking() (done func()) {
	p.Arrived()
	p.acking.Add(1)
	return func() { p.acking.Add(-1) }
}

// Go runs fn as tracked background work, outside the bound; its context
// ends when Close gives up waiting.
func (p *Pool) Go(fn func(ctx context.Context)) {
	p.bg.Add(1)
	go func() {
		defer p.bg.Done()
		fn(p.ctx)
	}()
}

// GoBounded runs fn as tracked background work once a worker is free and
// acknowledgements have had their turn (see Quiet). fn does not run when
// the pool is stopped before a worker is free.
func (p *Pool) GoBounded(fn func(ctx context.Context)) {
	p.Go(func(ctx context.Context) { p.Run(ctx, fn) })
}

// TryGo runs fn as tracked background work in a free worker at once,
// without yielding to acknowledgements, and reports whether one was free.
func (p *Pool) TryGo(fn func(ctx context.Context)) bool {
	select {
	case p.slots <- struct{}{}:
	default:
		return false
	}
	s := &slot{p: p, held: true}
	p.Go(func(ctx context.Context) {
		defer s.release()
		fn(s.in(ctx))
	})
	return true
}

// Run waits for a free worker (or for ctx to end: then fn does not run and
// Run returns false), gives way to acknowledgements, and runs fn in the
// worker. Within fn, the context's lifecycle.Waiter gives the worker up
// while the Router waits on something outside the job.
func (p *Pool) Run(ctx context.Context, fn func(ctx context.Context)) bool {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	s := &slot{p: p, held: true}
	defer s.release()
	p.yield(ctx)
	fn(s.in(ctx))
	return true
}

// Close waits for tracked work to end, or for ctx, whichever comes first;
// when ctx ends first it cancels the context of what is left and waits for
// it to return. After a Close that returned nil the pool stays usable (tests
// use it to wait for background work).
func (p *Pool) Close(ctx context.Context) error {
	done := make(chan struct{})
	go func() { p.bg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		p.cancel()
		<-done
		return ctx.Err()
	}
}

// Stop cancels the context of all tracked work at once.
func (p *Pool) Stop() { p.cancel() }

// yield waits while requests are arriving or being acknowledged (see Quiet).
func (p *Pool) yield(ctx context.Context) {
	deadline := time.Now().Add(MaxYield)
	for {
		wait := Quiet - time.Since(time.Unix(0, p.lastIn.Load()))
		if p.acking.Load() > 0 {
			wait = max(wait, Quiet)
		}
		if wait <= 0 || time.Now().After(deadline) {
			return
		}
		if sleep(ctx, wait) != nil {
			return
		}
	}
}

// slot is one job's hold on a worker; only that job's goroutine uses it.
type slot struct {
	p    *Pool
	held bool
}

// in returns ctx carrying s as the job's lifecycle.Waiter, for the
// Router's waits.
func (s *slot) in(ctx context.Context) context.Context {
	return lifecycle.WithWaiter(ctx, s)
}

// Leave gives the worker up while the job waits.
func (s *slot) Leave() { s.release() }

// Return takes a worker again after Leave; it fails when ctx ends first.
func (s *slot) Return(ctx context.Context) error {
	if s.held {
		return nil
	}
	select {
	case s.p.slots <- struct{}{}:
		s.held = true
		return ctx.Err() // both may have been ready
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *slot) release() {
	if s.held {
		s.held = false
		<-s.p.slots
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
