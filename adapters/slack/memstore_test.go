package slack

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/askbridge/askbridge/core"
)

// memStore is a small in-memory core.Store for the adapter's tests, used
// until the shared store package is available on this branch. Each method
// holds one lock, so transitions are atomic as the real store's are.
type memStore struct {
	mu       sync.Mutex
	qs       map[string]*core.Question
	order    []string
	runs     map[string]*core.Run
	drafts   map[string]map[string][]string
	once     map[string]time.Time
	watchers map[string][]chan struct{}
	events   []core.Event
}

var _ core.Store = (*memStore)(nil)

func newMemStore() *memStore {
	return &memStore{qs: map[string]*core.Question{}, runs: map[string]*core.Run{},
		drafts: map[string]map[string][]string{}, once: map[string]time.Time{}, watchers: map[string][]chan struct{}{}}
}

func clone(q *core.Question) *core.Question {
	b, _ := json.Marshal(q)
	var c core.Question
	_ = json.Unmarshal(b, &c)
	c.Fingerprint = q.Fingerprint
	return &c
}

func (m *memStore) wake(id string) {
	for _, c := range m.watchers[id] {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

func (m *memStore) Create(_ context.Context, q *core.Question) (core.CreateResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var res core.CreateResult
	for _, id := range m.order {
		old := m.qs[id]
		if old.ProjectID == q.ProjectID && old.RunID == q.RunID && old.Status == core.StatusPending {
			old.Status, old.CancelReason = core.StatusCancelled, core.CancelSuperseded
			res.Superseded = clone(old)
			m.wake(old.ID)
		}
	}
	m.qs[q.ID] = clone(q)
	m.order = append(m.order, q.ID)
	if _, ok := m.runs[q.ProjectID+"/"+q.RunID]; !ok {
		m.runs[q.ProjectID+"/"+q.RunID] = &core.Run{ID: q.RunID, ProjectID: q.ProjectID, AgentID: q.AgentID, Status: core.RunRunning}
	}
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

func (m *memStore) List(_ context.Context, project string, status core.Status, _ int) ([]*core.Question, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*core.Question
	for _, id := range m.order {
		if q := m.qs[id]; q.ProjectID == project && (status == "" || q.Status == status) {
			out = append(out, clone(q))
		}
	}
	return out, nil
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
	for i, old := range q.Targets {
		if old.Key() == t.Key() && old.MessageTS == "" {
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
	if !ok || q.ProjectID != project {
		return nil, core.Errorf(core.ENotFound, "no question %s", id)
	}
	if q.Status != core.StatusPending {
		return clone(q), core.StatusError(q)
	}
	run := m.runs[project+"/"+q.RunID]
	if tr.RequirePausedRun && (run == nil || run.Status != core.RunPaused) {
		return clone(q), core.Errorf(core.ERunNotPaused, "run %s has not paused", q.RunID)
	}
	q.Status, q.CancelReason, q.RespondedBy, q.UpdatedAt = tr.To, tr.CancelReason, tr.By, tr.At
	if tr.Answer != nil {
		q.Answers, q.Selections, q.Response = tr.Answer.Answers, tr.Answer.Selections, tr.Answer.Response
		at := tr.At
		q.RespondedAt = &at
	}
	if tr.ContinuationRunID != "" && run != nil && run.Status == core.RunPaused {
		run.Status, run.ResumedBy = core.RunResumed, tr.ContinuationRunID
		q.ResumedRunID = tr.ContinuationRunID
	}
	m.events = append(m.events, core.Event{Type: core.EventForStatus(tr.To), ProjectID: project, QuestionID: id})
	m.wake(id)
	return clone(q), nil
}

func (m *memStore) MarkRead(ctx context.Context, project, id string) (*core.Question, error) {
	return m.Get(ctx, project, id)
}

func (m *memStore) Due(_ context.Context, now time.Time, limit int) ([]core.Ref, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []core.Ref
	for _, id := range m.order {
		if q := m.qs[id]; q.Status == core.StatusPending && !q.ExpiresAt.After(now) {
			out = append(out, core.Ref{ProjectID: q.ProjectID, ID: id})
		}
	}
	return out, nil
}

func (m *memStore) Run(_ context.Context, project, id string) (*core.Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.runs[project+"/"+id]; ok {
		c := *r
		return &c, nil
	}
	return nil, core.Errorf(core.ENotFound, "no run %s", id)
}

func (m *memStore) PauseRun(_ context.Context, project, id, agentID string, at time.Time) (*core.Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[project+"/"+id]
	if !ok {
		r = &core.Run{ID: id, ProjectID: project, AgentID: agentID}
		m.runs[project+"/"+id] = r
	}
	if r.Status != core.RunResumed {
		r.Status = core.RunPaused
	}
	c := *r
	return &c, nil
}

func (m *memStore) Events(_ context.Context, project, after string, limit int) ([]core.Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []core.Event
	for _, e := range m.events {
		if e.ProjectID == project {
			out = append(out, e)
		}
	}
	return out, nil
}

func (m *memStore) AppendEvent(_ context.Context, ev core.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events = append(m.events, ev)
	return nil
}

func (m *memStore) Watch(project, id string) (<-chan struct{}, func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := make(chan struct{}, 1)
	m.watchers[id] = append(m.watchers[id], c)
	return c, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		ws := m.watchers[id]
		for i, w := range ws {
			if w == c {
				m.watchers[id] = append(ws[:i], ws[i+1:]...)
				break
			}
		}
	}
}

func (m *memStore) ClaimDeliveries(context.Context, time.Time, time.Duration, int) ([]core.Delivery, error) {
	return nil, nil
}
func (m *memStore) FinishDelivery(context.Context, core.Delivery) error           { return nil }
func (m *memStore) RetryDelivery(context.Context, core.Delivery, time.Time) error { return nil }
func (m *memStore) Projects(context.Context) ([]string, error)                    { return nil, nil }

func (m *memStore) PutDraft(_ context.Context, project, id, person string, draft map[string][]string, _ time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.drafts[project+"/"+id+"/"+person] = draft
	return nil
}

func (m *memStore) GetDraft(_ context.Context, project, id, person string) (map[string][]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string][]string{}
	for k, v := range m.drafts[project+"/"+id+"/"+person] {
		out[k] = v
	}
	return out, nil
}

func (m *memStore) Once(_ context.Context, key string, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.once[key]; ok && time.Now().Before(t) {
		return false, nil
	}
	m.once[key] = time.Now().Add(ttl)
	return true, nil
}

func (m *memStore) Ping(context.Context) error { return nil }
