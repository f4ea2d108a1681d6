package native

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

var _ lifecycle.Stats = (*Store)(nil)

// statsOldestScan bounds how many queued deliveries one read of the
// backlog looks at to find the oldest and count them by sender, as the
// Redis store does.
const statsOldestScan = lifecycle.StatsScan

// Backlog implements lifecycle.Stats from the indexes: pending questions
// are the deadlines index, deliveries the outbox.
func (c *core) Backlog(ctx context.Context) ([]lifecycle.Backlog, error) {
	var out []lifecycle.Backlog
	err := c.view(ctx, func() uint64 {
		out = c.backlog()
		return c.applied
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProjectID < out[j].ProjectID })
	return out, nil
}

func (c *core) backlog() []lifecycle.Backlog {
	out := make([]lifecycle.Backlog, 0, len(c.projects))
	for name, p := range c.projects {
		if !p.registered {
			continue
		}
		b := lifecycle.Backlog{ProjectID: name, Pending: p.deadlines.Len(), Deliveries: len(p.dlv)}
		var oldest int64
		n := 0
		for _, d := range p.dlv {
			if n++; n > statsOldestScan {
				break
			}
			if oldest == 0 || d.Created < oldest {
				oldest = d.Created
			}
			if b.BySender == nil {
				b.BySender = map[string]int{}
			}
			b.BySender[lifecycle.DeliverySender(d.Event)]++
		}
		if rest := len(p.dlv) - statsOldestScan; rest > 0 {
			b.BySender[lifecycle.SenderUnscanned] += rest
		}
		if oldest != 0 {
			b.OldestDelivery = time.Unix(0, oldest).UTC()
		}
		out = append(out, b)
	}
	return out
}

// waits counts one handle's waiters by project, so each handle (a
// replica in tests) reports the waits made through it, as a Redis replica
// reports its own.
type waits struct {
	mu sync.Mutex
	n  map[string]*lifecycle.Waiters
}

func newWaits() *waits { return &waits{n: map[string]*lifecycle.Waiters{}} }

// add counts a wait on project (on the whole project when id is empty)
// and returns its release, safe to call more than once.
func (w *waits) add(project, id string) func() {
	d := lifecycle.Waiters{Question: 1}
	if id == "" {
		d = lifecycle.Waiters{Stream: 1}
	}
	w.mu.Lock()
	c := w.n[project]
	if c == nil {
		c = &lifecycle.Waiters{ProjectID: project}
		w.n[project] = c
	}
	c.Question += d.Question
	c.Stream += d.Stream
	w.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			c.Question -= d.Question
			c.Stream -= d.Stream
			if c.Question+c.Stream == 0 {
				delete(w.n, project)
			}
			w.mu.Unlock()
		})
	}
}

// Watch implements lifecycle.EventLog, counting the wait on this handle.
func (s *Store) Watch(project, id string) (<-chan struct{}, func()) {
	ch, stop := s.core.Watch(project, id)
	done := s.waits.add(project, id)
	return ch, func() { done(); stop() }
}

// WatchFinal implements lifecycle.EventLog, counting the wait on this handle.
func (s *Store) WatchFinal(project, id string, f func(q *domain.Question)) func() {
	stop := s.core.WatchFinal(project, id, f)
	done := s.waits.add(project, id)
	return func() { done(); stop() }
}

// Waiters implements lifecycle.Stats: the waits made through this handle.
func (s *Store) Waiters() []lifecycle.Waiters {
	s.waits.mu.Lock()
	out := make([]lifecycle.Waiters, 0, len(s.waits.n))
	for _, w := range s.waits.n {
		out = append(out, *w)
	}
	s.waits.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ProjectID < out[j].ProjectID })
	return out
}
