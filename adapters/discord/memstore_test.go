package discord

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/askbridge/askbridge/core"
)

// memStore is an in-memory core.Store for the adapter's unit tests; the
// end-to-end tests use the real store package.
type memStore struct {
	mu       sync.Mutex
	qs       map[string]*core.Question // id → record
	order    []string
	runs     map[string]*core.Run
	drafts   map[string]map[string][]string
	watchers map[string][]chan struct{}
}

var _ core.Store = (*memStore)(nil)

func newMemStore() *memStore {
	return &memStore{qs: map[string]*core.Question{}, runs: map[string]*core.Run{},
		drafts: map[string]map[string][]string{}, watchers: map[string][]chan struct{}{}}
}

func clone(q *core.Question) *core.Question {
	b, _ := json.Marshal(q)
	var c core.Question
	_ = json.Unmarshal(b, &c)
	c.Resume = q.Resume
	return &c
}

func (m *memStore) Create(_ context.Context, q *core.Question) (core.CreateResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var res core.CreateResult
	for _, id := range m.order {
		o := m.qs[id]
		if o.ProjectID == q.ProjectID && o.RunID == q.RunID && o.Status == core.StatusPending {
			o.Status, o.CancelReason = core.StatusCancelled, core.CancelSuperseded
			res.Superseded = clone(o)
		}
	}
	m.qs[q.ID] = clone(q)
	m.order = append(m.order, q.ID)
	res.Question = clone(q)
	return res, nil
}

func (m *memStore) Locate(_ context.Context, id string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if q, ok := m.qs[id]; ok {
		return q.ProjectID, nil
	}
	return "", core.Errorf(core.ENotFound, "no question %s", id)
}

func (m *memStore) Get(_ context.Context, project, id string) (*core.Question, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if q, ok := m.qs[id]; ok && q.ProjectID == project {
		return clone(q), nil
	}
	return nil, core.Errorf(core.ENotFound, "no question %s", id)
}

func (m *memStore) List(context.Context, string, core.Status, int) ([]*core.Question, error) {
	return nil, nil
}

func (m *memStore) RunQuestions(_ context.Context, project, run string) ([]*core.Question, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*core.Question
	for _, id := range m.order {
		if q := m.qs[id]; q.ProjectID == project && q.RunID == run {
			out = append(out, clone(q))
		}
	}
	return out, nil
}

func (m *memStore) AttachCopy(_ context.Context, project, id string, t core.Target) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	q, ok := m.qs[id]
	if !ok {
		return core.Errorf(core.ENotFound, "no question %s", id)
	}
	for i, o := range q.Targets {
		if o.Key() == t.Key() {
			q.Targets[i] = t
			return nil
		}
	}
	q.Targets = append(q.Targets, t)
	return nil
}

func (m *memStore) Transition(_ context.Context, project, id string, tr core.Transition) (*core.Question, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q, ok := m.qs[id]
	if !ok {
		return nil, core.Errorf(core.ENotFound, "no question %s", id)
	}
	if q.Status != core.StatusPending {
		return clone(q), core.StatusError(q)
	}
	if tr.RequirePausedRun {
		r := m.runs[project+"/"+q.RunID]
		if r == nil || r.Status != core.RunPaused {
			return clone(q), core.Errorf(core.ERunNotPaused, "run %s has not paused yet", q.RunID)
		}
		if tr.ContinuationRunID != "" {
			r.Status = core.RunResumed
			q.ResumedRunID = tr.ContinuationRunID
		}
	}
	q.Status, q.CancelReason, q.UpdatedAt = tr.To, tr.CancelReason, tr.At
	if tr.By != nil {
		p := *tr.By
		p.Groups = nil
		q.RespondedBy, q.RespondedAt = &p, &tr.At
	}
	if tr.Answer != nil {
		q.Answers, q.Selections, q.Response = tr.Answer.Answers, tr.Answer.Selections, tr.Answer.Response
	}
	for _, w := range m.watchers[id] {
		select {
		case w <- struct{}{}:
		default:
		}
	}
	return clone(q), nil
}

func (m *memStore) MarkRead(ctx context.Context, project, id string) (*core.Question, error) {
	return m.Get(ctx, project, id)
}
func (m *memStore) Due(context.Context, time.Time, int) ([]core.Ref, error) { return nil, nil }
func (m *memStore) Run(_ context.Context, project, id string) (*core.Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.runs[project+"/"+id]; ok {
		c := *r
		return &c, nil
	}
	return nil, core.Errorf(core.ENotFound, "no run %s", id)
}
func (m *memStore) PauseRun(_ context.Context, project, id, agent string, at time.Time) (*core.Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := &core.Run{ID: id, ProjectID: project, AgentID: agent, Status: core.RunPaused, UpdatedAt: at}
	m.runs[project+"/"+id] = r
	c := *r
	return &c, nil
}
func (m *memStore) Events(context.Context, string, string, int) ([]core.Event, error) {
	return nil, nil
}
func (m *memStore) AppendEvent(context.Context, core.Event) error { return nil }
func (m *memStore) Watch(_, id string) (<-chan struct{}, func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ch := make(chan struct{}, 1)
	m.watchers[id] = append(m.watchers[id], ch)
	return ch, func() {}
}
func (m *memStore) ClaimDeliveries(context.Context, time.Time, time.Duration, int) ([]core.Delivery, error) {
	return nil, nil
}
func (m *memStore) FinishDelivery(context.Context, core.Delivery) error           { return nil }
func (m *memStore) RetryDelivery(context.Context, core.Delivery, time.Time) error { return nil }
func (m *memStore) Projects(context.Context) ([]string, error)                    { return nil, nil }
func (m *memStore) PutDraft(_ context.Context, project, id, person string, d map[string][]string, _ time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.drafts[project+"/"+id+"/"+person] = d
	return nil
}
func (m *memStore) GetDraft(_ context.Context, project, id, person string) (map[string][]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string][]string{}
	for k, v := range m.drafts[project+"/"+id+"/"+person] {
		out[k] = append([]string(nil), v...)
	}
	return out, nil
}
func (m *memStore) Once(context.Context, string, time.Duration) (bool, error) { return true, nil }
func (m *memStore) Ping(context.Context) error                                { return nil }
