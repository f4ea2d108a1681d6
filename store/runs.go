package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/redis/go-redis/v9"
)

// errRunOwned refuses a run id another agent started; it does not say which.
func errRunOwned(run string) error {
	return &domain.Error{Code: domain.EConflict, Message: fmt.Sprintf("run %s belongs to another agent", run),
		Details: []domain.Detail{{Field: "run_id", Problem: "a run belongs to the agent that started it; use a run id of your own"}}}
}

// Run implements lifecycle.Store.
func (s *Store) Run(ctx context.Context, project, id string) (*domain.Run, error) {
	h, stub, err := s.runHash(ctx, project, id)
	if err != nil {
		return nil, s.wrap(err)
	}
	if stub != "" {
		// A stub: the run is its one pending question's (runKey in scripts.go).
		q, err := s.Get(ctx, project, stub)
		if err != nil {
			return nil, domain.Errorf(domain.ENotFound, "no run %s in project %s", id, project)
		}
		return &domain.Run{ID: id, ProjectID: project, AgentID: q.AgentID, Status: domain.RunRunning,
			CreatedAt: q.CreatedAt, UpdatedAt: q.CreatedAt}, nil
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

// runHash reads a run's hash, or the question id of a run stub (a run whose
// one question is pending: runKey in scripts.go), which a script may turn
// into its hash between two reads.
func (s *Store) runHash(ctx context.Context, project, id string) (h map[string]string, stub string, err error) {
	k := s.base(project) + "run:" + id
	for range 3 {
		h, err = s.rdb.HGetAll(ctx, k).Result()
		if !isWrongType(err) {
			return h, "", err
		}
		stub, err = s.rdb.Get(ctx, k).Result()
		if !isWrongType(err) {
			if errors.Is(err, redis.Nil) {
				return nil, "", nil
			}
			return nil, stub, err
		}
	}
	return nil, "", err
}

// isWrongType reports Redis's refusal of a command on a key of another type.
func isWrongType(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE") }
