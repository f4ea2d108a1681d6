package store

import (
	"context"
	"fmt"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// errRunOwned refuses a run id another agent started; it does not say which.
func errRunOwned(run string) error {
	return &domain.Error{Code: domain.EConflict, Message: fmt.Sprintf("run %s belongs to another agent", run),
		Details: []domain.Detail{{Field: "run_id", Problem: "a run belongs to the agent that started it; use a run id of your own"}}}
}

// Run implements lifecycle.Store.
func (s *Store) Run(ctx context.Context, project, id string) (*domain.Run, error) {
	h, err := s.rdb.HGetAll(ctx, s.base(project)+"run:"+id).Result()
	if err != nil {
		return nil, s.wrap(err)
	}
	if len(h) == 0 || h["status"] == "" {
		return nil, domain.Errorf(domain.ENotFound, "no run %s in project %s", id, project)
	}
	// The run's id is its key's (earlier releases also kept it as a field).
	r := &domain.Run{ID: id, ProjectID: project, AgentID: h["agent_id"], Status: domain.RunStatus(h["status"]),
		ResumedFrom: h["resumed_from"], ResumedBy: h["resumed_by"]}
	r.CreatedAt = parseStamp(h["created_at"])
	r.UpdatedAt = parseStamp(h["updated_at"])
	return r, nil
}

// PauseRun implements lifecycle.Store.
func (s *Store) PauseRun(ctx context.Context, project, id, agentID string, at time.Time) (*domain.Run, error) {
	if err := s.register(ctx, project); err != nil {
		return nil, s.wrap(err)
	}
	args := append(s.common(project, at, 0), id, agentID)
	out, err := pauseScript.Run(ctx, s.rdb, []string{s.base(project) + "run:" + id}, args...).StringSlice()
	if err != nil {
		return nil, s.wrap(err)
	}
	if out[0] == "run_owned" {
		return nil, errRunOwned(id)
	}
	if out[0] == "resumed" {
		r, _ := s.Run(ctx, project, id)
		return r, domain.Errorf(domain.EConflict, "run %s was already resumed as run %s", id, out[1])
	}
	return s.Run(ctx, project, id)
}
