package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/admit"
	"github.com/askbridge/askbridge/internal/tracing"
	"github.com/askbridge/askbridge/lifecycle"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// visible keeps the questions p may see, as the API shows them.
func visible(qs []*domain.Question, p Principal) []*domain.Question {
	out := []*domain.Question{}
	for _, q := range qs {
		if p.owns(q) {
			out = append(out, public(q))
		}
	}
	return out
}

// public is a question as the API shows it: platform secrets never leave
// the bridge.
func public(q *domain.Question) *domain.Question { return q.Public() }

// question loads a question p may see; another project's or agent's is not
// found (its existence is not revealed).
func (a *API) question(r *http.Request, p Principal) (*domain.Question, error) {
	q, err := a.store.Get(r.Context(), r.PathValue("p"), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	if !p.owns(q) {
		return nil, domain.Errorf(domain.ENotFound, "no question %s in project %s", r.PathValue("id"), r.PathValue("p"))
	}
	return q, nil
}

func (a *API) ask(w http.ResponseWriter, r *http.Request, p Principal) error {
	var req domain.AskRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	for i := range req.Targets {
		req.Targets[i] = req.Targets[i].Resolved() // Telegram's chat and thread
	}
	project := r.PathValue("p")
	agentID, agentRoute, err := a.asker(p, req.AgentID)
	if err != nil {
		return err
	}
	req.AgentID = agentID
	// The agent's W3C traceparent (if any) is the ask span's parent; the
	// question keeps the ask's trace context for the answer and the resume.
	ctx, span := a.tracer.Start(tracing.Extract(r.Context(), r.Header), "askbridge.ask",
		trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attribute.String("askbridge.project", project)))
	res, err := a.router.Ask(ctx, project, &req, agentRoute)
	if err != nil {
		span.SetStatus(codes.Error, domain.ErrorCode(err))
		span.End()
		return err
	}
	span.SetAttributes(attribute.String("askbridge.question.id", res.Question.ID), attribute.Bool("askbridge.created", res.Created))
	span.End()
	traceHeader(w, res.Question)
	status := http.StatusCreated
	if !res.Created {
		status = http.StatusOK
	}
	if res.Created && a.m != nil {
		a.m.Asked(project)
	}
	writeJSON(w, status, struct {
		*domain.Question
		Message string `json:"message"`
	}{public(res.Question), res.Message})
	return nil
}

func (a *API) list(w http.ResponseWriter, r *http.Request, p Principal) error {
	status := domain.Status(r.URL.Query().Get("status"))
	switch status {
	case "", domain.StatusPending, domain.StatusAnswered, domain.StatusCancelled, domain.StatusExpired:
	default:
		return &domain.Error{Code: domain.EInvalid, Message: "invalid status filter",
			Details: []domain.Detail{{Field: "status", Problem: "one of pending, answered, cancelled, expired"}}}
	}
	limit := lifecycle.DefaultListLimit
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > lifecycle.MaxListLimit {
			return &domain.Error{Code: domain.EInvalid, Message: "invalid limit",
				Details: []domain.Detail{{Field: "limit", Problem: fmt.Sprintf("a whole number from 1 to %d", lifecycle.MaxListLimit)}}}
		}
		limit = n
	}
	page, err := a.store.ListPage(r.Context(), r.PathValue("p"), lifecycle.ListQuery{Status: status,
		Cursor: r.URL.Query().Get("cursor"), Limit: limit})
	if err != nil {
		return err
	}
	// next_cursor is null on the last page; a page may hold fewer than
	// limit (another agent's questions are not shown) and still have one.
	var next *string
	if page.Next != "" {
		next = &page.Next
	}
	writeJSON(w, http.StatusOK, map[string]any{"questions": visible(page.Questions, p), "next_cursor": next})
	return nil
}

// pending reads every pending question of a project, page by page,
// oldest first.
func (a *API) pending(ctx context.Context, project string) ([]*domain.Question, error) {
	var out []*domain.Question
	q := lifecycle.ListQuery{Status: domain.StatusPending, Limit: lifecycle.MaxListLimit}
	for {
		page, err := a.store.ListPage(ctx, project, q)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Questions...)
		if q.Cursor = page.Next; q.Cursor == "" {
			return out, nil
		}
	}
}

func (a *API) get(w http.ResponseWriter, r *http.Request, p Principal) error {
	q, err := a.question(r, p)
	if err != nil {
		return err
	}
	traceHeader(w, q)
	writeJSON(w, http.StatusOK, public(q))
	return nil
}

// traceHeader gives the agent the question's traceparent, so the run
// that reads the answer continues the question's trace.
func traceHeader(w http.ResponseWriter, q *domain.Question) {
	if q != nil && tracing.Valid(q.TraceParent) {
		w.Header().Set("traceparent", q.TraceParent)
	}
}

func (a *API) wait(w http.ResponseWriter, r *http.Request, p Principal) error {
	q, err := a.question(r, p)
	if err != nil {
		return err
	}
	timeout := 25 * time.Second
	if s := r.URL.Query().Get("timeout"); s != "" {
		d, err := domain.ParseDuration(s)
		if err != nil || d < 0 {
			return &domain.Error{Code: domain.EInvalid, Message: "invalid timeout",
				Details: []domain.Detail{{Field: "timeout", Problem: "a duration such as 25s, at most 120s"}}}
		}
		timeout = min(d, MaxWait)
	}
	if !q.Status.Final() && timeout > 0 && a.drainCtx.Err() == nil {
		if pk := a.parker(); pk != nil && pk.park(w, r, q.ProjectID, q.ID, timeout) {
			return nil // answered by the parker
		}
	}
	admit.LongLived(r.Context()) // it waits here: its connection's place goes to the next
	// Shutdown drains long-polls: draining cancels this wait. AfterFunc
	// costs no goroutine per waiter while nothing happens.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(a.drainCtx, cancel)
	defer stop()
	q, err = a.router.Wait(ctx, r.PathValue("p"), r.PathValue("id"), timeout)
	if err != nil && ctx.Err() != nil && r.Context().Err() == nil {
		q, err = a.store.Get(r.Context(), r.PathValue("p"), r.PathValue("id"))
	}
	if err != nil {
		return err
	}
	traceHeader(w, q)
	writeJSON(w, http.StatusOK, public(q))
	return nil
}

func (a *API) respond(w http.ResponseWriter, r *http.Request, p Principal) error {
	if p.Agent != nil {
		return domain.Errorf(domain.EForbidden, "agent tokens may not answer questions; use an operator token")
	}
	q, err := a.question(r, p)
	if err != nil {
		return err
	}
	var req domain.RespondRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	who, err := respondent(p, req.RespondedBy)
	if err != nil {
		return err
	}
	if who.Via != "" {
		// A relayed person passes the same responders check as their own
		// click: the chat adapter fills in their groups.
		who = a.router.ResolvePerson(r.Context(), q, who)
	}
	q, err = a.router.AnswerAtOnce(r.Context(), q, req, who)
	if err != nil {
		return err
	}
	run := q.RunID
	if q.ResumedRunID != "" {
		run = q.ResumedRunID
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"id": q.ID, "status": string(q.Status), "run_id": run})
	return nil
}

func (a *API) cancel(w http.ResponseWriter, r *http.Request, p Principal) error {
	q, err := a.question(r, p)
	if err != nil {
		return err
	}
	var body struct {
		Reason string `json:"reason"`
		Note   string `json:"note"`
	}
	if r.ContentLength != 0 {
		if err := decode(r, &body); err != nil {
			return err
		}
	}
	reason := body.Reason
	if reason == "" {
		reason = domain.CancelUser
		if p.Agent != nil {
			reason = domain.CancelAgent
		}
	}
	var bad []domain.Detail
	if reason != domain.CancelUser && reason != domain.CancelAgent {
		bad = append(bad, domain.Detail{Field: "reason", Problem: "user (a person dismissed it) or agent (the runtime withdrew it); put free text in note"})
	}
	note := strings.Join(strings.Fields(body.Note), " ") // one line on every copy
	if msg := domain.TextProblem(note); msg != "" {
		bad = append(bad, domain.Detail{Field: "note", Problem: msg})
	}
	if n := utf8.RuneCountInString(note); n > domain.MaxCancelNote {
		bad = append(bad, domain.Detail{Field: "note", Problem: fmt.Sprintf("at most %d characters (this one has %d)", domain.MaxCancelNote, n)})
	}
	if len(bad) > 0 {
		return &domain.Error{Code: domain.EInvalid, Message: "invalid cancel request", Details: bad}
	}
	var who *domain.Person
	switch {
	case p.Operator != nil:
		who = &domain.Person{Platform: "api", ID: p.Operator.ID, Name: p.Operator.ID}
	case p.Agent != nil:
		who = &domain.Person{Platform: "agent", ID: p.Agent.ID}
	}
	if reason == domain.CancelAgent {
		who = nil
	}
	final, err := a.router.CancelWithNote(r.Context(), q.ProjectID, q.ID, reason, note, who)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, public(final))
	return nil
}

// history lists the earlier answers to what a question asks (the same
// agent, the same items), newest first, among the records the caller may
// read.
func (a *API) history(w http.ResponseWriter, r *http.Request, p Principal) error {
	q, err := a.question(r, p)
	if err != nil {
		return err
	}
	limit := 10
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			return &domain.Error{Code: domain.EInvalid, Message: "invalid limit",
				Details: []domain.Detail{{Field: "limit", Problem: "a whole number from 1 to 100"}}}
		}
		limit = n
	}
	h, err := a.router.History(r.Context(), q, limit, p.owns)
	if err != nil {
		return err
	}
	if h == nil {
		h = []domain.PastAnswer{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"question_id": q.ID, "history": h})
	return nil
}
