package native

import (
	"context"
	"strconv"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store"
)

// finalize closes a pending question (package store's finalize): status,
// result, indexes, lifetimes, the run's pending question and re-ask
// fingerprint, event, audit entry and wake-up, and the deliveries
// registered to go when it ends (QueueOnEnd).
func (c *core) finalize(w *batch, p *proj, id string, r *qrec, status domain.Status, result, evtype, by, detail string,
	at time.Time, retention time.Duration) {
	wall := wallMS()
	c.unindex(p, id, r)
	ends := takeEnds(r)
	r.doc = c.hold(p.name, id, r) + "\nR" + result
	r.m.Status = string(status)
	r.m.Updated = at.UnixNano()
	r.m.Exp = ms(at) + retention.Milliseconds()
	r.m.TTL = wall + retention.Milliseconds()
	c.index(p, id, r)
	w.putQ(p.name, id, r)
	c.dropDrafts(w, p, id)
	if r.m.Idem != "" {
		if ik := p.idem[r.m.Idem]; ik != nil && ik.ID == id {
			c.saveIdem(w, p, r.m.Idem, id, wall+retention.Milliseconds())
		}
	}
	if run := c.holdRun(p, r.m.Run); run != nil && run.live(wall) {
		if run.Pending == id {
			run.Pending = ""
		}
		if r.m.extra().Batch != "" {
			run.NP--
		}
		ttl := run.TTL
		if run.Pending == "" && run.NP <= 0 {
			ttl = wall + retention.Milliseconds()
		}
		if cur, _ := run.FPs.get(r.m.FP); cur == id && !domain.IsCallKey(r.m.FP) {
			if status == domain.StatusAnswered {
				run.FPs.set(r.m.FP, id+"|"+strconv.FormatInt(ms(at)+domain.ReattachWindow.Milliseconds(), 10))
			} else {
				run.FPs.del(r.m.FP)
			}
		}
		c.saveRun(w, p, run, ttl)
	}
	c.event(w, p, evtype, id, r.m.Run, at)
	c.audit(w, p, string(status), id, r.m.Run, by, detail, at)
	c.wakeFinal(w, p.name, id, r)
	c.queueEnds(w, p, id, r, ends, at)
}

// close is a transition of a pending question whose run has been checked:
// the continuation run (webhook mode, run paused), finalize, and the
// resume delivery, in one step.
func (c *core) close(w *batch, p *proj, id string, r *qrec, status domain.Status, result, evtype, by, detail string,
	tr lifecycle.Transition, at time.Time) {
	retention := tr.Retention
	if retention <= 0 {
		retention = c.opts.Retention
	}
	wall := wallMS()
	if cont := tr.ContinuationRunID; cont != "" {
		if run := c.holdRun(p, r.m.Run); run != nil && run.live(wall) && run.Status == string(domain.RunResumed) && r.m.extra().Batch != "" {
			// An approval of a run another decision resumed: the run's one
			// continuation (runReady).
			r.m.x().Resumed = run.ResumedBy
		} else if run != nil && run.live(wall) && run.Status == string(domain.RunPaused) {
			if old := c.holdRun(p, cont); old != nil {
				p.runTTL.Delete(item{old.TTL, cont})
			}
			cr := &runrec{ID: cont, Agent: run.Agent, Status: string(domain.RunRunning), ResumedFrom: run.ID,
				Created: at.UnixNano(), Updated: at.UnixNano()}
			c.saveRun(w, p, cr, wall+retention.Milliseconds())
			run.Status, run.ResumedBy, run.Updated = string(domain.RunResumed), cont, at.UnixNano()
			c.saveRun(w, p, run, run.TTL)
			r.m.x().Resumed = cont
			c.event(w, p, "run.resumed", id, run.ID, at)
			c.audit(w, p, "resumed", id, run.ID, "", cont, at)
		}
	}
	c.finalize(w, p, id, r, status, result, evtype, by, detail, at, retention)
	if tr.DeliveryID != "" {
		c.enqueue(w, p, lifecycle.Delivery{ID: tr.DeliveryID, ProjectID: p.name, QuestionID: id, Event: evtype}, r, at)
	}
}

func runNotPaused(state string) error {
	s := "its state is unknown" // the run's record is gone
	if state != "" {
		s = "it is " + state
	}
	return domain.Errorf(domain.ERunNotPaused, "the question's run is not paused (%s): a webhook-mode question "+
		"takes an answer only after its run has reported its pause", s)
}

// refusal is what a transition that changed nothing returns: the
// question as it is, and why.
type refusal struct {
	code  string // notfound, final, run_not_paused
	state string
}

// runReady reports whether r's run takes a webhook-mode answer: it is
// paused, or, for an approval (a call of a batch), resumed already by a
// decision on another call of the run, whose continuation it then shares
// (close).
func (c *core) runReady(p *proj, r *qrec) bool {
	st := c.runState(p, r.m.Run)
	return st == string(domain.RunPaused) || (st == string(domain.RunResumed) && r.m.extra().Batch != "")
}

func (c *core) runState(p *proj, run string) string {
	if r := c.peekRun(p, run); r != nil && r.live(wallMS()) {
		return r.Status
	}
	return ""
}

func (c *core) refused(ctx context.Context, project, id string, f refusal) (*domain.Question, error) {
	switch f.code {
	case "notfound":
		return nil, notFound(project, id)
	case "run_not_paused":
		q, _ := c.Get(ctx, project, id)
		return q, runNotPaused(f.state)
	}
	q, err := c.Get(ctx, project, id)
	if err != nil {
		return nil, err
	}
	return q, domain.StatusError(q)
}

// Transition implements lifecycle.Questions.
func (c *core) Transition(ctx context.Context, project, id string, tr lifecycle.Transition) (*domain.Question, error) {
	if !tr.To.Final() {
		return nil, domain.Errorf(domain.EInvalid, "cannot move a question to %q", tr.To)
	}
	at := tr.At
	if at.IsZero() {
		at = time.Now().UTC()
	}
	result := store.ResultJSON(tr, at)
	var f refusal
	var final snapshot
	err := c.write(func(w *batch) error {
		p, r := c.live(project, id, wallMS())
		switch {
		case r == nil:
			f.code = "notfound"
		case r.m.Status != string(domain.StatusPending):
			f.code = "final"
		case tr.RequirePausedRun && !c.runReady(p, r):
			f = refusal{"run_not_paused", c.runState(p, r.m.Run)}
		default:
			c.close(w, p, id, r, tr.To, result, domain.EventForStatus(tr.To), store.PersonJSON(tr.By), store.TransitionDetail(tr), tr, at)
			final = snapshot{id, r.m.fields(), c.doc(p.name, id, r)}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if f.code != "" {
		return c.refused(ctx, project, id, f)
	}
	return store.DecodeRecord(project, id, final.fields, final.doc)
}

// Vote implements lifecycle.Questions (package store's voteScript).
func (c *core) Vote(ctx context.Context, project, id string, v domain.Vote, required int, veto bool, tr lifecycle.Transition) (*domain.Question, bool, error) {
	if v.At.IsZero() {
		v.At = time.Now().UTC()
	}
	if tr.At.IsZero() {
		tr.At = v.At
	}
	person := v.By.Platform + ":" + v.By.ID
	vote := string(store.Marshal(v))
	win := store.ResultJSON(tr, tr.At)
	by := store.PersonJSON(&v.By)
	var f refusal
	var resolved bool
	var snap snapshot
	err := c.write(func(w *batch) error {
		p, r := c.live(project, id, wallMS())
		switch {
		case r == nil:
			f.code = "notfound"
			return nil
		case r.m.Status != string(domain.StatusPending):
			f.code = "final"
			return nil
		}
		n := 1
		for _, o := range r.m.extra().Votes {
			if o.P != person && o.L == v.Label {
				n++
			}
		}
		resolves := veto || n >= required
		if resolves && tr.RequirePausedRun && !c.runReady(p, r) {
			f = refusal{"run_not_paused", c.runState(p, r.m.Run)}
			return nil
		}
		x := r.m.x()
		x.VSeq++
		nv := vrec{P: person, V: vote, L: v.Label, O: x.VSeq}
		replaced := false
		for i := range x.Votes {
			if x.Votes[i].P == person {
				x.Votes[i], replaced = nv, true
			}
		}
		if !replaced {
			x.Votes = append(x.Votes, nv)
		}
		r.m.Updated = v.At.UnixNano()
		c.audit(w, p, "voted", id, r.m.Run, by, v.Label+" ("+strconv.Itoa(n)+" of "+strconv.Itoa(required)+")", v.At)
		if resolves {
			c.close(w, p, id, r, domain.StatusAnswered, win, domain.EventAnswered, by, v.Label, tr, v.At)
			resolved = true
		} else {
			w.putQ(p.name, id, r)
			c.wake(w, p.name, id)
		}
		snap = snapshot{id, r.m.fields(), c.doc(p.name, id, r)}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	if f.code != "" {
		q, err := c.refused(ctx, project, id, f)
		return q, false, err
	}
	q, err := store.DecodeRecord(project, id, snap.fields, snap.doc)
	return q, resolved, err
}

// Due implements lifecycle.Schedule.
func (c *core) Due(ctx context.Context, now time.Time, limit int) ([]lifecycle.Ref, error) {
	return c.dueIn(ctx, func(p *proj) *tree { return p.deadlines }, now, limit)
}

// DueEscalations implements lifecycle.Schedule.
func (c *core) DueEscalations(ctx context.Context, now time.Time, limit int) ([]lifecycle.Ref, error) {
	return c.dueIn(ctx, func(p *proj) *tree { return p.escal }, now, limit)
}

// dueIn lists, in every project, up to limit entries of a time index
// whose time has come.
func (c *core) dueIn(ctx context.Context, index func(*proj) *tree, now time.Time, limit int) ([]lifecycle.Ref, error) {
	var refs []lifecycle.Ref
	err := c.view(ctx, func() uint64 {
		refs = nil
		var seen uint64
		for name, p := range c.projects {
			n := 0
			upTo(index(p), ms(now), func(it item) bool {
				refs = append(refs, lifecycle.Ref{ProjectID: name, ID: it.id})
				n++
				return n < limit
			})
			if n > 0 {
				seen = max(seen, p.ver)
			}
		}
		return seen
	})
	return refs, err
}

// Escalate implements lifecycle.Schedule.
func (c *core) Escalate(_ context.Context, project, id string, level int, next time.Time, detail string, at time.Time) (bool, error) {
	done := false
	err := c.write(func(w *batch) error {
		p, r := c.live(project, id, wallMS())
		if r == nil {
			return nil
		}
		if r.m.Status != string(domain.StatusPending) {
			p.escal.Delete(item{r.m.EscNext, id})
			return nil
		}
		if r.m.Esc != level {
			return nil
		}
		c.unindex(p, id, r)
		r.m.Esc++
		r.m.Updated = at.UnixNano()
		r.m.EscNext = 0
		if !next.IsZero() {
			r.m.EscNext = ms(next)
		}
		c.index(p, id, r)
		w.putQ(p.name, id, r)
		c.audit(w, p, "escalated", id, r.m.Run, "", detail, at)
		c.wake(w, p.name, id)
		done = true
		return nil
	})
	return done, err
}
