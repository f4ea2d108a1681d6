// Package fakeapi is an in-memory stand-in for askbridge's HTTP API
// (docs/openapi.yaml) for the unit tests of the client side (client, CLI, MCP
// server, hook). It validates with core like the real server, keeps the
// state machine (one transition out of pending), long-polls, re-attaches
// repeated asks and records the requests it got. End-to-end tests run
// against the real server instead.
package fakeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/httperr"
	"github.com/google/uuid"
)

// Request is one request the fake received.
type Request struct {
	Method, Path, Query, Auth string
	Body                      []byte
	// Traceparent and Tracestate are the W3C trace context headers.
	Traceparent, Tracestate string
}

// Server is the fake API.
type Server struct {
	URL   string
	Token string // required bearer token; "" accepts any

	mu        sync.Mutex
	questions map[string]*domain.Question
	order     []string
	runs      map[string]*domain.Run
	changed   chan struct{} // closed and replaced on every change
	requests  []Request
	// Hooks a test may set before requests arrive.
	OnCreate func(q *domain.Question)
	// NewID makes the id of a new question (default: a random UUID).
	NewID func() string
	// MaxPage bounds a page of the list, as the API's limit does (default
	// 1000): a test sets it low to make a client page.
	MaxPage int
}

// New starts a fake on an httptest server closed at the end of the test.
func New(t testing.TB, token string) *Server {
	s := &Server{Token: token, questions: map[string]*domain.Question{}, runs: map[string]*domain.Run{},
		changed: make(chan struct{})}
	ts := httptest.NewServer(s.handler())
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

// Requests returns a copy of the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Question returns a copy of a question.
func (s *Server) Question(id string) *domain.Question {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.questions[id]
	if !ok {
		return nil
	}
	c := *q
	return &c
}

// Questions returns copies of every question, oldest first.
func (s *Server) Questions() []*domain.Question {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*domain.Question, 0, len(s.order))
	for _, id := range s.order {
		c := *s.questions[id]
		out = append(out, &c)
	}
	return out
}

// WaitPending blocks until n questions exist and the newest is pending, and
// returns the newest, or fails the test after 10s.
func (s *Server) WaitPending(t testing.TB, n int) *domain.Question {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		ch := s.changed
		if len(s.order) >= n {
			q := *s.questions[s.order[n-1]]
			s.mu.Unlock()
			return &q
		}
		s.mu.Unlock()
		select {
		case <-ch:
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("fakeapi: no question #%d within 10s", n)
	return nil
}

// Answer answers a question as person "test:op" with the given choices per
// item (labels or free text). Safe to call from any goroutine.
func (s *Server) Answer(t testing.TB, id string, choices ...[]string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.questions[id]
	if q == nil || q.Status != domain.StatusPending {
		t.Errorf("fakeapi: question %s is not pending", id)
		return
	}
	a := domain.Resolve(q.Questions, choices)
	now := time.Now().UTC()
	q.Status, q.Answers, q.Selections, q.Response = domain.StatusAnswered, a.Answers, a.Selections, a.Response
	q.RespondedBy, q.RespondedAt, q.UpdatedAt = &domain.Person{Platform: "test", ID: "op", Name: "op"}, &now, now
	s.notifyLocked()
}

// Expire expires a pending question now.
func (s *Server) Expire(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.questions[id]; q != nil && q.Status == domain.StatusPending {
		q.Status, q.UpdatedAt = domain.StatusExpired, time.Now().UTC()
		s.notifyLocked()
	}
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// expireLocked applies deadlines.
func (s *Server) expireLocked() {
	now := time.Now()
	for _, q := range s.questions {
		if q.Status == domain.StatusPending && !q.ExpiresAt.After(now) {
			q.Status, q.UpdatedAt = domain.StatusExpired, now.UTC()
			s.notifyLocked()
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, err error) {
	httperr.Write(w, httperr.Of(err))
}

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/projects/{p}/agent-questions", s.create)
	mux.HandleFunc("GET /api/projects/{p}/agent-questions", s.list)
	mux.HandleFunc("GET /api/projects/{p}/agent-questions/{id}", s.get)
	mux.HandleFunc("GET /api/projects/{p}/agent-questions/{id}/wait", s.wait)
	mux.HandleFunc("POST /api/projects/{p}/agent-questions/{id}/respond", s.respond)
	mux.HandleFunc("POST /api/projects/{p}/agent-questions/{id}/cancel", s.cancel)
	mux.HandleFunc("GET /api/projects/{p}/agent-runs/{run}", s.run)
	mux.HandleFunc("POST /api/projects/{p}/agent-runs/{run}/pause", s.pause)
	mux.HandleFunc("GET /api/projects/{p}/agent-runs/{run}/questions", s.runQuestions)
	mux.HandleFunc("GET /api/projects/{p}/notifications", s.notifications)
	mux.HandleFunc("POST /api/projects/{p}/notifications/{id}/read", s.read)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.mu.Lock()
		s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
			Auth: r.Header.Get("Authorization"), Body: body,
			Traceparent: r.Header.Get("traceparent"), Tracestate: r.Header.Get("tracestate")})
		s.mu.Unlock()
		if s.Token != "" && r.Header.Get("Authorization") != "Bearer "+s.Token {
			writeErr(w, domain.Errorf(domain.EUnauthorized, "missing or unknown token"))
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func (s *Server) lookup(w http.ResponseWriter, r *http.Request) *domain.Question {
	q := s.questions[r.PathValue("id")]
	if q == nil || q.ProjectID != r.PathValue("p") {
		writeErr(w, domain.Errorf(domain.ENotFound, "no question %s in project %s", r.PathValue("id"), r.PathValue("p")))
		return nil
	}
	return q
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	var req domain.AskRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeErr(w, domain.Errorf(domain.EInvalid, "body is not valid JSON: %v", err))
		return
	}
	q, timeout, err := domain.BuildQuestion(&req, domain.AskDefaults{Timeout: domain.DefaultTimeout}, true)
	if err != nil {
		writeErr(w, err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	project := r.PathValue("p")
	if q.RunID == "" {
		q.RunID = "run-" + uuid.NewString()
	}
	now := time.Now()
	for _, id := range s.order {
		old := s.questions[id]
		if old.ProjectID != project {
			continue
		}
		same := (q.IdempotencyKey != "" && old.IdempotencyKey == q.IdempotencyKey) ||
			(old.RunID == q.RunID && old.Fingerprint == q.Fingerprint && domain.IsCallKey(q.Fingerprint)) ||
			(old.RunID == q.RunID && old.Fingerprint == q.Fingerprint &&
				(old.Status == domain.StatusPending || (old.Status == domain.StatusAnswered && now.Sub(old.UpdatedAt) < domain.ReattachWindow)))
		if same {
			writeJSON(w, http.StatusOK, map[string]any{"message": "Question re-attached.", "id": old.ID,
				"status": old.Status, "run_id": old.RunID, "project_id": old.ProjectID, "kind": old.Kind,
				"questions": old.Questions, "answers": old.Answers, "selections": old.Selections,
				"response": old.Response, "expires_at": old.ExpiresAt, "created_at": old.CreatedAt,
				"agent_id": old.AgentID, "targets": old.Targets})
			return
		}
	}
	// A question supersedes the run's pending question; approvals
	// coexist (docs/approvals.md "Parallel tool calls").
	for _, id := range s.order {
		old := s.questions[id]
		if q.Kind == domain.KindQuestion && old.Kind == domain.KindQuestion &&
			old.ProjectID == project && old.RunID == q.RunID && old.Status == domain.StatusPending {
			old.Status, old.CancelReason, old.UpdatedAt = domain.StatusCancelled, domain.CancelSuperseded, now.UTC()
		}
	}
	q.ID = uuid.NewString()
	if s.NewID != nil {
		q.ID = s.NewID()
	}
	q.ProjectID = project
	q.CreatedAt, q.UpdatedAt, q.ExpiresAt = now.UTC(), now.UTC(), now.Add(timeout).UTC()
	if q.Targets == nil {
		q.Targets = []domain.Target{}
	}
	s.questions[q.ID] = q
	s.order = append(s.order, q.ID)
	if _, ok := s.runs[q.RunID]; !ok {
		s.runs[q.RunID] = &domain.Run{ID: q.RunID, ProjectID: project, AgentID: q.AgentID, Status: domain.RunRunning,
			CreatedAt: now.UTC(), UpdatedAt: now.UTC()}
	}
	if s.OnCreate != nil {
		s.OnCreate(q)
	}
	s.notifyLocked()
	out := struct {
		domain.Question
		Message string `json:"message"`
	}{*q, "Question " + q.ID[:8] + "… sent to the web inbox; this run will pause until someone answers (expires in " + domain.HumanDuration(timeout) + ")."}
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	status := domain.Status(r.URL.Query().Get("status"))
	limit, maxPage := 500, s.MaxPage
	if maxPage <= 0 {
		maxPage = 1000
	}
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			writeErr(w, &domain.Error{Code: domain.EInvalid, Message: "invalid limit", Details: []domain.Detail{{Field: "limit", Problem: "a whole number from 1 to 1000"}}})
			return
		}
		limit = n
	}
	limit = min(limit, maxPage)
	// The cursor is the position in order where the page starts.
	from := 0
	if c := r.URL.Query().Get("cursor"); c != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(c, "from-"))
		if err != nil || !strings.HasPrefix(c, "from-") {
			writeErr(w, &domain.Error{Code: domain.EInvalid, Message: "invalid cursor", Details: []domain.Detail{{Field: "cursor", Problem: "not a cursor this list gave"}}})
			return
		}
		from = n
	}
	out := []*domain.Question{}
	var next any
	for i := from; i < len(s.order); i++ {
		q := s.questions[s.order[i]]
		if q.ProjectID != r.PathValue("p") || (status != "" && q.Status != status) {
			continue
		}
		if len(out) == limit {
			next = fmt.Sprintf("from-%d", i)
			break
		}
		out = append(out, q)
	}
	writeJSON(w, http.StatusOK, map[string]any{"questions": out, "next_cursor": next})
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	if q := s.lookup(w, r); q != nil {
		writeJSON(w, http.StatusOK, q)
	}
}

func (s *Server) wait(w http.ResponseWriter, r *http.Request) {
	timeout, err := domain.ParseDuration(r.URL.Query().Get("timeout"))
	if err != nil || timeout > 120*time.Second {
		writeErr(w, domain.Errorf(domain.EInvalid, "bad timeout"))
		return
	}
	deadline := time.Now().Add(timeout)
	for {
		s.mu.Lock()
		s.expireLocked()
		q := s.lookup(w, r)
		if q == nil {
			s.mu.Unlock()
			return
		}
		if q.Status.Final() || !time.Now().Before(deadline) {
			writeJSON(w, http.StatusOK, q)
			s.mu.Unlock()
			return
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-time.After(min(time.Until(deadline), 50*time.Millisecond)):
		case <-r.Context().Done():
			return
		}
	}
}

func (s *Server) respond(w http.ResponseWriter, r *http.Request) {
	var req domain.RespondRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeErr(w, domain.Errorf(domain.EInvalidAnswer, "body is not valid JSON"))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	q := s.lookup(w, r)
	if q == nil {
		return
	}
	if q.Status != domain.StatusPending {
		writeErr(w, domain.StatusError(q))
		return
	}
	if err := domain.PrepareApproval(q, &req, true); err != nil {
		writeErr(w, err)
		return
	}
	a, err := domain.ParseAnswer(q, req)
	if err != nil {
		writeErr(w, err)
		return
	}
	who := domain.Person{Platform: "api", ID: "operator"}
	if req.RespondedBy != nil {
		who = req.RespondedBy.Person
	}
	if err := domain.DecideApproval(q, req, &a, &who); err != nil {
		writeErr(w, err)
		return
	}
	now := time.Now().UTC()
	q.Status, q.Answers, q.Selections, q.Response = domain.StatusAnswered, a.Answers, a.Selections, a.Response
	q.Reason, q.Decision = a.Reason, a.Decision
	q.RespondedBy, q.RespondedAt, q.UpdatedAt, q.Read = &who, &now, now, true
	s.notifyLocked()
	writeJSON(w, http.StatusAccepted, map[string]any{"id": q.ID, "status": q.Status, "run_id": q.RunID})
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Reason string `json:"reason"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	q := s.lookup(w, r)
	if q == nil {
		return
	}
	if q.Status != domain.StatusPending {
		writeErr(w, domain.StatusError(q))
		return
	}
	if body.Reason == "" {
		body.Reason = domain.CancelUser
	}
	q.Status, q.CancelReason, q.UpdatedAt = domain.StatusCancelled, body.Reason, time.Now().UTC()
	s.notifyLocked()
	writeJSON(w, http.StatusOK, q)
}

func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run := s.runs[r.PathValue("run")]
	if run == nil || run.ProjectID != r.PathValue("p") {
		writeErr(w, domain.Errorf(domain.ENotFound, "no run %s", r.PathValue("run")))
		return
	}
	writeJSON(w, http.StatusOK, run)
}

func (s *Server) pause(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UTC()
	run := s.runs[r.PathValue("run")]
	if run == nil {
		run = &domain.Run{ID: r.PathValue("run"), ProjectID: r.PathValue("p"), CreatedAt: now}
		s.runs[run.ID] = run
	}
	run.Status, run.UpdatedAt = domain.RunPaused, now
	writeJSON(w, http.StatusOK, run)
}

func (s *Server) runQuestions(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []*domain.Question{}
	for _, id := range s.order {
		if q := s.questions[id]; q.ProjectID == r.PathValue("p") && q.RunID == r.PathValue("run") {
			out = append(out, q)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"questions": out})
}

func (s *Server) notifications(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	unread := r.URL.Query().Get("unread") == "true"
	out := []domain.Notification{}
	for _, id := range s.order {
		q := s.questions[id]
		if q.ProjectID != r.PathValue("p") {
			continue
		}
		n := domain.NotificationFor(q)
		if unread && n.Read {
			continue
		}
		out = append(out, n)
	}
	writeJSON(w, http.StatusOK, map[string]any{"notifications": out})
}

func (s *Server) read(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.lookup(w, r)
	if q == nil {
		return
	}
	q.Read = true
	writeJSON(w, http.StatusOK, domain.NotificationFor(q))
}
