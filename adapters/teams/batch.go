package teams

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// A batch of approvals (lifecycle.BatchChannel) is one card per
// conversation (BatchCard): a section per call with its own controls, and
// Allow all N / Deny all N / Deny all with note…. A call's own controls
// carry its id and are answered as on its own card; the batch's row names
// the batch and the calls the card showed, and is decided through the
// Router's DecideBatch, who may answer checked per call. Either way the
// person gets the batch card as it is now in answer; the Router updates
// the card for everyone.

var _ lifecycle.BatchChannel = (*Adapter)(nil)

// batchActivity renders b for everyone.
func (a *Adapter) batchActivity(b *domain.Batch) (*activity, error) {
	c, err := BatchCard(b, CardView{PublicURL: a.cfg.PublicURL})
	if err != nil {
		return nil, lifecycle.Permanent(fmt.Errorf("teams: rendering the batch's card: %w", err))
	}
	return cardActivity(c, domain.Shorten(batchFallback(b), 100)), nil
}

// PostBatch implements lifecycle.BatchChannel: it posts the batch's card
// on t as Post posts a call's (in the run's thread when the route keeps
// runs in threads).
func (a *Adapter) PostBatch(ctx context.Context, b *domain.Batch, t domain.Target) (domain.Target, error) {
	act, err := a.batchActivity(b)
	if err != nil {
		return t, err
	}
	return a.post(ctx, b.Questions[0], act, t)
}

// UpdateBatch implements lifecycle.BatchChannel: it re-renders the batch's
// card with every call as it is now.
func (a *Adapter) UpdateBatch(ctx context.Context, b *domain.Batch, t domain.Target) error {
	if t.MessageTS == "" {
		return nil
	}
	act, err := a.batchActivity(b)
	if err != nil {
		return err
	}
	return a.put(ctx, act, t)
}

// batchOn is batch id as the card an invoke came from shows it: the calls
// whose copy is that card, each as it is now. It is nil when no call of
// the batch was posted there.
func (a *Adapter) batchOn(ctx context.Context, project, id string, act *activity) (*domain.Batch, error) {
	b, err := a.router.Batch(ctx, project, id)
	if err != nil {
		return nil, err
	}
	var qs []*domain.Question
	for _, q := range b.Questions {
		if postedOn(q, act) {
			qs = append(qs, q)
		}
	}
	return domain.NewBatch(id, qs), nil
}

// batchView is b's card as viewer sees it, with notice shown only to them.
func (a *Adapter) batchView(b *domain.Batch, viewer, notice string) invokeResponse {
	c, err := BatchCard(b, CardView{PublicURL: a.cfg.PublicURL, Viewer: viewer, Refused: notice})
	if err != nil {
		a.log.Error("rendering a batch card failed", "batch", b.ID, "err", err)
		return invokeError(http.StatusInternalServerError, "InternalError", words.Failed().Text)
	}
	return invokeResponse{StatusCode: http.StatusOK, Type: cardContentType, Value: c}
}

// viewOn is q's card as viewer sees it on the card the invoke came from:
// its batch's card when that card shows several calls, else its own.
func (a *Adapter) viewOn(ctx context.Context, q *domain.Question, act *activity, viewer, notice string) invokeResponse {
	if q.BatchID != "" && q.Kind == domain.KindApproval {
		b, err := a.batchOn(ctx, q.ProjectID, q.BatchID, act)
		if err != nil {
			a.log.Warn("reading a batch failed; answering with the call's own card", "batch", q.BatchID, "err", err)
		} else if b != nil && len(b.Questions) > 1 {
			return a.batchView(b, viewer, notice)
		}
	}
	return a.view(q, viewer, notice)
}

// batchInvoke handles a batch card's own controls (data naming batch id):
// its refresh, Allow all, Deny all and Deny all with note. The calls the
// person may not decide stay pending, and only they are told which and
// why, on their view of the card.
func (a *Adapter) batchInvoke(ctx context.Context, act *activity, id, verb string, data json.RawMessage) invokeResponse {
	project, err := a.router.Locate(ctx, id)
	if err != nil {
		return invokeError(http.StatusNotFound, "NotFound", words.Refusal(err, nil, domain.Person{}).Text)
	}
	b, err := a.batchOn(ctx, project, id, act)
	if err != nil {
		return invokeError(http.StatusNotFound, "NotFound", words.Refusal(err, nil, domain.Person{}).Text)
	}
	if b == nil {
		// A card copied into another conversation must not act on the batch.
		return invokeError(http.StatusBadRequest, "BadRequest", words.NotOurs().Text)
	}
	viewer := ""
	if act.From != nil {
		viewer = act.From.ID
	}
	who, ok := person(act)
	switch {
	case verb == VerbRefresh:
		return a.batchView(b, viewer, "")
	case !ok:
		return a.batchView(b, viewer, "Teams did not say who you are (no Entra object id); nothing was recorded.")
	}
	req, err := ParseBatchAction(b, verb, data)
	if err != nil {
		if b.Pending == 0 {
			return a.batchView(b, viewer, "Every call of this batch is decided already. "+domain.ChangedNothing)
		}
		return a.batchView(b, viewer, "Not sent: "+err.Error()+". "+domain.ChangedNothing)
	}
	out, err := a.router.DecideBatch(ctx, project, id, req, who, true)
	now := b
	if fresh, ferr := a.batchOn(ctx, project, id, act); ferr == nil && fresh != nil {
		now = fresh
	}
	if err == nil {
		a.log.Info("batch decided", "batch", id, "project", project, "user", who.ID,
			"decided", len(out.Decided), "refused", len(out.Refused))
	}
	if len(out.Refused) > 0 {
		// Whether some calls were decided or none: the person reads
		// which calls were left, by their number on the card, and why.
		return a.batchView(now, viewer, refusedText(out, func(qid string) int {
			return slices.IndexFunc(now.Questions, func(q *domain.Question) bool { return q.ID == qid }) + 1
		}))
	}
	if err != nil {
		switch domain.ErrorCode(err) {
		case domain.ENotAllowed, domain.EInvalid, domain.ENotFound, domain.EConflict, domain.EAlreadyAnswered:
		default:
			a.log.Error("deciding a batch from Teams failed", "batch", id, "err", err)
		}
		return a.batchView(now, viewer, words.Refusal(err, nil, who).Text)
	}
	return a.batchView(now, "", "")
}

// refusedText tells a person which calls a batch decision left pending,
// by their number on the card, and why.
func refusedText(out lifecycle.BatchOutcome, number func(id string) int) string {
	lines := []string{fmt.Sprintf("%d call(s) decided; %d left pending for someone else:", len(out.Decided)+len(out.Voted), len(out.Refused))}
	for _, r := range out.Refused {
		lines = append(lines, fmt.Sprintf("• call %d: %s", number(r.ID), r.Message))
	}
	s, _ := clip(strings.Join(lines, "\n"), 2000)
	return s
}
