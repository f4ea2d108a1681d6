package api

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/require"
)

// sweepStore is a store whose reads of "stuck-*" questions hang until
// released (a slow or overloaded Redis during a sweep); other questions
// are pending until answered.
type sweepStore struct {
	lifecycle.Store
	release  chan struct{}
	hanging  atomic.Int32
	mu       sync.Mutex
	answered map[string]bool
}

func (s *sweepStore) Get(ctx context.Context, project, id string) (*domain.Question, error) {
	if strings.HasPrefix(id, "stuck-") {
		s.hanging.Add(1)
		defer s.hanging.Add(-1)
		select {
		case <-s.release:
		case <-ctx.Done():
		}
		return &domain.Question{ID: id, ProjectID: project, Status: domain.StatusPending}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := domain.StatusPending
	if s.answered[id] {
		st = domain.StatusAnswered
	}
	return &domain.Question{ID: id, ProjectID: project, Status: st}, nil
}

func (s *sweepStore) WatchFinal(project, id string, f func(*domain.Question)) func() {
	return func() {}
}

// TestWakeIsNotQueuedBehindTheRecheckSweep: the periodic re-read of every
// parked wait must not delay the wake-up of a question just answered. The
// sweep used to hand every wait to the workers, so a wake-up waited behind
// the whole sweep, and behind re-reads that hang for the store's timeout.
func TestWakeIsNotQueuedBehindTheRecheckSweep(t *testing.T) {
	st := &sweepStore{release: make(chan struct{}), answered: map[string]bool{}}
	p := startParker(st, slog.New(slog.DiscardHandler), 20*time.Millisecond)
	defer func() { close(st.release); close(p.stop) }()
	conns := func(id string) (*parked, net.Conn) {
		server, client := net.Pipe()
		pk := &parked{conn: server, project: "ops", id: id}
		p.mu.Lock()
		p.waits[pk] = struct{}{}
		p.mu.Unlock()
		return pk, client
	}
	for i := range 100 {
		conns(fmt.Sprint("stuck-", i))
	}
	fresh, client := conns("fresh")
	require.Eventually(t, func() bool { return st.hanging.Load() > 0 }, 5*time.Second, time.Millisecond, "sweep started")
	time.Sleep(100 * time.Millisecond) // let the sweep take whatever it takes

	st.mu.Lock()
	st.answered["fresh"] = true
	st.mu.Unlock()
	p.enqueue(fresh) // what the store's wake-up does

	client.SetReadDeadline(time.Now().Add(3 * time.Second))
	line, err := bufio.NewReader(client).ReadString('\n')
	require.NoError(t, err, "the answered wait was not woken while the sweep was stuck")
	require.Equal(t, "HTTP/1.1 200 OK\r\n", line)
}

// stampStore records when each question is read.
type stampStore struct {
	lifecycle.Store
	mu    sync.Mutex
	reads []time.Time
}

func (s *stampStore) Get(ctx context.Context, project, id string) (*domain.Question, error) {
	s.mu.Lock()
	s.reads = append(s.reads, time.Now())
	s.mu.Unlock()
	return &domain.Question{ID: id, ProjectID: project, Status: domain.StatusPending}, nil
}

func (s *stampStore) WatchFinal(project, id string, f func(*domain.Question)) func() {
	return func() {}
}

// TestRecheckSweepIsSpreadOverItsPeriod: the periodic re-read of every
// parked wait is paced over half its period instead of read in one burst.
// With 17,000 waits on the embedded store the burst took a core for about a
// second every 10 s and left its garbage at once, and wake-ups answered
// during it waited (the scale bench's wake-up p99 127 ms against 1.2 ms
// p50).
func TestRecheckSweepIsSpreadOverItsPeriod(t *testing.T) {
	st := &stampStore{}
	const n, every = 2000, 400 * time.Millisecond
	p := startParker(st, slog.New(slog.DiscardHandler), every)
	defer close(p.stop)
	p.mu.Lock()
	for i := range n {
		server, _ := net.Pipe()
		p.waits[&parked{conn: server, project: "ops", id: fmt.Sprint("q-", i)}] = struct{}{}
	}
	p.mu.Unlock()
	require.Eventually(t, func() bool {
		st.mu.Lock()
		defer st.mu.Unlock()
		return len(st.reads) >= n
	}, 5*time.Second, 5*time.Millisecond, "the sweep read every wait")
	st.mu.Lock()
	span := st.reads[n-1].Sub(st.reads[0])
	st.mu.Unlock()
	require.GreaterOrEqual(t, span, every/4, "one sweep of %d waits took %v: a burst, not spread over the period", n, span)
	require.Less(t, span, every*3/2, "one sweep must end about when its period does")
}

// indexStore is a stampStore that can tell from memory which questions
// are pending, as the embedded store can: those not answered.
type indexStore struct {
	stampStore
	answered sync.Map
}

func (s *indexStore) Pending(project, id string) bool {
	_, done := s.answered.Load(id)
	return !done
}

func (s *indexStore) Get(ctx context.Context, project, id string) (*domain.Question, error) {
	q, err := s.stampStore.Get(ctx, project, id)
	if _, done := s.answered.Load(id); done {
		q.Status = domain.StatusAnswered
	}
	return q, err
}

// TestRecheckReadsNoRecordTheStoreHoldsAsPending: on a store that knows
// from memory which questions are pending (the embedded store), the
// periodic recheck reads no record of a wait that is still pending; each
// read of the embedded store's record maps a page of its data file into
// the bridge, and 17,000 parked waits read every 10 s kept 351 MB of the
// file resident. A question the store holds as final is still read and
// its wait answered. Before: 432 records read in three sweeps of 200
// pending waits.
func TestRecheckReadsNoRecordTheStoreHoldsAsPending(t *testing.T) {
	st := &indexStore{}
	const n, every = 200, 50 * time.Millisecond
	p := startParker(st, slog.New(slog.DiscardHandler), every)
	defer close(p.stop)
	var clients []net.Conn
	p.mu.Lock()
	for i := range n {
		server, client := net.Pipe()
		clients = append(clients, client)
		p.waits[&parked{conn: server, project: "ops", id: fmt.Sprint("q-", i), slot: noSlot}] = struct{}{}
	}
	p.mu.Unlock()
	time.Sleep(3 * every) // a few sweeps
	st.mu.Lock()
	reads := len(st.reads)
	st.mu.Unlock()
	require.Zero(t, reads, "records read by the sweeps of %d pending waits", n)

	st.answered.Store("q-7", true) // as if its wake-up were lost
	clients[7].SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(clients[7]).ReadString('\n')
	require.NoError(t, err, "the sweep answers a wait whose question is final")
	require.Equal(t, "HTTP/1.1 200 OK\r\n", line)
}
