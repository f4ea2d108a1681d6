package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/admit"
	"github.com/askbridge/askbridge/internal/tracing"
	"github.com/askbridge/askbridge/lifecycle"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Batches of approvals (domain/batch.go): several tool calls of one run
// asked in one request, waited for together, decided at once.

func publicBatch(b *domain.Batch) *domain.Batch {
	out := *b
	out.Questions = make([]*domain.Question, len(b.Questions))
	for i, q := range b.Questions {
		out.Questions[i] = public(q)
	}
	return &out
}

// asker checks who may ask as which agent, as ask does, and returns the
// agent id to ask as and the agent's default route.
func (a *API) asker(p Principal, agentID string) (string, string, error) {
	switch {
	case p.Agent != nil:
		if agentID != "" && agentID != p.Agent.ID {
			return "", "", &domain.Error{Code: domain.EForbidden, Message: "this token belongs to another agent",
				Details: []domain.Detail{{Field: "agent_id", Problem: fmt.Sprintf("must be %q or empty", p.Agent.ID)}}}
		}
		if !p.Agent.HasTool("ask_user") {
			return "", "", domain.Errorf(domain.EToolNotEnabled, "agent %s does not have the ask_user tool: add ask_user to its tools in the configuration", p.Agent.ID)
		}
		return p.Agent.ID, p.Agent.Route, nil
	case p.Operator != nil:
		if agentID == "" {
			agentID = "agent"
		}
		if _, ok := a.auth.AgentByID(agentID); ok {
			return "", "", &domain.Error{Code: domain.EForbidden, Message: fmt.Sprintf("agent_id %s is a configured agent: only its own token may ask as it", agentID),
				Details: []domain.Detail{{Field: "agent_id", Problem: "use an agent id that is not configured, or the agent's own token"}}}
		}
		return agentID, "", nil
	}
	if agentID == "" {
		agentID = "agent"
	}
	return agentID, "", nil
}

// askBatch asks several approvals of one run as one batch.
func (a *API) askBatch(w http.ResponseWriter, r *http.Request, p Principal) error {
	var req domain.BatchRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	for i := range req.Targets {
		req.Targets[i] = req.Targets[i].Resolved()
	}
	agentID, agentRoute, err := a.asker(p, req.AgentID)
	if err != nil {
		return err
	}
	req.AgentID = agentID
	project := r.PathValue("p")
	ctx, span := a.tracer.Start(tracing.Extract(r.Context(), r.Header), "askbridge.ask_batch",
		trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attribute.String("askbridge.project", project)))
	res, err := a.router.AskBatch(ctx, project, &req, agentRoute)
	if err != nil {
		span.SetStatus(codes.Error, domain.ErrorCode(err))
		span.End()
		return err
	}
	span.End()
	if a.m != nil {
		for range res.Created {
			a.m.Asked(project)
		}
	}
	b, err := a.router.Batch(r.Context(), project, res.BatchID)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if res.Created == 0 {
		status = http.StatusOK
	}
	// The calls of this request, in its order (a call asked before may
	// belong to another batch), then the batch as a whole.
	calls := make([]*domain.Question, len(res.Questions))
	for i, q := range res.Questions {
		calls[i] = public(q)
	}
	writeJSON(w, status, struct {
		*domain.Batch
		Calls   []*domain.Question `json:"calls"`
		Message string             `json:"message"`
	}{publicBatch(b), calls, res.Message})
	return nil
}

// batch loads a batch p may see; another project's or agent's is not
// found.
func (a *API) batch(r *http.Request, p Principal) (*domain.Batch, error) {
	b, err := a.router.Batch(r.Context(), r.PathValue("p"), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	if len(b.Questions) == 0 || !p.owns(b.Questions[0]) {
		return nil, domain.Errorf(domain.ENotFound, "no batch %s in project %s", r.PathValue("id"), r.PathValue("p"))
	}
	return b, nil
}

func (a *API) getBatch(w http.ResponseWriter, r *http.Request, p Principal) error {
	b, err := a.batch(r, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, publicBatch(b))
	return nil
}

// waitBatch long-polls until every call of the batch is decided or the
// timeout passes (the batch is returned either way).
func (a *API) waitBatch(w http.ResponseWriter, r *http.Request, p Principal) error {
	if _, err := a.batch(r, p); err != nil {
		return err
	}
	timeout, err := waitTimeout(r)
	if err != nil {
		return err
	}
	admit.LongLived(r.Context()) // it waits here: its connection's place goes to the next
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(a.drainCtx, cancel)
	defer stop()
	b, err := a.router.WaitBatch(ctx, r.PathValue("p"), r.PathValue("id"), timeout)
	if err != nil && ctx.Err() != nil && r.Context().Err() == nil {
		b, err = a.router.Batch(r.Context(), r.PathValue("p"), r.PathValue("id"))
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, publicBatch(b))
	return nil
}

// respondBatch decides every still-pending call of a batch at once.
func (a *API) respondBatch(w http.ResponseWriter, r *http.Request, p Principal) error {
	if p.Agent != nil {
		return domain.Errorf(domain.EForbidden, "agent tokens may not answer questions; use an operator token")
	}
	b, err := a.batch(r, p)
	if err != nil {
		return err
	}
	var req domain.BatchRespondRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	who, err := respondent(p, req.RespondedBy)
	if err != nil {
		return err
	}
	if who.Via != "" {
		who = a.router.ResolvePerson(r.Context(), b.Questions[0], who)
	}
	out, err := a.router.DecideBatch(r.Context(), r.PathValue("p"), b.ID, req, who, false)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, batchOutcome(out))
	return nil
}

func batchOutcome(out lifecycle.BatchOutcome) any {
	nonNil := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	refused := out.Refused
	if refused == nil {
		refused = []lifecycle.CallRefusal{}
	}
	return struct {
		*domain.Batch
		Decided []string                `json:"decided"`
		Voted   []string                `json:"voted"`
		Already []string                `json:"already"`
		Refused []lifecycle.CallRefusal `json:"refused"`
	}{publicBatch(out.Batch), nonNil(out.Decided), nonNil(out.Voted), nonNil(out.Already), refused}
}

// waitTimeout reads a long-poll's timeout parameter (default 25 s, at
// most MaxWait).
func waitTimeout(r *http.Request) (time.Duration, error) {
	timeout := 25 * time.Second
	if s := r.URL.Query().Get("timeout"); s != "" {
		d, err := domain.ParseDuration(s)
		if err != nil || d < 0 {
			return 0, &domain.Error{Code: domain.EInvalid, Message: "invalid timeout",
				Details: []domain.Detail{{Field: "timeout", Problem: "a duration such as 25s, at most 120s"}}}
		}
		timeout = min(d, MaxWait)
	}
	return timeout, nil
}
