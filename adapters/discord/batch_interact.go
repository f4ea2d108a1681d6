package discord

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

var _ lifecycle.BatchChannel = (*Adapter)(nil)

// PostBatch implements lifecycle.BatchChannel: it posts the batch's
// message on t, in the run's thread as Post would.
func (a *Adapter) PostBatch(ctx context.Context, b *domain.Batch, t domain.Target) (domain.Target, error) {
	return a.postMessage(ctx, b.Questions[0], t, a.renderBatch(b), "batch:"+b.ID)
}

// UpdateBatch implements lifecycle.BatchChannel: it re-renders the batch's
// message with every call as it is now.
func (a *Adapter) UpdateBatch(ctx context.Context, b *domain.Batch, t domain.Target) error {
	if t.MessageTS == "" {
		return nil
	}
	return a.edit(ctx, b.Questions[0], t, a.renderBatch(b))
}

// onBatchMessage reports whether the click came from a message showing
// several calls of q's batch: the Router re-renders it with every call, so
// the click only acknowledges.
func (a *Adapter) onBatchMessage(ctx context.Context, q *domain.Question, in *inbound) bool {
	if q == nil || in.Message == nil || q.BatchID == "" {
		return false
	}
	marked := false
	for _, t := range q.Targets {
		marked = marked || t.Platform == Platform && t.MessageTS == in.Message.ID && t.Refs[lifecycle.BatchRef] != ""
	}
	if !marked {
		return false
	}
	b, err := a.router.Batch(ctx, q.ProjectID, q.BatchID)
	if err != nil {
		return false
	}
	n := 0
	for _, c := range b.Questions {
		if postedOn(c, in) {
			n++
		}
	}
	return n > 1
}

// handleBatch handles the batch's row: Allow all, Deny all, Deny all with
// note… (a modal) and its submit. Every call is decided as its own answer
// (who may answer checked per call); the person is told privately of the
// calls left pending for them.
func (a *Adapter) handleBatch(ctx context.Context, x *exchange, act action) {
	in := x.in
	if in.Message == nil {
		x.reply(ctx, ephemeral(words.NotOurs().Text))
		return
	}
	project, err := a.router.Locate(ctx, act.QuestionID)
	if err != nil {
		a.failed(ctx, x, err)
		return
	}
	b, err := a.router.Batch(ctx, project, act.QuestionID)
	if err != nil {
		a.failed(ctx, x, err)
		return
	}
	var ids []string
	for _, q := range b.Questions {
		if len(ids) < act.Item && postedOn(q, in) {
			ids = append(ids, q.ID)
		}
	}
	if len(ids) == 0 {
		x.reply(ctx, ephemeral(words.NotOurs().Text))
		return
	}
	req := domain.BatchRespondRequest{Decision: domain.DecideAllow, Questions: ids}
	switch act.Kind {
	case actDenyAllNote:
		x.reply(ctx, batchNoteModal(b.ID, act.Item))
		return
	case actDenyAll:
		req.Decision = domain.DecideDeny
	case actBatchModal:
		note := in.rawText()
		if strings.TrimSpace(note) == "" {
			x.reply(ctx, ephemeral("Write why the calls are denied; nothing was recorded."))
			return
		}
		req.Decision, req.Reason = domain.DecideDeny, &note
	}
	out, err := a.router.DecideBatch(ctx, project, b.ID, req, in.person(), true)
	if err != nil {
		a.refuse(ctx, x, err, nil, in.person())
		return
	}
	if len(out.Refused) > 0 {
		lines := []string{fmt.Sprintf("%d call(s) decided; %d left pending for someone else:", len(out.Decided)+len(out.Voted), len(out.Refused))}
		for _, r := range out.Refused {
			lines = append(lines, fmt.Sprintf("• call #%d: %s", slices.Index(ids, r.ID)+1, r.Message))
		}
		x.reply(ctx, ephemeral(domain.Shorten(strings.Join(lines, "\n"), maxContent)))
		return
	}
	x.reply(ctx, deferredUpdate)
}
