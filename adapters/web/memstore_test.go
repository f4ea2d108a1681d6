package web

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/askbridge/askbridge/core"
)

// memStore is a small in-memory core.Store for this package's tests while
// the real store is being built: one mutex makes every transition atomic,
// and Watch wakes like the real one (buffered, coalescing).
type memStore struct {
	mu       sync.Mutex
	qs       map[string]*core.Question // id → question
	runs     map[string]*core.Run      // project/run → run
	events   map[string][]core.Event
	seq      int
	watchers map[string]map[chan struct{}]bool // project/id or project/ → chans
}

var _ core.Store = (*memStore)(nil)

func newMemStore() *memStore {
	return &memStore{qs: map[string]*core.Question{}, runs: map[string]*core.Run{},
		events: map[string][]core.Event{}, watchers: map[string]map[chan struct{}]bool{}}
}

func clone(q *core.Question) *core.Question {
	b, _ := json.Marshal(q)
	var c core.Question
	_ = json.Unmarshal(b, &c)
	c.Read, c.Fingerprint = q.Read, q.Fingerprint
	if q.Resume != nil {
		c.Resume = &core.Resume{URL: q.Resume.URL, Secret: q.Resume.Secret}
	}
	return &c
}

func (s *memStore) notify(project, id string) {
	for _, key := range []string{project + "/" + id, project + "/"} {
		for ch := range s.watchers[key] {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

func (s *memStore) event(typ string, q *core.Question, at time.Time) {
	s.seq++
	s.events[q.ProjectID] = append(s.events[q.ProjectID], core.Event{ID: fmt.Sprintf("%d-0", s.seq), Type: typ,
		ProjectID: q.ProjectID, QuestionID: q.ID, RunID: q.RunID, At: at})
	s.notify(q.ProjectID, q.ID)
}

func (s *memStore) Create(_ context.Context, q *core.Question) (core.CreateResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var res core.CreateResult
	for _, o := range s.qs {
		if o.ProjectID == q.ProjectID && o.RunID == q.RunID && o.Status == core.StatusPending {
			o.Status, o.CancelReason, o.UpdatedAt = core.StatusCancelled, core.CancelSuperseded, q.CreatedAt
			res.Superseded = clone(o)
			s.event(core.EventCancelled, o, q.CreatedAt)
		}
	}
	c := clone(q)
	s.qs[q.ID] = c
	if _, ok := s.runs[q.ProjectID+"/"+q.RunID]; !ok && q.WebhookMode() {
		s.runs[q.ProjectID+"/"+q.RunID] = &core.Run{ID: q.RunID, ProjectID: q.ProjectID, AgentID: q.AgentID,
			Status: core.RunRunning, CreatedAt: q.CreatedAt, UpdatedAt: q.CreatedAt}
	}
	s.event(core.EventCreated, c, q.CreatedAt)
	res.Question = clone(c)
	return res, nil
}

func (s *memStore) Locate(_ context.Context, id string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q, ok := s.qs[id]; ok {
		return q.ProjectID, nil
	}
	return "", core.Errorf(core.ENotFound, "question %s not found", id)
}

func (s *memStore) Get(_ context.Context, project, id string) (*core.Question, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q, ok := s.qs[id]; ok && q.ProjectID == project {
		return clone(q), nil
	}
	return nil, core.Errorf(core.ENotFound, "question %s not found", id)
}

func (s *memStore) sorted(keep func(*core.Question) bool) []*core.Question {
	var out []*core.Question
	for _, q := range s.qs {
		if keep(q) {
			out = append(out, clone(q))
		}
	}
	slices.SortFunc(out, func(a, b *core.Question) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out
}

func (s *memStore) List(_ context.Context, project string, status core.Status, limit int) ([]*core.Question, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.sorted(func(q *core.Question) bool {
		return q.ProjectID == project && (status == "" || q.Status == status)
	})
	if limit > 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, nil
}

func (s *memStore) RunQuestions(_ context.Context, project, run string) ([]*core.Question, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sorted(func(q *core.Question) bool { return q.ProjectID == project && q.RunID == run }), nil
}

func (s *memStore) AttachCopy(_ context.Context, project, id string, t core.Target) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q, ok := s.qs[id]; ok {
		q.Targets = append(q.Targets, t)
	}
	return nil
}

func (s *memStore) Transition(_ context.Context, project, id string, tr core.Transition) (*core.Question, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.qs[id]
	if !ok || q.ProjectID != project {
		return nil, core.Errorf(core.ENotFound, "question %s not found", id)
	}
	if q.Status != core.StatusPending {
		return clone(q), core.StatusError(q)
	}
	run := s.runs[project+"/"+q.RunID]
	if tr.RequirePausedRun && (run == nil || run.Status != core.RunPaused) {
		return clone(q), core.Errorf(core.ERunNotPaused, "run %s has not paused yet", q.RunID)
	}
	q.Status, q.UpdatedAt, q.CancelReason = tr.To, tr.At, tr.CancelReason
	if tr.Answer != nil {
		q.Answers, q.Selections, q.Response = tr.Answer.Answers, tr.Answer.Selections, tr.Answer.Response
	}
	if tr.By != nil {
		by := *tr.By
		q.RespondedBy = &by
		at := tr.At
		q.RespondedAt = &at
	}
	if tr.ContinuationRunID != "" && run != nil && run.Status == core.RunPaused {
		run.Status, run.ResumedBy, run.UpdatedAt = core.RunResumed, tr.ContinuationRunID, tr.At
		s.runs[project+"/"+tr.ContinuationRunID] = &core.Run{ID: tr.ContinuationRunID, ProjectID: project,
			AgentID: q.AgentID, Status: core.RunRunning, ResumedFrom: run.ID, CreatedAt: tr.At, UpdatedAt: tr.At}
		q.ResumedRunID = tr.ContinuationRunID
	}
	s.event(core.EventForStatus(tr.To), q, tr.At)
	return clone(q), nil
}

func (s *memStore) MarkRead(_ context.Context, project, id string) (*core.Question, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.qs[id]
	if !ok || q.ProjectID != project {
		return nil, core.Errorf(core.ENotFound, "question %s not found", id)
	}
	q.Read = true
	return clone(q), nil
}

func (s *memStore) Due(_ context.Context, now time.Time, limit int) ([]core.Ref, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []core.Ref
	for _, q := range s.qs {
		if q.Status == core.StatusPending && !q.ExpiresAt.After(now) {
			out = append(out, core.Ref{ProjectID: q.ProjectID, ID: q.ID})
		}
	}
	return out, nil
}

func (s *memStore) Run(_ context.Context, project, id string) (*core.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.runs[project+"/"+id]; ok {
		c := *r
		return &c, nil
	}
	return nil, core.Errorf(core.ENotFound, "run %s not found", id)
}

func (s *memStore) PauseRun(_ context.Context, project, id, agentID string, at time.Time) (*core.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[project+"/"+id]
	if !ok {
		r = &core.Run{ID: id, ProjectID: project, AgentID: agentID, CreatedAt: at}
		s.runs[project+"/"+id] = r
	}
	r.Status, r.UpdatedAt = core.RunPaused, at
	s.notify(project, "")
	c := *r
	return &c, nil
}

func (s *memStore) Events(_ context.Context, project, after string, limit int) ([]core.Event, error) {
	return nil, nil
}

func (s *memStore) AppendEvent(_ context.Context, ev core.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notify(ev.ProjectID, ev.QuestionID)
	return nil
}

func (s *memStore) Watch(project, id string) (<-chan struct{}, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{}, 1)
	key := project + "/" + id
	if s.watchers[key] == nil {
		s.watchers[key] = map[chan struct{}]bool{}
	}
	s.watchers[key][ch] = true
	return ch, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.watchers[key], ch)
	}
}

func (s *memStore) ClaimDeliveries(context.Context, time.Time, time.Duration, int) ([]core.Delivery, error) {
	return nil, nil
}
func (s *memStore) FinishDelivery(context.Context, core.Delivery) error           { return nil }
func (s *memStore) RetryDelivery(context.Context, core.Delivery, time.Time) error { return nil }

func (s *memStore) Projects(context.Context) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, q := range s.qs {
		if !seen[q.ProjectID] {
			seen[q.ProjectID] = true
			out = append(out, q.ProjectID)
		}
	}
	return out, nil
}

func (s *memStore) PutDraft(context.Context, string, string, string, map[string][]string, time.Duration) error {
	return nil
}
func (s *memStore) GetDraft(context.Context, string, string, string) (map[string][]string, error) {
	return map[string][]string{}, nil
}
func (s *memStore) Once(context.Context, string, time.Duration) (bool, error) { return true, nil }
func (s *memStore) Ping(context.Context) error                                { return nil }
