package native

import (
	"context"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store"
)

func (r *runrec) run(project string) *domain.Run {
	return &domain.Run{ID: r.ID, ProjectID: project, AgentID: r.Agent, Status: domain.RunStatus(r.Status),
		ResumedFrom: r.ResumedFrom, ResumedBy: r.ResumedBy, CreatedAt: time.Unix(0, r.Created).UTC(), UpdatedAt: time.Unix(0, r.Updated).UTC()}
}

// Run implements lifecycle.Runs.
func (c *core) Run(ctx context.Context, project, id string) (*domain.Run, error) {
	var out *domain.Run
	err := c.view(ctx, func() uint64 {
		out = nil
		p := c.projects[project]
		if p != nil {
			if r := c.peekRun(p, id); r != nil && r.live(wallMS()) && r.Status != "" {
				out = r.run(project)
			}
		}
		return p.version()
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		return nil, domain.Errorf(domain.ENotFound, "no run %s in project %s", id, project)
	}
	return out, nil
}

// PauseRun implements lifecycle.Runs (package store's pauseScript).
func (c *core) PauseRun(ctx context.Context, project, id, agentID string, at time.Time) (*domain.Run, error) {
	var refusal error
	var out *domain.Run
	err := c.write(func(w *batch) error {
		wall := wallMS()
		p := c.register(w, project)
		r := c.holdRun(p, id)
		if r != nil && !r.live(wall) {
			c.dropRun(w, p, r)
			r = nil
		}
		if agentID != "" && r != nil && r.Agent != "" && r.Agent != agentID {
			return store.ErrRunOwned(id)
		}
		if r != nil && r.Status == string(domain.RunResumed) {
			out = r.run(project)
			refusal = domain.Errorf(domain.EConflict, "run %s was already resumed as run %s", id, r.ResumedBy)
			return nil
		}
		if r != nil && r.Status == string(domain.RunPaused) {
			out = r.run(project)
			return nil
		}
		if r == nil {
			r = &runrec{ID: id, Agent: agentID, Created: at.UnixNano()}
		}
		r.Status, r.Updated = string(domain.RunPaused), at.UnixNano()
		ttl := r.TTL
		if (r.Pending == "" && r.NP <= 0) || ttl == 0 {
			ttl = wall + c.opts.Retention.Milliseconds()
		}
		c.saveRun(w, p, r, ttl)
		c.event(w, p, "run.paused", "", id, at)
		w.later(func() { c.hub.Wake(project+"\x1f", nil) })
		out = r.run(project)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, refusal
}

func (c *core) dropRun(w *batch, p *proj, r *runrec) {
	p.runTTL.Delete(item{r.TTL, r.ID})
	delete(p.runs, r.ID)
	w.del(bRun, key(p.name, r.ID))
}
