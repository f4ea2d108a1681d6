package lifecycle

import (
	"context"
	"fmt"
	"time"

	"github.com/askbridge/askbridge/domain"

	"github.com/google/uuid"
)

// Locate returns the project of a question id.
func (r *Router) Locate(ctx context.Context, id string) (string, error) {
	return r.store.Locate(ctx, id)
}

// ResolvePerson fills in p's groups through the channel of p's platform,
// when it can (see PersonResolver); otherwise p is returned unchanged and
// only responders naming p's user id admit them.
func (r *Router) ResolvePerson(ctx context.Context, q *domain.Question, p domain.Person) domain.Person {
	if pr, ok := r.resolvers[p.Platform]; ok {
		return pr.ResolvePerson(ctx, q, p)
	}
	return p
}

// Check applies the responders policy (Permit) for a surface that must
// refuse someone before it has an answer (a chat click that would open a
// modal, a thread reply). A refusal is recorded in the audit trail, exactly
// as Answer records it.
func (r *Router) Check(ctx context.Context, q *domain.Question, who domain.Person) error {
	if err := r.permit(ctx, q, &who, ""); err != nil {
		_, span := r.startInteraction(ctx, q, who)
		result, reason := r.interacted(who.Platform, q, err, false)
		span.SetAttributes(attrResult.String(result), attrReason.String(reason))
		endSpan(span, err)
		return err
	}
	return nil
}

// Answer records who's answer to a question, exactly once. It returns the
// final record. Errors: ENotFound, ENotAllowed, EInvalidAnswer, the
// StatusError of a question no longer pending, ERunNotPaused.
func (r *Router) Answer(ctx context.Context, project, id string, req domain.RespondRequest, who domain.Person) (*domain.Question, error) {
	q, err := r.store.Get(ctx, project, id)
	if err != nil {
		return nil, err
	}
	return r.AnswerRead(ctx, q, req, who)
}

// AnswerRead is Answer for a caller that has just read q itself (a click
// checked against q, the API's respond): it saves reading it again. The
// store's transition still refuses a question that is no longer pending, so
// a record read a moment ago is safe; one read long before (a chat modal
// left open) should go through Answer.
//
// Webhook mode: a person's answer can arrive before the agent's runtime
// reports that its run has paused. AnswerRead then waits for the pause, up
// to RouterConfig.PauseWait, and records the answer once it comes; only
// after that does it return ERunNotPaused. (The API's respond uses
// AnswerAtOnce: a runtime gets 409 run_not_paused at once and retries.)
func (r *Router) AnswerRead(ctx context.Context, q *domain.Question, req domain.RespondRequest, who domain.Person) (*domain.Question, error) {
	return r.answer(ctx, q, req, who, r.cfg.PauseWait)
}

// AnswerAtOnce is AnswerRead without waiting for a webhook-mode run to
// pause: ERunNotPaused comes back at once (the API's respond, whose caller
// retries).
func (r *Router) AnswerAtOnce(ctx context.Context, q *domain.Question, req domain.RespondRequest, who domain.Person) (*domain.Question, error) {
	return r.answer(ctx, q, req, who, 0)
}

func (r *Router) answer(ctx context.Context, q *domain.Question, req domain.RespondRequest, who domain.Person, pauseWait time.Duration) (out *domain.Question, outErr error) {
	ctx, span := r.startInteraction(ctx, q, who)
	defer func() {
		result, reason := r.interacted(who.Platform, out, outErr, q.ApprovalsRequired > 1)
		span.SetAttributes(attrResult.String(result), attrReason.String(reason))
		endSpan(span, outErr)
	}()
	if q.Status != domain.StatusPending {
		return q, domain.StatusError(q)
	}
	_, rspan := r.tracer.Start(ctx, "askbridge.responders")
	err := r.permit(ctx, q, &who, "")
	endSpan(rspan, err)
	if err != nil {
		return q, err
	}
	if err := domain.PrepareApproval(q, &req, !r.routes[q.Route].NoEdit); err != nil {
		return q, err
	}
	ans, err := domain.ParseAnswer(q, req)
	if err != nil {
		return q, err
	}
	if err := domain.DecideApproval(q, req, &ans, &who); err != nil {
		return q, err
	}
	tr := Transition{To: domain.StatusAnswered, Answer: &ans, By: &who}
	record := func() (*domain.Question, error) {
		ctx, span := r.tracer.Start(ctx, "askbridge.answer")
		if q.ApprovalsRequired > 1 {
			final, err := r.vote(ctx, q, tr)
			endSpan(span, err)
			return final, err
		}
		final, err := r.transition(ctx, q, tr)
		endSpan(span, err)
		if err == nil {
			r.auditApproval(ctx, final, q, &ans)
		}
		return final, err
	}
	if !q.WebhookMode() {
		return record()
	}
	tr.RequirePausedRun = true
	final, err := record()
	if domain.ErrorCode(err) != domain.ERunNotPaused || pauseWait <= 0 {
		return final, err
	}
	return r.whenPaused(ctx, q, pauseWait, record)
}

// pauseRecheck is how often whenPaused tries again without a wake-up, and
// pauseRetrySpacing the least time between two tries on wake-ups (a busy
// project's events wake it often).
const (
	pauseRecheck      = 500 * time.Millisecond
	pauseRetrySpacing = 50 * time.Millisecond
)

// whenPaused retries record, which failed with ERunNotPaused, each time the
// project's event stream moves (the runtime's pause is an event, seen from
// any replica), until it succeeds, fails otherwise, or wait runs out.
func (r *Router) whenPaused(ctx context.Context, q *domain.Question, wait time.Duration, record func() (*domain.Question, error)) (*domain.Question, error) {
	wake, stop := r.store.Watch(q.ProjectID, "")
	defer stop()
	defer leaveWhileWaiting(ctx)()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	recheck := time.NewTicker(pauseRecheck)
	defer recheck.Stop()
	for {
		// The first try follows Watch, so a pause between the caller's try
		// and the watch is not missed.
		final, err := record()
		if domain.ErrorCode(err) != domain.ERunNotPaused {
			return final, err
		}
		select {
		case <-ctx.Done():
			return final, err
		case <-deadline.C:
			return final, err
		case <-recheck.C:
		case <-wake:
			select {
			case <-ctx.Done():
				return final, err
			case <-time.After(pauseRetrySpacing):
			}
		}
	}
}

// vote counts who's choice on an approval that needs several. The question
// resolves when ApprovalsRequired people chose the same option, or at the
// first vote for a veto option; until then every copy shows the tally.
func (r *Router) vote(ctx context.Context, q *domain.Question, tr Transition) (*domain.Question, error) {
	if !r.track() {
		return q, errClosing
	}
	defer r.done()
	it := q.Questions[0]
	label := tr.Answer.Selections[it.Question][0]
	o, ok := domain.MatchOption(it, label)
	if !ok {
		// A vote counts toward an option; free text cannot be tallied.
		return q, &domain.Error{Code: domain.EInvalidAnswer, Message: "this approval needs a vote for one of its options",
			Details: []domain.Detail{{Field: "answers[" + it.Question + "]", Problem: fmt.Sprintf("%q is not an option; choose one of the options", label)}}}
	}
	r.prepare(q, &tr)
	v := domain.Vote{By: *tr.By, Label: label, At: tr.At}
	final, resolved, err := r.store.Vote(ctx, q.ProjectID, q.ID, v, q.ApprovalsRequired, o.Veto, tr)
	if err != nil {
		return final, err
	}
	if resolved {
		r.afterTransition(final)
	} else {
		r.updateCopies(final)
	}
	return final, nil
}

// Cancel withdraws (reason agent) or dismisses (reason user) a question.
func (r *Router) Cancel(ctx context.Context, project, id, reason string, who *domain.Person) (*domain.Question, error) {
	return r.CancelWithNote(ctx, project, id, reason, "", who)
}

// CancelWithNote is Cancel with a free-text note kept on the record and
// shown on every copy.
func (r *Router) CancelWithNote(ctx context.Context, project, id, reason, note string, who *domain.Person) (*domain.Question, error) {
	q, err := r.store.Get(ctx, project, id)
	if err != nil {
		return nil, err
	}
	if q.Status != domain.StatusPending {
		return q, domain.StatusError(q)
	}
	if who != nil && reason == domain.CancelUser {
		p := *who
		if err := r.permit(ctx, q, &p, "dismiss: "); err != nil {
			return q, err
		}
	}
	return r.transition(ctx, q, Transition{To: domain.StatusCancelled, CancelReason: reason, CancelNote: note, By: who})
}

// transition applies tr to q, adding the continuation run and the resume
// delivery webhook mode needs, then finishes every copy in the background.
func (r *Router) transition(ctx context.Context, q *domain.Question, tr Transition) (*domain.Question, error) {
	if !r.track() {
		return q, errClosing
	}
	defer r.done()
	r.prepare(q, &tr)
	final, err := r.store.Transition(ctx, q.ProjectID, q.ID, tr)
	if err != nil {
		return final, err
	}
	r.afterTransition(final)
	return final, nil
}

// prepare stamps a transition and adds what webhook mode needs: the
// continuation run and the resume delivery, created in the same step.
func (r *Router) prepare(q *domain.Question, tr *Transition) {
	tr.At = r.clock.Now().UTC()
	tr.Retention = r.cfg.Retention
	if q.WebhookMode() && (tr.To == domain.StatusAnswered || tr.To == domain.StatusExpired || (tr.To == domain.StatusCancelled && tr.CancelReason == domain.CancelUser)) {
		tr.ContinuationRunID = uuid.NewString()
		tr.DeliveryID = uuid.NewString()
	}
}

// Audit appends e to q's audit trail (an adapter noting how an answer
// came in); a failure is logged, never fatal.
func (r *Router) Audit(ctx context.Context, q *domain.Question, e domain.AuditEntry) {
	r.audit(ctx, q, e)
}

// audit appends to the audit trail; a failure is logged, never fatal.
func (r *Router) audit(ctx context.Context, q *domain.Question, e domain.AuditEntry) {
	e.ProjectID, e.QuestionID, e.RunID = q.ProjectID, q.ID, q.RunID
	if e.At.IsZero() {
		e.At = r.clock.Now().UTC()
	}
	if err := r.store.AppendAudit(context.WithoutCancel(ctx), e); err != nil {
		r.log.Warn("writing the audit trail failed", "question", q.ID, "type", e.Type, "err", err)
	}
}

func (r *Router) afterTransition(q *domain.Question) {
	r.traceWait(q)
	for _, o := range r.cfg.Observers {
		o.Transitioned(q)
	}
	r.resolvePages(q)
	r.finishCopies(q)
}
