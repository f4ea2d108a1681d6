package lifecycle

import (
	"context"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// finishCopies updates every posted copy to the final state, in tracked
// background work with retries. A batch's message is re-rendered with
// every call as it is now (batchcopies.go).
func (r *Router) finishCopies(q *domain.Question) {
	r.eachCopy(q, "updating a copy to its final state", func(ctx context.Context, ch Channel, t domain.Target) error {
		if bc, id := r.batchCopy(q, t); bc != nil {
			return r.renderBatch(ctx, bc, q.ProjectID, id, t)
		}
		return ch.Finish(ctx, q, t)
	})
}

// eachCopy runs f on every posted copy in tracked background work, with
// retries and backoff; what still fails is logged.
func (r *Router) eachCopy(q *domain.Question, what string, f func(ctx context.Context, ch Channel, t domain.Target) error) {
	for _, t := range q.Targets {
		if t.MessageTS == "" || t.Error != "" {
			continue
		}
		ch, ok := r.channels[t.Platform]
		if !ok {
			continue
		}
		r.retryCopy(q.ID, t, what, func(ctx context.Context) error { return f(ctx, ch, t) })
	}
}

// retryCopy runs f on the copy t of question qid in tracked background
// work, with retries and backoff; what still fails is logged.
func (r *Router) retryCopy(qid string, t domain.Target, what string, f func(ctx context.Context) error) {
	r.add()
	go func() {
		defer r.done()
		// A platform outage or rate-limit storm delays the update, it
		// does not drop it: retry with capped backoff for CopyRetryFor.
		start := time.Now()
		backoff := r.cfg.CopyRetryBackoff
		for attempt := 1; ; attempt++ {
			ctx, cancel := context.WithTimeout(r.bgCtx, r.cfg.PostTimeout)
			err := f(ctx)
			cancel()
			if err == nil {
				if attempt > 1 {
					r.log.Info(what+" succeeded after retries", "question", qid, "platform", t.Platform, "attempts", attempt)
				}
				return
			}
			if IsPermanent(err) { // no retry can fix it (channelerr.go)
				r.log.Warn(what+" cannot succeed; not retrying", "question", qid,
					"platform", t.Platform, "channel", t.Channel, "attempts", attempt, "err", err)
				return
			}
			if time.Since(start) >= r.cfg.CopyRetryFor || r.bgCtx.Err() != nil {
				r.log.Error(what+" failed; the copy may still show live controls", "question", qid,
					"platform", t.Platform, "channel", t.Channel, "attempts", attempt, "err", err)
				return
			}
			if attempt == 5 {
				r.log.Warn(what+" keeps failing; still retrying", "question", qid, "platform", t.Platform,
					"channel", t.Channel, "err", err)
			}
			select {
			case <-time.After(backoff):
			case <-r.bgCtx.Done():
			}
			backoff = min(backoff*2, 30*time.Second)
		}
	}()
}

// updateCopies re-renders every posted copy of a pending question.
func (r *Router) updateCopies(q *domain.Question) {
	r.eachCopy(q, "updating a copy", func(ctx context.Context, ch Channel, t domain.Target) error {
		// Render the latest state, not the one that triggered this update:
		// updates of quick successive votes may run in any order.
		if bc, id := r.batchCopy(q, t); bc != nil {
			return r.renderBatch(ctx, bc, q.ProjectID, id, t)
		}
		fresh, err := r.store.Get(ctx, q.ProjectID, q.ID)
		if err != nil {
			return err
		}
		if fresh.Status != domain.StatusPending {
			return nil // Finish shows the outcome
		}
		return ch.Update(ctx, fresh, t)
	})
}

// remind reminds the responders on every posted copy.
func (r *Router) remind(ctx context.Context, q *domain.Question) {
	reminded := 0
	for _, t := range q.Targets {
		if ch, ok := r.channels[t.Platform]; ok && t.MessageTS != "" && t.Error == "" {
			{
				pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.PostTimeout)
				err := ch.Remind(pctx, q, t)
				cancel()
				if err != nil {
					r.log.Warn("reminder failed", "question", q.ID, "platform", t.Platform, "channel", t.Channel, "err", err)
					continue
				}
				reminded++
				r.stepped(q.ProjectID, StepReminder)
				r.audit(ctx, q, domain.AuditEntry{Type: "reminded", Detail: domain.TargetName(t) + ", asking " + domain.DescribeResponders(q.Responders)})
			}
		}
	}
	if reminded == 0 {
		r.audit(ctx, q, domain.AuditEntry{Type: "reminded", Detail: "no chat copy to remind on; asking " + domain.DescribeResponders(q.Responders)})
	}
}
