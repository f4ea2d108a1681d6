package native

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store"
	bolt "go.etcd.io/bbolt"
)

// event appends to the project's stream, bounded by Options.EventsMaxLen.
func (c *core) event(w *batch, p *proj, typ, qid, run string, at time.Time) {
	c.appendEvent(w, p, &evrec{Type: typ, Q: qid, Run: run, At: at.UnixNano()})
}

func (c *core) appendEvent(w *batch, p *proj, e *evrec) {
	e.id = p.lastEv.next(wallMS())
	p.lastEv = e.id
	p.events = append(p.events, e)
	if w.durable {
		w.put(bEv, key(p.name, string(e.id.key())), e.encode())
	}
	if over := len(p.events) - p.evHead - c.opts.EventsMaxLen; over > 0 {
		c.dropEvents(w, p, over)
	}
}

// dropEvents drops the n oldest events. Dropped entries are skipped by a
// head index and the slice is compacted now and then, so a drop costs
// what it drops.
func (c *core) dropEvents(w *batch, p *proj, n int) {
	for i := p.evHead; i < p.evHead+n; i++ {
		w.del(bEv, key(p.name, string(p.events[i].id.key())))
		p.events[i] = nil
	}
	p.evHead += n
	if p.evHead > 256 && p.evHead > len(p.events)/2 {
		p.events = append([]*evrec(nil), p.events[p.evHead:]...)
		p.evHead = 0
	}
}

// liveEvents is the stream as it is.
func (p *proj) liveEvents() []*evrec { return p.events[p.evHead:] }

// audit appends to the project's audit trail and drops entries older than
// AuditRetention before at.
func (c *core) audit(w *batch, p *proj, typ, qid, run, by, detail string, at time.Time) {
	e := &aurec{Type: typ, Q: qid, Run: run, By: by, Detail: detail, At: at.UnixNano()}
	e.id = p.lastAu.next(wallMS())
	p.appendAudit(e, !w.durable)
	if w.durable {
		w.put(bAu, key(p.name, string(e.id.key())), e.encode())
	}
	c.trimAudit(w, p, ms(at.Add(-c.opts.AuditRetention)))
}

// appendAudit adds an entry, kept whole when keep (in memory), else
// read from the file when asked for (Audit); auByQ keeps each question's
// entries by absolute index (auBase + position in audit).
func (p *proj) appendAudit(e *aurec, keep bool) {
	p.lastAu = e.id
	q := p.auByQ[e.Q]
	if q == nil {
		q = &auq{q: e.Q}
		p.auByQ[e.Q] = q
	}
	q.idx = append(q.idx, p.auBase+int64(len(p.audit)))
	ref := auref{id: e.id, q: q}
	if keep {
		ref.e = e
	}
	p.audit = append(p.audit, ref)
}

// liveAudit is the trail as it is.
func (p *proj) liveAudit() []auref { return p.audit[p.auHead:] }

// trimAudit drops the entries whose id is before minMS.
func (c *core) trimAudit(w *batch, p *proj, minMS int64) int {
	n := 0
	for p.auHead < len(p.audit) && p.audit[p.auHead].id.ms < minMS {
		e := p.audit[p.auHead]
		w.del(bAu, key(p.name, string(e.id.key())))
		if len(e.q.idx) <= 1 {
			delete(p.auByQ, e.q.q)
		} else {
			e.q.idx = e.q.idx[1:]
		}
		p.audit[p.auHead] = auref{}
		p.auHead++
		n++
	}
	if p.auHead > 256 && p.auHead > len(p.audit)/2 {
		p.audit = append([]auref(nil), p.audit[p.auHead:]...)
		p.auBase += int64(p.auHead)
		p.auHead = 0
	}
	return n
}

// trimEvents drops the events whose id is before minMS.
func (c *core) trimEvents(w *batch, p *proj, minMS int64) int {
	evs := p.liveEvents()
	n := sort.Search(len(evs), func(i int) bool { return evs[i].id.ms >= minMS })
	if n > 0 {
		c.dropEvents(w, p, n)
	}
	return n
}

// Events implements lifecycle.EventLog.
func (c *core) Events(ctx context.Context, project, after string, limit int) ([]domain.Event, error) {
	if after == "$" {
		return nil, nil
	}
	if after == "" {
		after = "0-0"
	}
	id, ok := parseEvid(after)
	if !ok {
		return nil, domain.Errorf(domain.EInvalid, "Last-Event-ID %q is not an event id", after)
	}
	if limit <= 0 {
		limit = 100
	}
	var out []domain.Event
	err := c.view(ctx, func() uint64 {
		out = nil
		p := c.projects[project]
		if p == nil {
			return 0
		}
		evs := p.liveEvents()
		i := sort.Search(len(evs), func(i int) bool { return id.less(evs[i].id) })
		for ; i < len(evs) && len(out) < limit; i++ {
			out = append(out, evs[i].event(project))
		}
		return p.ver
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// LastEventID implements lifecycle.EventLog.
func (c *core) LastEventID(ctx context.Context, project string) (string, error) {
	last := "0-0"
	err := c.view(ctx, func() uint64 {
		last = "0-0"
		p := c.projects[project]
		if p != nil && len(p.liveEvents()) > 0 {
			last = p.lastEv.String()
		}
		return p.version()
	})
	return last, err
}

// AppendEvent implements lifecycle.EventLog.
func (c *core) AppendEvent(_ context.Context, ev domain.Event) error {
	if ev.At.IsZero() {
		ev.At = time.Now().UTC()
	}
	return c.note(func(w *batch) error {
		p := c.proj(ev.ProjectID)
		c.appendEvent(w, p, &evrec{Type: ev.Type, Q: ev.QuestionID, Run: ev.RunID, At: ev.At.UnixNano(), Data: ev.Data})
		c.wake(w, ev.ProjectID, ev.QuestionID)
		if ev.QuestionID == "" {
			w.later(func() { c.hub.Wake(ev.ProjectID+"\x1f", nil) })
		}
		return nil
	})
}

// AppendAudit implements lifecycle.AuditLog.
func (c *core) AppendAudit(_ context.Context, e domain.AuditEntry) error {
	if e.At.IsZero() {
		e.At = time.Now().UTC()
	}
	return c.note(func(w *batch) error {
		c.audit(w, c.proj(e.ProjectID), e.Type, e.QuestionID, e.RunID, store.PersonJSON(e.By), e.Detail, e.At)
		return nil
	})
}

// Audit implements lifecycle.AuditLog: a question's entries come from its
// own index, so they cost what they are, whatever else the trail holds;
// they are read from the file once what was read is committed.
func (c *core) Audit(ctx context.Context, project, question string, limit int) ([]domain.AuditEntry, error) {
	if limit <= 0 {
		limit = 1000
	}
	var refs []auref
	err := c.view(ctx, func() uint64 {
		refs = refs[:0]
		p := c.projects[project]
		if p != nil {
			refs = auditOf(p, question, limit, refs)
		}
		return p.version()
	})
	if err != nil {
		return nil, err
	}
	out := make([]domain.AuditEntry, 0, len(refs))
	add := func(e *aurec) {
		a := domain.AuditEntry{ID: e.id.String(), Type: e.Type, ProjectID: project, QuestionID: e.Q, RunID: e.Run,
			Detail: e.Detail, At: time.Unix(0, e.At).UTC()}
		if e.By != "" {
			var by domain.Person
			if json.Unmarshal([]byte(e.By), &by) == nil {
				a.By = &by
			}
		}
		out = append(out, a)
	}
	var cold []evid
	for _, r := range refs {
		if r.e == nil {
			cold = append(cold, r.id)
		}
	}
	read := map[evid]*aurec{}
	if len(cold) > 0 && c.db != nil {
		_ = c.db.View(func(tx *bolt.Tx) error {
			b := tx.Bucket(bAu)
			for _, id := range cold {
				if v := b.Get(key(project, string(id.key()))); v != nil {
					if e, ok := decodeAu(id, v); ok {
						read[id] = e
					}
				}
			}
			return nil
		})
	}
	for _, r := range refs {
		if r.e == nil {
			r.e = read[r.id] // none: trimmed meanwhile
		}
		if r.e != nil {
			add(r.e)
		}
	}
	return out, nil
}

// auditOf appends to out the entries of question (of the project when
// empty), oldest first, up to limit.
func auditOf(p *proj, question string, limit int, out []auref) []auref {
	if question == "" {
		live := p.liveAudit()
		return append(out, live[:min(limit, len(live))]...)
	}
	if q := p.auByQ[question]; q != nil {
		for _, abs := range q.idx {
			if i := abs - p.auBase; i >= int64(p.auHead) && i < int64(len(p.audit)) && len(out) < limit {
				out = append(out, p.audit[i])
			}
		}
	}
	return out
}
