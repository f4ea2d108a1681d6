package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// Batches of approvals (domain/batch.go): the approvals of one run asked
// close together, asked in one request or one by one, decided call by call
// or all at once.

// BatchResult is the outcome of AskBatch.
type BatchResult struct {
	// BatchID is the batch the calls asked anew joined (the batch of the
	// first call when every call had been asked before).
	BatchID string
	// Questions are the calls in the order of the request, as they are now
	// (a call asked before is its earlier record, whatever its batch).
	Questions []*domain.Question
	// Created counts the calls asked anew.
	Created int
	// Message is a sentence for the agent's tool result.
	Message string
}

// perCall are the fields of an ask that belong to one call of a batch
// request (approvals[i].…); the others are the batch's own.
var perCall = []string{"question", "questions", "header", "options", "action", "idempotency_key", "kind"}

// AskBatch asks the approvals of req as one batch: every call is validated
// before any is asked, then each is asked as Ask asks it (re-attaching a
// call asked before), the second and later ones joining the first's batch.
func (r *Router) AskBatch(ctx context.Context, project string, req *domain.BatchRequest, agentRoute string) (BatchResult, error) {
	asks, err := req.Asks()
	if err != nil {
		return BatchResult{}, err
	}
	type built struct {
		q       *domain.Question
		route   *domain.Route
		timeout time.Duration
	}
	bs := make([]built, len(asks))
	var bad []domain.Detail
	for i, a := range asks {
		q, route, timeout, err := r.build(ctx, a, agentRoute)
		var de *domain.Error
		if err != nil && (!errors.As(err, &de) || de.Code != domain.EInvalid) {
			return BatchResult{}, err // not about one call: subagent, forbidden, …
		}
		if err != nil {
			for _, d := range de.Details {
				if slices.ContainsFunc(perCall, func(f string) bool {
					return d.Field == f || strings.HasPrefix(d.Field, f+".") || strings.HasPrefix(d.Field, f+"[")
				}) {
					d.Field = fmt.Sprintf("approvals[%d].%s", i, d.Field)
				}
				if !slices.ContainsFunc(bad, func(x domain.Detail) bool { return reflect.DeepEqual(x, d) }) {
					bad = append(bad, d)
				}
			}
			continue
		}
		bs[i] = built{q, route, timeout}
	}
	if len(bad) > 0 {
		return BatchResult{}, &domain.Error{Code: domain.EInvalid, Message: "the batch is not valid", Details: bad}
	}
	if !r.track() {
		return BatchResult{}, errClosing
	}
	defer r.done()
	out := BatchResult{Questions: make([]*domain.Question, len(bs))}
	// Every call is stored before any is posted: the batch's first message
	// holds them all (a surface that shows a batch as one message posts it
	// once), and a call that fails to be asked leaves nothing posted half.
	publish := make([]func() AskResult, len(bs))
	for i, b := range bs {
		b.q.BatchID = out.BatchID // "" until a call is asked anew: then the others join its batch
		res, pub, err := r.stored(ctx, project, b.q, b.route, b.timeout)
		if err != nil {
			r.publishAll(out, publish)
			if i == 0 {
				return BatchResult{}, err
			}
			// The calls before were asked: the caller must learn of them,
			// and of the one that failed.
			return out, fmt.Errorf("asking approvals[%d] failed after %d were asked: %w", i, i, err)
		}
		publish[i] = pub
		out.Questions[i] = res.Question
		if res.Created {
			out.Created++
			if out.BatchID == "" {
				out.BatchID = res.Question.BatchID
			}
		}
	}
	r.publishAll(out, publish)
	if out.BatchID == "" {
		out.BatchID = out.Questions[0].BatchID
	}
	out.Message = r.batchMessage(out)
	return out, nil
}

// publishAll posts the calls stored and not posted yet, in order, and
// puts each as it now is in b.
func (r *Router) publishAll(b BatchResult, publish []func() AskResult) {
	for i, pub := range publish {
		if pub != nil {
			b.Questions[i] = pub().Question
		}
	}
}

func (r *Router) batchMessage(b BatchResult) string {
	q := b.Questions[0]
	place := q.Places()
	if place != "the web inbox" {
		place += " and the web inbox"
	}
	pending := 0
	for _, x := range b.Questions {
		if x.Status == domain.StatusPending {
			pending++
		}
	}
	short := domain.ShortID(b.BatchID)
	msg := fmt.Sprintf("Batch %s: %d approval(s) asked in %s", short, b.Created, place)
	if again := len(b.Questions) - b.Created; again > 0 {
		msg += fmt.Sprintf(", %d asked before", again)
	}
	if pending == 0 {
		return msg + "; every call is decided."
	}
	mode := "this run will pause until each call is decided"
	if q.WebhookMode() {
		mode = "each call resumes the run through the webhook when it is decided"
	}
	return fmt.Sprintf("%s; %d waiting, %s (expires in %s).", msg, pending, mode, domain.HumanDuration(q.ExpiresAt.Sub(r.clock.Now())))
}

// Batch returns a batch: the approvals of its run that belong to it, in
// the order they were asked. ENotFound if there is no such batch.
func (r *Router) Batch(ctx context.Context, project, id string) (*domain.Batch, error) {
	first, err := r.store.Get(ctx, project, id)
	if err != nil || first.BatchID != id {
		if err == nil || domain.ErrorCode(err) == domain.ENotFound {
			return nil, domain.Errorf(domain.ENotFound, "no batch %s in project %s", id, project)
		}
		return nil, err
	}
	qs, err := r.store.RunQuestions(ctx, project, first.RunID)
	if err != nil {
		return nil, err
	}
	b := domain.NewBatch(id, qs)
	if b == nil {
		return nil, domain.Errorf(domain.ENotFound, "no batch %s in project %s", id, project)
	}
	return b, nil
}

// WaitBatch blocks until every call of the batch is decided, ctx ends, or
// timeout passes, and returns the batch as it is then.
func (r *Router) WaitBatch(ctx context.Context, project, id string, timeout time.Duration) (*domain.Batch, error) {
	b, err := r.Batch(ctx, project, id)
	if err != nil || b.Pending == 0 || timeout <= 0 {
		return b, err
	}
	// A call may join the batch while it waits: the run's project is
	// watched, and the batch re-read on every change.
	wake, stop := r.store.Watch(project, "")
	defer stop()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	recheck := time.NewTicker(10 * time.Second)
	defer recheck.Stop()
	for {
		select {
		case <-ctx.Done():
			return b, ctx.Err()
		case <-timer.C:
			return r.Batch(context.WithoutCancel(ctx), project, id)
		case <-recheck.C:
		case <-wake:
		}
		fresh, err := r.Batch(ctx, project, id)
		if domain.ErrorCode(err) == domain.EUnavailable {
			continue
		}
		if err != nil || fresh.Pending == 0 {
			return fresh, err
		}
		b = fresh
	}
}

// BatchOutcome is what deciding a batch at once did, call by call.
type BatchOutcome struct {
	// Batch is the batch as it is after the decision.
	Batch *domain.Batch
	// Decided are the calls this decision decided.
	Decided []string
	// Voted are the calls that need several people's votes: this decision
	// counted as who's vote on each.
	Voted []string
	// Already are the calls decided before it: they keep their decision.
	Already []string
	// Refused are the calls left pending, and why.
	Refused []CallRefusal
}

// CallRefusal is a call a batch decision left pending.
type CallRefusal struct {
	ID      string `json:"id"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// DecideBatch decides every still-pending call of the batch (only those
// req names, when it names any) the same way: Allow all or Deny all.
// Each call is decided as its own answer would decide it — who may answer
// checked per call, recorded exactly once, audited, resumed to its own
// waiter or webhook — and a call decided already keeps its decision.
// wait: an answer to a webhook-mode call waits for the run to pause, as
// AnswerRead's does (else it is refused at once, as AnswerAtOnce's). The error is set when the decision
// decided nothing: ENotAllowed when who may decide none of the pending
// calls, EAlreadyAnswered when none was pending, EInvalidAnswer when none
// takes a batch decision; the outcome says what became of each call.
func (r *Router) DecideBatch(ctx context.Context, project, id string, req domain.BatchRespondRequest, who domain.Person, wait bool) (BatchOutcome, error) {
	var pauseWait time.Duration
	if wait {
		pauseWait = r.cfg.PauseWait
	}
	if err := req.Validate(); err != nil {
		return BatchOutcome{}, err
	}
	b, err := r.Batch(ctx, project, id)
	if err != nil {
		return BatchOutcome{}, err
	}
	for i, qid := range req.Questions {
		if !slices.ContainsFunc(b.Questions, func(q *domain.Question) bool { return q.ID == qid }) {
			return BatchOutcome{}, &domain.Error{Code: domain.EInvalid, Message: "the batch decision is not valid",
				Details: []domain.Detail{{Field: fmt.Sprintf("questions[%d]", i), Problem: fmt.Sprintf("%s is not a call of batch %s", qid, id)}}}
		}
	}
	what := "Allow all"
	if req.Decision == domain.DecideDeny {
		what = "Deny all"
	}
	var out BatchOutcome
	for _, q := range b.Questions {
		if !req.Includes(q.ID) {
			continue
		}
		if q.Status != domain.StatusPending {
			out.Already = append(out.Already, q.ID)
			continue
		}
		answer, err := domain.BatchAnswer(q, req.Decision, req.Reason)
		if err == nil {
			var final *domain.Question
			final, err = r.answer(ctx, q, answer, who, pauseWait)
			if err == nil {
				r.audit(ctx, final, domain.AuditEntry{Type: "batch_decided", By: &who, Detail: what + " on batch " + id})
				if final.Status == domain.StatusPending {
					out.Voted = append(out.Voted, q.ID)
				} else {
					out.Decided = append(out.Decided, q.ID)
				}
				continue
			}
		}
		if domain.IsStatusError(err) {
			out.Already = append(out.Already, q.ID) // decided meanwhile, by someone else
			continue
		}
		out.Refused = append(out.Refused, CallRefusal{ID: q.ID, Code: domain.ErrorCode(err), Message: refusalText(err)})
	}
	if fresh, err := r.Batch(context.WithoutCancel(ctx), project, id); err == nil {
		b = fresh
	}
	out.Batch = b
	if len(out.Decided) > 0 || len(out.Voted) > 0 {
		return out, nil
	}
	switch {
	case len(out.Refused) == 0:
		return out, domain.Errorf(domain.EAlreadyAnswered, "every call of batch %s is decided already; nothing changed", domain.ShortID(id))
	case slices.ContainsFunc(out.Refused, func(c CallRefusal) bool { return c.Code == domain.ENotAllowed }):
		return out, domain.Errorf(domain.ENotAllowed, "you may decide none of the pending calls of this batch: %s", out.Refused[0].Message)
	}
	return out, domain.Errorf(out.Refused[0].Code, "%s", out.Refused[0].Message)
}

// refusalText is an error as a person reads it: its message and details.
func refusalText(err error) string {
	var de *domain.Error
	if !errors.As(err, &de) {
		return err.Error()
	}
	msg := de.Message
	for _, d := range de.Details {
		msg += " (" + d.Problem + ")"
	}
	return msg
}
