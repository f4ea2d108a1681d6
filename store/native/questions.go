package native

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store"
)

// index adds a record to every index that names it.
func (c *core) index(p *proj, id string, r *qrec) {
	p.qs[id] = r
	c.staged.insert(p.all, item{r.m.Seq, id})
	c.staged.insert(p.status(r.m.Status), item{r.m.Seq, id})
	if r.m.Status == string(domain.StatusPending) {
		c.staged.insert(p.deadlines, item{r.m.Deadline, id})
		if r.m.EscNext > 0 {
			c.staged.insert(p.escal, item{r.m.EscNext, id})
		}
	}
	if r.m.Exp > 0 {
		c.staged.insert(p.exp, item{r.m.Exp, id})
	}
	c.staged.insert(p.ttl, item{r.m.TTL, id})
	if r.m.Hist != "" && r.m.Status == string(domain.StatusAnswered) {
		p.hist[r.m.Hist] = histAdd(p.hist[r.m.Hist], item{r.m.Exp, id}, c.loading)
	}
}

// unindex removes a record from every index.
func (c *core) unindex(p *proj, id string, r *qrec) {
	p.all.Delete(item{r.m.Seq, id})
	p.status(r.m.Status).Delete(item{r.m.Seq, id})
	p.deadlines.Delete(item{r.m.Deadline, id})
	p.escal.Delete(item{r.m.EscNext, id})
	p.exp.Delete(item{r.m.Exp, id})
	p.ttl.Delete(item{r.m.TTL, id})
	if h := p.hist[r.m.Hist]; h != nil {
		if h = histDel(h, item{r.m.Exp, id}); len(h) == 0 {
			delete(p.hist, r.m.Hist)
		} else {
			p.hist[r.m.Hist] = h
		}
	}
}

// live returns the question if it exists and has not outlived its time.
func (c *core) live(project, id string, now int64) (*proj, *qrec) {
	p := c.projects[project]
	if p == nil {
		return nil, nil
	}
	r := p.qs[id]
	if r == nil || !r.live(now) {
		return p, nil
	}
	return p, r
}

func notFound(project, id string) error {
	return domain.Errorf(domain.ENotFound, "no question %s in project %s", id, project)
}

func (c *core) register(w *batch, project string) *proj {
	p := c.proj(project)
	if !p.registered {
		p.registered = true
		w.put(bProj, []byte(project), []byte{})
	}
	return p
}

func (c *core) saveRun(w *batch, p *proj, r *runrec, ttl int64) {
	if ttl != r.TTL {
		p.runTTL.Delete(item{r.TTL, r.ID})
		r.TTL = ttl
	}
	p.runTTL.ReplaceOrInsert(item{r.TTL, r.ID})
	p.runs[r.ID] = r
	w.putJSON(bRun, key(p.name, r.ID), r)
	if w.durable {
		w.runs = append(w.runs, runRef{p, r})
	}
}

func (c *core) saveIdem(w *batch, p *proj, name, id string, ttl int64) {
	if old := p.idem[name]; old != nil {
		p.idemTTL.Delete(item{old.TTL, name})
	}
	r := &ttlrec{ID: id, TTL: ttl}
	p.idem[name] = r
	p.idemTTL.ReplaceOrInsert(item{ttl, name})
	w.putJSON(bIdem, key(p.name, name), r)
}

// wake wakes the question's watchers and the project's once committed.
func (c *core) wake(w *batch, project, id string) {
	w.later(func() {
		c.hub.Wake(project+"\x1f"+id, nil)
		if id != "" {
			c.hub.Wake(project+"\x1f", nil)
		}
	})
}

// wakeFinal hands the final record to the question's final watchers,
// then wakes every watcher as wake does.
func (c *core) wakeFinal(w *batch, project, id string, r *qrec) {
	fields, doc := r.m.fields(), c.doc(project, id, r)
	w.later(func() {
		k := project + "\x1f" + id
		if c.hub.HasFinal(k) {
			if q, err := store.DecodeRecord(project, id, fields, doc); err == nil {
				c.hub.Wake(k, q)
			}
		}
		c.hub.Wake(k, nil)
		c.hub.Wake(project+"\x1f", nil)
	})
}

// Create implements lifecycle.Questions, as package store's createScript.
func (c *core) Create(ctx context.Context, q *domain.Question) (lifecycle.CreateResult, error) {
	now := q.CreatedAt
	ttl := q.ExpiresAt.Sub(now) + c.opts.Retention
	doc := store.EncodeDoc(q)
	approval := q.Kind == domain.KindApproval
	var out struct {
		id, sup  string
		reattach bool
	}
	err := c.write(func(w *batch) error {
		wall := wallMS()
		until := wall + ttl.Milliseconds()
		p := c.register(w, q.ProjectID)
		run := c.holdRun(p, q.RunID)
		if run != nil && !run.live(wall) {
			c.dropRun(w, p, run)
			run = nil
		}
		if run != nil && run.Agent != "" && run.Agent != q.AgentID {
			return store.ErrRunOwned(q.RunID)
		}
		idem := ""
		if q.IdempotencyKey != "" {
			idem = strconv.Itoa(len(q.AgentID)) + ":" + q.AgentID + ":" + q.IdempotencyKey
			if ex := p.idem[idem]; ex != nil && ex.TTL > wall {
				if r := p.qs[ex.ID]; r != nil && r.live(wall) {
					out.id, out.reattach = ex.ID, true
					return nil
				}
			}
		}
		// A tool call's key re-attaches to its record whatever became of
		// it; identical items only without an idempotency key, and an
		// approval never to one decided (createScript).
		call := domain.IsCallKey(q.Fingerprint)
		if run != nil && (idem == "" || call) {
			if ex, ok := run.FPs.get(q.Fingerprint); ok {
				qid, till, _ := strings.Cut(ex, "|")
				tillMS, _ := strconv.ParseInt(till, 10, 64)
				if r := p.qs[qid]; r != nil && r.live(wall) && (call ||
					(r.m.Status == string(domain.StatusPending) || (r.m.Status == string(domain.StatusAnswered) && !approval)) &&
						(till == "" || tillMS > ms(now))) {
					out.id, out.reattach = qid, true
					return nil
				}
				run.FPs.del(q.Fingerprint)
				c.saveRun(w, p, run, run.TTL)
			}
		}
		// A question supersedes the run's pending question; an approval
		// supersedes nothing and joins the run's batch (domain/batch.go).
		if run != nil && run.Pending != "" && !approval {
			prevID := run.Pending
			if prev := p.qs[prevID]; prev != nil && prev.live(wall) && prev.m.Status == string(domain.StatusPending) {
				c.finalize(w, p, prevID, prev, domain.StatusCancelled, store.SupersededResult(), domain.EventCancelled,
					"", "superseded by "+q.ID, now, c.opts.Retention)
				out.sup = prevID
			}
		}
		if run == nil {
			run = &runrec{ID: q.RunID, Agent: q.AgentID, Status: string(domain.RunRunning), Created: now.UnixNano(), Updated: now.UnixNano()}
		}
		batch := ""
		if approval {
			batch = q.BatchID
			if batch == "" {
				batch = q.ID
				if run.Batch != "" && q.BatchWindow > 0 && ms(now)-run.BatchAt < q.BatchWindow.Milliseconds() {
					batch = run.Batch
				}
			}
			run.Batch, run.BatchAt = batch, ms(now)
			run.NP++
		} else {
			run.Pending = q.ID
		}
		p.seq++
		r := &qrec{doc: doc, m: qmeta{Seq: p.seq, Status: string(domain.StatusPending), Run: q.RunID, FP: q.Fingerprint,
			Updated: now.UnixNano(), Deadline: ms(q.ExpiresAt), TTL: until, Idem: idem,
			Hist: domain.HistoryKey(q.AgentID, q.Questions)}}
		if batch != "" {
			r.m.x().Batch = batch
		}
		if len(q.Escalation) > 0 {
			r.m.EscNext = ms(q.CreatedAt.Add(time.Duration(q.Escalation[0].After)))
		}
		if old := p.qs[q.ID]; old != nil {
			c.unindex(p, q.ID, old)
		}
		c.index(p, q.ID, r)
		w.putQ(p.name, q.ID, r)
		run.Qs = append(run.Qs, q.ID)
		run.FPs.set(q.Fingerprint, q.ID)
		// The run lives as long as its longest-lived question.
		c.saveRun(w, p, run, max(until, run.TTL))
		if idem != "" {
			c.saveIdem(w, p, idem, q.ID, until)
		}
		c.event(w, p, domain.EventCreated, q.ID, q.RunID, now)
		c.audit(w, p, "asked", q.ID, q.RunID, "", fmt.Sprintf("%d question(s) by %s", len(q.Questions), q.AgentID), now)
		c.wake(w, p.name, q.ID)
		out.id = q.ID
		return nil
	})
	if err != nil {
		return lifecycle.CreateResult{}, err
	}
	res := lifecycle.CreateResult{Reattached: out.reattach}
	if out.sup != "" {
		if sup, err := c.Get(ctx, q.ProjectID, out.sup); err == nil {
			res.Superseded = sup
		}
	}
	res.Question, err = c.Get(ctx, q.ProjectID, out.id)
	return res, err
}

// snapshot copies what decoding a record needs, under the lock.
type snapshot struct {
	id     string
	fields map[string]string
	doc    string
}

func (c *core) decode(project string, ss []snapshot) []*domain.Question {
	out := make([]*domain.Question, 0, len(ss))
	for _, s := range ss {
		q, err := store.DecodeRecord(project, s.id, s.fields, s.doc)
		if err != nil {
			c.log.Warn("skipping corrupt question record", "project", project, "question", s.id, "err", err)
			continue
		}
		out = append(out, q)
	}
	return out
}

// Pending reports whether question id of project is pending, from memory:
// it reads nothing from the data file (a parked wait's recheck, which
// would otherwise map a page of the file in for every wait every sweep).
func (c *core) Pending(project, id string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, r := c.live(project, id, wallMS())
	return r != nil && r.m.Status == string(domain.StatusPending)
}

// Get implements lifecycle.QuestionReader.
func (c *core) Get(ctx context.Context, project, id string) (*domain.Question, error) {
	var snap *snapshot
	err := c.view(ctx, func() uint64 {
		snap = nil
		p, r := c.live(project, id, wallMS())
		if r == nil {
			return p.version()
		}
		snap = &snapshot{id, r.m.fields(), c.doc(project, id, r)}
		return r.ver
	})
	if err != nil {
		return nil, err
	}
	if snap == nil {
		return nil, notFound(project, id)
	}
	return store.DecodeRecord(project, id, snap.fields, snap.doc)
}

// version is the number of the last change to the project (0 for none).
func (p *proj) version() uint64 {
	if p == nil {
		return 0
	}
	return p.ver
}

// locate finds the project of question id among those whose hash the id
// carries (domain.ProjectHint), then, as a hint may mislead, among the
// others: no index from ids to projects is kept.
func (c *core) locate(id string, wall int64) (string, *qrec) {
	hint, ok := domain.ProjectHint(id)
	for _, pass := range []bool{true, false} {
		for name, p := range c.projects {
			if ok && (p.hash == hint) != pass {
				continue
			}
			if r := p.qs[id]; r != nil && r.live(wall) {
				return name, r
			}
		}
		if !ok {
			break
		}
	}
	return "", nil
}

// Locate implements lifecycle.QuestionReader.
func (c *core) Locate(ctx context.Context, id string) (string, error) {
	found := ""
	err := c.view(ctx, func() uint64 {
		var r *qrec
		found, r = c.locate(id, wallMS())
		if r != nil {
			return r.ver
		}
		return c.applied
	})
	if err != nil {
		return "", err
	}
	if found == "" {
		return "", domain.Errorf(domain.ENotFound, "no question %s", id)
	}
	return found, nil
}

// List implements lifecycle.QuestionReader: the newest limit questions
// (of status, when given) from the creation-order index, oldest first.
func (c *core) List(ctx context.Context, project string, status domain.Status, limit int) ([]*domain.Question, error) {
	if limit <= 0 {
		limit = 500
	}
	var ss []snapshot
	err := c.view(ctx, func() uint64 {
		ss = nil
		p := c.projects[project]
		if p == nil {
			return 0
		}
		idx := p.all
		if status != "" {
			idx = p.byStatus[string(status)]
		}
		if idx != nil {
			wall := wallMS()
			idx.Descend(func(it item) bool {
				if r := p.qs[it.id]; r != nil && r.live(wall) {
					ss = append(ss, snapshot{it.id, r.m.fields(), c.doc(project, it.id, r)})
				}
				return len(ss) < limit
			})
		}
		return p.ver
	})
	if err != nil {
		return nil, err
	}
	slices.Reverse(ss)
	return c.decode(project, ss), nil
}

// History implements lifecycle.QuestionReader: the history index (the
// answered questions by when each goes: answer time plus retention),
// newest first; only the records shown are decoded.
func (c *core) History(ctx context.Context, project, key string, limit int) ([]*domain.Question, error) {
	var ss []snapshot
	err := c.view(ctx, func() uint64 {
		ss = nil
		p := c.projects[project]
		if p != nil && limit > 0 {
			h, wall := p.hist[key], wallMS()
			for i := len(h) - 1; i >= 0 && i >= len(h)-store.HistKeep && len(ss) < limit; i-- { // the newest HistKeep, as on Redis
				if r := p.qs[h[i].id]; r != nil && r.live(wall) && r.m.Status == string(domain.StatusAnswered) {
					ss = append(ss, snapshot{h[i].id, r.m.fields(), c.doc(project, h[i].id, r)})
				}
			}
		}
		return p.version()
	})
	if err != nil {
		return nil, err
	}
	return c.decode(project, ss), nil
}

// RunQuestions implements lifecycle.QuestionReader.
func (c *core) RunQuestions(ctx context.Context, project, run string) ([]*domain.Question, error) {
	var ss []snapshot
	err := c.view(ctx, func() uint64 {
		ss = nil
		wall := wallMS()
		p := c.projects[project]
		if p != nil {
			if rr := c.peekRun(p, run); rr != nil && rr.live(wall) {
				for _, id := range rr.Qs {
					if r := p.qs[id]; r != nil && r.live(wall) {
						ss = append(ss, snapshot{id, r.m.fields(), c.doc(project, id, r)})
					}
				}
			}
		}
		return p.version()
	})
	if err != nil {
		return nil, err
	}
	return c.decode(project, ss), nil
}

// Projects implements lifecycle.QuestionReader.
func (c *core) Projects(ctx context.Context) ([]string, error) {
	var out []string
	err := c.view(ctx, func() uint64 {
		out = make([]string, 0, len(c.projects))
		for name, p := range c.projects {
			if p.registered {
				out = append(out, name)
			}
		}
		return c.regVer
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// AttachCopy implements lifecycle.Questions: the copy's line replaces the
// line of the same target, or is added.
func (c *core) AttachCopy(_ context.Context, project, id string, t domain.Target) error {
	line := store.CopyLine(t)
	return c.note(func(w *batch) error {
		p, r := c.live(project, id, wallMS())
		if r == nil {
			return notFound(project, id)
		}
		lines := strings.Split(c.hold(p.name, id, r), "\n")
		found := false
		out := []string{lines[0]}
		for _, l := range lines[1:] {
			same := false
			if strings.HasPrefix(l, "{") {
				var sc struct{ P, C, T string }
				if json.Unmarshal([]byte(l), &sc) == nil {
					same = sc.P == t.Platform && sc.C == t.Channel && sc.T == t.ThreadTS
				}
			}
			switch {
			case !same:
				out = append(out, l)
			case !found:
				out = append(out, line)
				found = true
			}
		}
		if !found {
			out = append(out, line)
		}
		r.doc = strings.Join(out, "\n")
		w.putQ(p.name, id, r)
		return nil
	})
}

// MarkRead implements lifecycle.Questions.
func (c *core) MarkRead(ctx context.Context, project, id string) (*domain.Question, error) {
	err := c.note(func(w *batch) error {
		p, r := c.live(project, id, wallMS())
		if r == nil {
			return domain.Errorf(domain.ENotFound, "no notification %s in project %s", id, project)
		}
		if !r.m.Read {
			r.m.Read = true
			w.putQ(p.name, id, r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c.Get(ctx, project, id)
}
