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
