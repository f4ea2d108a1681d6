package api

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// finalStore is a sweepStore that keeps the wake-up callbacks, to play the
// store's subscriber loop.
type finalStore struct {
	*sweepStore
	mu sync.Mutex
	fs map[string]func(*domain.Question)
}

func (s *finalStore) WatchFinal(project, id string, f func(*domain.Question)) func() {
	s.mu.Lock()
	s.fs[id] = f
	s.mu.Unlock()
	return func() {}
}

// TestCarriedAnswerIsWrittenWhileEveryWorkerIsBusy: a wake-up that
// carries a small final record is answered on the subscriber loop, not
// queued for the workers, so neither the workers' hand-over nor their
// slow re-reads stand between an answer and the waiting agent. A large
// record still goes to the workers.
func TestCarriedAnswerIsWrittenWhileEveryWorkerIsBusy(t *testing.T) {
	st := &finalStore{sweepStore: &sweepStore{release: make(chan struct{}), answered: map[string]bool{}}, fs: map[string]func(*domain.Question){}}
	p := startParker(st, slog.New(slog.DiscardHandler), time.Hour)
	defer func() { close(st.release); close(p.stop) }()
	wait := func(id string) net.Conn {
		server, client := net.Pipe()
		pk := &parked{conn: server, project: "ops", id: id}
		p.mu.Lock()
		p.waits[pk] = struct{}{}
		p.mu.Unlock()
		pk.stopWatch = p.watch(pk)
		return client
	}
	for i := range parkWorkers * 2 { // every worker stuck re-reading
		wait(fmt.Sprint("stuck-", i))
		st.mu.Lock()
		f := st.fs[fmt.Sprint("stuck-", i)]
		st.mu.Unlock()
		f(nil)
	}
	require.Eventually(t, func() bool { return int(st.hanging.Load()) == parkWorkers }, 5*time.Second, time.Millisecond)

	small := wait("small")
	final := &domain.Question{ID: "small", ProjectID: "ops", Status: domain.StatusAnswered, Questions: []domain.Item{{Question: "Ship it?"}},
		Answers: map[string]string{"Ship it?": "Yes"}}
	go st.fs["small"](final)
	small.SetReadDeadline(time.Now().Add(3 * time.Second))
	body, err := io.ReadAll(bufio.NewReader(small))
	require.NoError(t, err, "the carried answer waited behind the busy workers")
	assert.True(t, strings.HasPrefix(string(body), "HTTP/1.1 200 OK\r\n"))
	assert.Contains(t, string(body), `"Ship it?":"Yes"`)

	big := wait("big")
	large := *final
	large.ID, large.Context = "big", strings.Repeat("x", inlineMax)
	st.fs["big"](&large) // returns at once: handed to the workers
	big.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	_, err = big.Read(make([]byte, 1))
	require.Error(t, err, "a large answer is written by a worker, not on the subscriber loop")
}
