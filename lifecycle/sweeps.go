package lifecycle

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/askbridge/askbridge/domain"

	"go.opentelemetry.io/otel/trace"
)

// ExpireDue expires every pending question past its deadline. Safe to run
// on every replica: each question expires exactly once.
func (r *Router) ExpireDue(ctx context.Context) (int, error) {
	refs, err := r.store.Due(ctx, r.clock.Now(), 500)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ref := range refs {
		q, err := r.store.Get(ctx, ref.ProjectID, ref.ID)
		if err != nil {
			continue
		}
		if q.Status != domain.StatusPending {
			continue
		}
		tr := Transition{To: domain.StatusExpired}
		if q.OnTimeout != nil {
			req := domain.RespondRequest{Response: &q.OnTimeout.Answer}
			if q.OnTimeout.UseDefaults {
				req, _ = domain.DefaultsRequest(q.Questions)
			}
			if ans, err := domain.ParseAnswer(q, req); err == nil {
				by := &domain.Person{Platform: "system", ID: "timeout", Name: "system:timeout"}
				_ = domain.DecideApproval(q, domain.RespondRequest{}, &ans, by)
				tr = Transition{To: domain.StatusAnswered, Answer: &ans, Defaulted: true, By: by}
			}
		}
		if _, err := r.transition(ctx, q, tr); err == nil {
			n++
		} else if domain.ErrorCode(err) == domain.EInternal {
			r.log.Error("expiring question failed", "question", ref.ID, "err", err)
		}
	}
	return n, nil
}

// EscalateDue runs every escalation step that has come due: a reminder on
// every copy, and/or a copy on further targets with further responders.
// Safe on every replica: each step runs once.
func (r *Router) EscalateDue(ctx context.Context) (int, error) {
	now := r.clock.Now().UTC()
	refs, err := r.store.DueEscalations(ctx, now, 500)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ref := range refs {
		q, err := r.store.Get(ctx, ref.ProjectID, ref.ID)
		if err != nil || q.Status != domain.StatusPending || q.EscalationLevel >= len(q.Escalation) {
			continue
		}
		level := q.EscalationLevel
		step := q.Escalation[level]
		if q.CreatedAt.Add(time.Duration(step.After)).After(now) {
			continue // another replica ran the due step since the list was read: this one is not due yet
		}
		var next time.Time
		if level+1 < len(q.Escalation) {
			next = q.CreatedAt.Add(time.Duration(q.Escalation[level+1].After))
		}
		ran, err := r.runStep(ctx, q, level, step, next, now)
		if err != nil {
			return n, err
		}
		if ran {
			n++
		}
	}
	return n, nil
}

// runStep runs escalation step level of q unless another replica already
// did.
func (r *Router) runStep(ctx context.Context, q *domain.Question, level int, step domain.EscalationStep, next, now time.Time) (bool, error) {
	if !r.track() {
		return false, errClosing
	}
	defer r.done()
	ok, err := r.store.Escalate(ctx, q.ProjectID, q.ID, level, next, domain.DescribeStep(step), now)
	if err != nil || !ok {
		return false, nil // another replica ran this step, or the store failed (retried next sweep)
	}
	r.stepped(q.ProjectID, StepEscalation)
	ctx, span := r.tracer.Start(questionTrace(ctx, q), "askbridge.escalation", trace.WithAttributes(attrQuestion.String(q.ID)))
	defer span.End()
	if fresh, err := r.store.Get(ctx, q.ProjectID, q.ID); err == nil {
		q = fresh
	}
	r.refreshGroups(q) // a hand-off since the last step counts from now on
	if step.Remind {
		r.remind(ctx, q)
	}
	if (len(step.Targets) > 0 || step.Page != nil) && r.pageAcknowledged(ctx, q) {
		r.audit(ctx, q, domain.AuditEntry{Type: "escalation.held", Detail: "step " + strconv.Itoa(level+1) +
			" (" + domain.DescribeStep(step) + ") held: the page was acknowledged"})
		return true, nil
	}
	r.pageOnStep(ctx, q, step, level)
	if len(step.Targets) > 0 {
		r.post(ctx, q, step.Targets)
		if fresh, err := r.store.Get(ctx, q.ProjectID, q.ID); err == nil {
			q = fresh
		}
	}
	if step.Responders != nil {
		r.updateCopies(q) // copies name who may answer now
	}
	r.mentionHolders(q, level+1) // whoever is on call now, after a hand-off too
	return true, nil
}

// Sweep runs ExpireDue, EscalateDue and the store's Trim every interval
// until ctx ends.
func (r *Router) Sweep(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := r.ExpireDue(ctx); err != nil && !errors.Is(err, context.Canceled) {
				r.log.Warn("deadline sweep failed", "err", err)
			}
			if _, err := r.EscalateDue(ctx); err != nil && !errors.Is(err, context.Canceled) {
				r.log.Warn("escalation sweep failed", "err", err)
			}
			if _, err := r.store.Trim(ctx, r.clock.Now()); err != nil && !errors.Is(err, context.Canceled) {
				r.log.Warn("retention sweep failed", "err", err)
			}
		}
	}
}
