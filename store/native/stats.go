package native

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/askbridge/askbridge/lifecycle"
)

var _ lifecycle.Stats = (*Store)(nil)

// statsOldestScan bounds how many queued deliveries one read of the
// backlog looks at to find the oldest and count them by sender, as the
// Redis store does.
const statsOldestScan = lifecycle.StatsScan

// Backlog implements lifecycle.Stats from the indexes: pending questions
// are the deadlines index, deliveries the outbox.
func (c *core) Backlog(context.Context) ([]lifecycle.Backlog, error) {
	c.mu.RLock()
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
	c.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ProjectID < out[j].ProjectID })
	return out, nil
}

// Waiters implements lifecycle.Stats: the hub's watchers by project.
func (c *core) Waiters() []lifecycle.Waiters {
	c.hub.mu.Lock()
	byProject := map[string]*lifecycle.Waiters{}
	for key, set := range c.hub.watchers {
		project, id, _ := strings.Cut(key, "\x1f")
		w := byProject[project]
		if w == nil {
			w = &lifecycle.Waiters{ProjectID: project}
			byProject[project] = w
		}
		if id == "" {
			w.Stream += len(set)
		} else {
			w.Question += len(set)
		}
	}
	c.hub.mu.Unlock()
	out := make([]lifecycle.Waiters, 0, len(byProject))
	for _, w := range byProject {
		if w.Question+w.Stream > 0 {
			out = append(out, *w)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProjectID < out[j].ProjectID })
	return out
}
