package ackpool

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"
)

// hold starts a bounded job that signals once it runs and holds its worker
// until release is closed.
func hold(p *Pool, release <-chan struct{}) <-chan struct{} {
	running := make(chan struct{})
	p.GoBounded(func(context.Context) {
		close(running)
		<-release
	})
	return running
}

func waitFor(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(5 * time.Second):
		t.Fatal(what)
	}
}

func TestWorkBeyondTheBoundWaitsForAWorker(t *testing.T) {
	p := New(1)
	release := make(chan struct{})
	waitFor(t, hold(p, release), "the first job never ran")
	second := hold(p, make(chan struct{}))
	select {
	case <-second:
		t.Fatal("a second job ran while the only worker was busy")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	waitFor(t, second, "the second job never ran once the worker was free")
	p.Stop()
}

// idle is what the Router does while a job waits on something outside it
// (lifecycle.Waiter): leave the worker, wait d, take a worker back.
func idle(ctx context.Context, d time.Duration) error {
	w, ok := lifecycle.WaiterOf(ctx)
	if !ok {
		return errors.New("the job's context carries no Waiter")
	}
	w.Leave()
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	return w.Return(ctx)
}

func TestAJobWaitingOutsideLetsOtherWorkRun(t *testing.T) {
	p := New(1)
	idling, idleDone := make(chan struct{}), make(chan error, 1)
	p.GoBounded(func(ctx context.Context) {
		close(idling)
		idleDone <- idle(ctx, time.Second)
	})
	waitFor(t, idling, "the idling job never ran")
	release := make(chan struct{})
	waitFor(t, hold(p, release), "a job waited behind one that idles instead of running meanwhile")
	close(release)
	if err := <-idleDone; err != nil {
		t.Fatalf("Idle = %v once its wait was over and the worker free; want nil", err)
	}
	require(t, p.Close(context.Background()) == nil, "Close after all work ended")
}

// A job whose context ends while it waits to take its worker back must
// learn so at once: it must neither go on as if its wait had succeeded nor
// queue for a worker only to give it back (on shutdown every idler would
// wait for every other).
func TestAWaiterLearnsAContextThatEndsWhileWaitingForTheWorker(t *testing.T) {
	p := New(1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	idling, idleDone := make(chan struct{}), make(chan error, 1)
	go p.Run(ctx, func(ctx context.Context) {
		close(idling)
		idleDone <- idle(ctx, 10*time.Millisecond)
	})
	waitFor(t, idling, "the idling job never ran")
	release := make(chan struct{})
	waitFor(t, hold(p, release), "another job could not take the worker given up by Idle")
	time.Sleep(100 * time.Millisecond) // the 10 ms wait is over; Idle waits for the worker back
	cancel()
	select {
	case err := <-idleDone:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Idle = %v after its context ended; want context.Canceled", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Idle kept waiting for a worker after its context ended")
	}
	close(release)
	// The worker count stays balanced: exactly one job at a time again.
	release2 := make(chan struct{})
	waitFor(t, hold(p, release2), "the worker was lost")
	third := hold(p, make(chan struct{}))
	select {
	case <-third:
		t.Fatal("two jobs ran at once in a pool of one: Idle gave back a worker it did not hold")
	case <-time.After(50 * time.Millisecond):
	}
	close(release2)
	waitFor(t, third, "the third job never ran")
	p.Stop()
}

func TestTryGoOnlyTakesAFreeWorker(t *testing.T) {
	p := New(1)
	release := make(chan struct{})
	ran := make(chan struct{})
	if !p.TryGo(func(context.Context) { close(ran); <-release }) {
		t.Fatal("TryGo found no worker in an idle pool")
	}
	waitFor(t, ran, "TryGo's job never ran")
	if p.TryGo(func(context.Context) {}) {
		t.Fatal("TryGo ran a job while the only worker was busy")
	}
	close(release)
	require(t, p.Close(context.Background()) == nil, "Close after all work ended")
}

func TestCloseStopsWorkStillWaitingForAWorker(t *testing.T) {
	p := New(1)
	release := make(chan struct{})
	waitFor(t, hold(p, release), "the first job never ran")
	ran := make(chan struct{}, 1)
	p.GoBounded(func(context.Context) { ran <- struct{}{} })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	closed := make(chan error, 1)
	go func() { closed <- p.Close(ctx) }()
	time.Sleep(50 * time.Millisecond)
	close(release)
	if err := <-closed; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close = %v, want the deadline of its context", err)
	}
	select {
	case <-ran:
		t.Fatal("work waiting for a worker ran after Close gave up on it")
	default:
	}
}

func require(t *testing.T, ok bool, what string) {
	t.Helper()
	if !ok {
		t.Fatal(what)
	}
}
