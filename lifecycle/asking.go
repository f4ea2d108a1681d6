package lifecycle

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/tracing"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"
)

// Ask validates and stores a question, posts it to its targets and returns
// the record. agentRoute is the asking agent's default route, if any.
func (r *Router) Ask(ctx context.Context, project string, req *domain.AskRequest, agentRoute string) (AskResult, error) {
	q, route, timeout, err := r.build(ctx, req, agentRoute)
	if err != nil {
		return AskResult{}, err
	}
	if !r.track() {
		return AskResult{}, errClosing
	}
	defer r.done()
	return r.create(ctx, project, q, route, timeout)
}

// build validates an ask against its route and the bridge's defaults and
// returns the question to create, its route (nil: none) and its timeout.
func (r *Router) build(ctx context.Context, req *domain.AskRequest, agentRoute string) (*domain.Question, *domain.Route, time.Duration, error) {
	def := domain.AskDefaults{Timeout: r.cfg.DefaultTimeout, CheckResumeURL: r.cfg.CheckResumeURL}
	routeName := req.Route
	if routeName == "" {
		routeName = agentRoute
	}
	var route *domain.Route
	if routeName != "" {
		rt, ok := r.routes[routeName]
		if !ok {
			return nil, nil, 0, &domain.Error{Code: domain.EInvalid, Message: "the question is not valid",
				Details: []domain.Detail{{Field: "route", Problem: fmt.Sprintf("no route named %q in the configuration", routeName)}}}
		}
		route = &rt
	} else if len(req.Targets) == 0 && r.def != nil {
		route = r.def
	}
	if route != nil {
		def.Targets, def.Responders = route.Targets, route.Responders
		if route.Timeout > 0 {
			def.Timeout = route.Timeout
		}
		def.ApprovalsRequired, def.OnTimeout, def.Escalation = route.ApprovalsRequired, route.OnTimeout, route.Escalation
		req.Route = route.Name
	}
	_, vspan := r.tracer.Start(ctx, "askbridge.validate")
	q, timeout, err := domain.BuildQuestion(req, def, r.cfg.HasWebhookSecret(req.AgentID))
	endSpan(vspan, err)
	if err != nil {
		return nil, nil, 0, err
	}
	if err := r.checkPlatforms(q.Targets); err != nil {
		return nil, nil, 0, err
	}
	if q.Kind == domain.KindApproval {
		q.BatchWindow = r.cfg.BatchWindow
		if route != nil && route.BatchWindow > 0 {
			q.BatchWindow = route.BatchWindow
		}
	}
	return q, route, timeout, nil
}

// create stores a question build made, posts it and reports the outcome;
// the caller tracks it (r.track).
func (r *Router) create(ctx context.Context, project string, q *domain.Question, route *domain.Route, timeout time.Duration) (AskResult, error) {
	res, publish, err := r.stored(ctx, project, q, route, timeout)
	if err != nil || publish == nil {
		return res, err
	}
	return publish(), nil
}

// stored stores a question build made and returns either the outcome (a
// re-attach, an approval decided by rule: nothing to post) or, with
// publish set, the stored question and what posts it and reports the
// outcome.
// AskBatch stores every call of a batch before it posts any, so the
// batch's first message already holds them all.
func (r *Router) stored(ctx context.Context, project string, q *domain.Question, route *domain.Route, timeout time.Duration) (AskResult, func() AskResult, error) {
	now := r.clock.Now().UTC()
	q.ID = domain.NewQuestionID(project)
	q.ProjectID = project
	if q.RunID == "" {
		q.RunID = "run-" + uuid.NewString()
	}
	q.CreatedAt, q.UpdatedAt, q.ExpiresAt = now, now, now.Add(timeout)
	if q.Kind == domain.KindQuestion {
		r.withHistory(ctx, q, route)
	}
	q.TraceParent, q.TraceState = tracing.Carrier(ctx)
	rule := r.autoRule(ctx, project, q, route)
	sctx, sspan := r.tracer.Start(ctx, "askbridge.store", trace.WithAttributes(attrQuestion.String(q.ID)))
	res, err := r.store.Create(sctx, q)
	endSpan(sspan, err)
	if err != nil {
		return AskResult{}, nil, err
	}
	if res.Superseded != nil {
		r.afterTransition(res.Superseded)
	}
	if res.Reattached {
		return AskResult{Question: res.Question, Message: r.message(res.Question, true)}, nil, nil
	}
	q = res.Question
	if rule != "" {
		if final, err := r.autoApprove(ctx, q, rule); err == nil {
			return AskResult{Question: final, Created: true, Message: fmt.Sprintf("Approved at once by the auto-allow rule %s; nobody was asked.", rule)}, nil, nil
		}
	}
	return AskResult{Question: q, Created: true}, func() AskResult {
		r.post(ctx, q, q.Targets)
		r.pageOnAsk(ctx, q, route)
		if fresh, err := r.store.Get(ctx, project, q.ID); err == nil {
			q = fresh
		}
		r.mentionHolders(q, 0)
		return AskResult{Question: q, Created: true, Message: r.message(q, false)}
	}, nil
}

// post posts a copy on each target in parallel and records each on the
// question and in the audit trail. A question that cannot be posted
// anywhere is reported loudly.
func (r *Router) post(ctx context.Context, q *domain.Question, targets []domain.Target) {
	if len(targets) == 0 {
		return
	}
	var wg sync.WaitGroup
	results := make([]domain.Target, len(targets))
	for i, t := range targets {
		if _, ok := r.channels[t.Platform]; !ok {
			results[i] = t
			results[i].Error = t.Platform + " is not configured on this bridge"
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.PostTimeout)
			defer cancel()
			pctx, span := r.tracer.Start(pctx, "askbridge.post", trace.WithSpanKind(trace.SpanKindClient),
				trace.WithAttributes(attrPlatform.String(t.Platform), attrQuestion.String(q.ID)))
			var posted domain.Target
			var err error
			if bc := r.batchChannel(q, t); bc != nil {
				posted, err = r.postBatched(pctx, bc, q, t)
			} else {
				posted, err = r.channels[t.Platform].Post(pctx, q, t)
			}
			endSpan(span, err)
			if err != nil {
				r.log.Error("posting question failed", "question", q.ID, "project", q.ProjectID,
					"platform", t.Platform, "channel", t.Channel, "err", err)
				posted = t
				posted.Error = err.Error()
			}
			results[i] = posted
		}()
	}
	wg.Wait()
	failed := 0
	for _, t := range results {
		if t.Error != "" {
			failed++
		}
		if err := r.store.AttachCopy(context.WithoutCancel(ctx), q.ProjectID, q.ID, t); err != nil {
			r.log.Error("recording posted copy failed", "question", q.ID, "err", err)
		}
		entry := domain.AuditEntry{Type: "posted", Detail: domain.TargetName(t)}
		if t.Error != "" {
			entry = domain.AuditEntry{Type: "post_failed", Detail: domain.TargetName(t) + ": " + t.Error}
		}
		r.audit(context.WithoutCancel(ctx), q, entry)
	}
	if failed == len(results) {
		r.log.Error("question could not be posted to any target", "question", q.ID, "project", q.ProjectID)
		_ = r.store.AppendEvent(context.WithoutCancel(ctx), domain.Event{Type: domain.EventPostFailed, ProjectID: q.ProjectID,
			QuestionID: q.ID, RunID: q.RunID, At: r.clock.Now().UTC()})
	}
}

func (r *Router) message(q *domain.Question, reattached bool) string {
	short := domain.ShortID(q.ID)
	if short != q.ID {
		short += "…"
	}
	place := q.Places()
	if place != "the web inbox" {
		place += " and the web inbox"
	}
	if reattached {
		switch q.Status {
		case domain.StatusAnswered:
			return fmt.Sprintf("Question %s was already answered by %s.", short, domain.PersonName(q.RespondedBy))
		case domain.StatusPending:
			return fmt.Sprintf("Question %s is still waiting for an answer in %s (expires in %s).", short, place, domain.HumanDuration(q.ExpiresAt.Sub(r.clock.Now())))
		}
		return fmt.Sprintf("Question %s is %s.", short, q.Status)
	}
	mode := "this run will pause until someone answers"
	if q.WebhookMode() {
		mode = "this run can pause; it resumes through the webhook when someone answers"
	}
	msg := fmt.Sprintf("Question %s sent to %s; %s (expires in %s).", short, place, mode, domain.HumanDuration(q.ExpiresAt.Sub(q.CreatedAt)))
	for _, t := range q.Targets {
		if t.Error != "" {
			msg += fmt.Sprintf(" Posting to %s failed: %s.", domain.TargetName(t), t.Error)
		}
	}
	return msg
}

// AskResult is the outcome of Ask.
type AskResult struct {
	Question *domain.Question
	Created  bool   // false: an earlier question was re-attached
	Message  string // a sentence for the agent's tool result
}

// checkPlatforms refuses targets on a platform no channel serves; the
// configured names are listed only when one is missing.
func (r *Router) checkPlatforms(targets []domain.Target) error {
	for _, t := range targets {
		if _, ok := r.channels[t.Platform]; !ok {
			return domain.CheckTargetPlatforms(targets, slices.Collect(maps.Keys(r.channels)))
		}
	}
	return nil
}

// History returns the earlier answers to what q asks (the same agent, the
// same item texts and option labels), newest first, at most limit, from
// the records of q's project still within retention, found through the
// store's history index. allowed, if set, keeps only the records a caller
// may read.
func (r *Router) History(ctx context.Context, q *domain.Question, limit int, allowed func(*domain.Question) bool) ([]domain.PastAnswer, error) {
	n := limit
	if allowed != nil {
		n = 4 * limit // room for what the caller may not read
	}
	return r.history(ctx, q, n, limit, allowed)
}

func (r *Router) history(ctx context.Context, q *domain.Question, read, limit int, allowed func(*domain.Question) bool) ([]domain.PastAnswer, error) {
	all, err := r.store.History(ctx, q.ProjectID, domain.HistoryKey(q.AgentID, q.Questions), read)
	if err != nil {
		return nil, err
	}
	var candidates []*domain.Question
	for _, c := range all {
		if allowed == nil || allowed(c) {
			candidates = append(candidates, c)
		}
	}
	return domain.HistoryOf(q, candidates, limit), nil
}

// withHistory sets what q shows of its history, and, on a route that asks
// for it, recommends the most frequent earlier answer.
func (r *Router) withHistory(ctx context.Context, q *domain.Question, route *domain.Route) {
	h, err := r.history(ctx, q, domain.HistoryShown, domain.HistoryShown, nil)
	if err != nil {
		r.log.Warn("reading the question's history failed; asking without it", "question", q.ID, "err", err)
		return
	}
	if len(h) == 0 {
		return
	}
	if route != nil && route.SuggestFromHistory {
		domain.SuggestFromHistory(q, h)
	}
	q.History = make([]domain.PastAnswer, len(h))
	for i, p := range h {
		q.History[i] = p.Brief()
	}
}
