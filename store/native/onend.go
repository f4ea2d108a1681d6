package native

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// Deliveries to queue when a question ends (QueueOnEnd; package store's
// end:<id>): kept on the question's record (qmeta.End), so they are
// written, restored and dropped with it, and queued by finalize in the
// same write batch as the step that ends the question.

// onEnd is one delivery registered with QueueOnEnd.
type onEnd struct {
	ID      string          `json:"id"`
	Event   string          `json:"e"`
	Payload json.RawMessage `json:"p,omitempty"`
	Delay   int64           `json:"d,omitempty"` // ms after the final step
}

// QueueOnEnd implements lifecycle.DeliveryQueue.
func (c *core) QueueOnEnd(_ context.Context, d lifecycle.Delivery, delay time.Duration) (bool, error) {
	if d.ID == "" || d.ProjectID == "" || d.QuestionID == "" || d.Event == "" {
		return false, errors.New("store: a delivery needs an id, a project, a question and an event")
	}
	at := d.CreatedAt
	if at.IsZero() {
		at = time.Now()
	}
	delay = max(delay, 0)
	queued, missing := false, false
	err := c.write(func(w *batch) error {
		wall := wallMS()
		p, r := c.live(d.ProjectID, d.QuestionID, wall)
		switch {
		case r == nil:
			missing = true
		case r.m.Status != string(domain.StatusPending):
			queued = c.enqueueOnce(w, p, d, r, at.Add(delay), wall)
		case c.queuedOnce(p, d.ProjectID, d.ID, wall):
		default:
			for _, e := range r.m.extra().End {
				if e.ID == d.ID {
					return nil
				}
			}
			r.m.x().End = append(r.m.extra().End, onEnd{ID: d.ID, Event: d.Event, Payload: d.Payload, Delay: delay.Milliseconds()})
			w.putQ(p.name, d.QuestionID, r)
			queued = true
		}
		return nil
	})
	if err == nil && missing {
		return false, notFound(d.ProjectID, d.QuestionID)
	}
	return queued && err == nil, err
}

func onceKey(project, id string) string { return "\x00dlvonce\x00" + project + "\x00" + id }

// queuedOnce reports whether delivery id is queued or was within its keep
// time.
func (c *core) queuedOnce(p *proj, project, id string, wall int64) bool {
	if ex := p.dlv[id]; ex != nil && ex.TTL > wall {
		return true
	}
	until, ok := c.once[onceKey(project, id)]
	return ok && until > wall
}

// enqueueOnce queues d due at at, with the question r as it is now, once
// per id (EnqueueDelivery): a marker kept as long as an undelivered
// delivery is remembers the id after it was sent. Reports whether it
// queued d.
func (c *core) enqueueOnce(w *batch, p *proj, d lifecycle.Delivery, r *qrec, at time.Time, wall int64) bool {
	if ex := p.dlv[d.ID]; ex != nil && ex.TTL > wall {
		return false
	}
	if !c.mark(w, onceKey(d.ProjectID, d.ID), wall, c.opts.DeliveryKeep) {
		return false
	}
	c.enqueue(w, p, d, r, at)
	return true
}

// takeEnds removes the deliveries registered on r, before finalize writes
// the final record.
func takeEnds(r *qrec) []onEnd {
	if r.m.Extra == nil {
		return nil
	}
	ends := r.m.End
	r.m.End = nil
	return ends
}

// queueEnds queues the deliveries registered on question id, which just
// ended at at, with its final record r.
func (c *core) queueEnds(w *batch, p *proj, id string, r *qrec, ends []onEnd, at time.Time) {
	wall := wallMS()
	for _, e := range ends {
		d := lifecycle.Delivery{ID: e.ID, ProjectID: p.name, QuestionID: id, Event: e.Event, Payload: e.Payload}
		c.enqueueOnce(w, p, d, r, at.Add(time.Duration(e.Delay)*time.Millisecond), wall)
	}
}
