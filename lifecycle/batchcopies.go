package lifecycle

import (
	"context"
	"sync"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// One batch, one message (BatchChannel): the approvals of a batch share
// one message per target on a surface that can show them together.
//
//   - The first call of a batch posted on a target claims the batch's
//     message there (Scratch.Once, so one replica and one call wins). It
//     posts the ordinary single-call message when it is the batch's only
//     call so far, else the batch message (PostBatch). Its copy names the
//     batch (Refs[BatchRef]).
//   - A later call of the batch waits for that message's reference, records
//     it as its own copy and re-renders the message (UpdateBatch): a single
//     call's message becomes the batch's.
//   - Every change of a call (a decision, a vote, a withdrawal, people
//     added by escalation) re-renders the batch message with every call as
//     it is now. A copy whose batch has one call on the target is updated
//     and finished as a single call's.
//
// A call that cannot find the batch's message in time (its poster failed
// or died) posts a message of its own, as a Channel without the ability
// does.

// BatchRef is the key of a copy's Refs that names the batch whose message
// the copy is.
const BatchRef = "batch"

// batchCopyTTL bounds how long a batch's claim on a target is kept beyond
// its call's deadline.
const batchCopyTTL = time.Hour

// batchLocks serialises the re-renders of one batch message on this
// replica: each reads the batch afresh inside the lock, so the last
// render shows the latest state.
type batchLocks struct {
	mu sync.Mutex
	m  map[string]*batchLock
}

type batchLock struct {
	sync.Mutex
	users int
}

func (l *batchLocks) lock(key string) func() {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*batchLock{}
	}
	bl := l.m[key]
	if bl == nil {
		bl = &batchLock{}
		l.m[key] = bl
	}
	bl.users++
	l.mu.Unlock()
	bl.Lock()
	return func() {
		bl.Unlock()
		l.mu.Lock()
		if bl.users--; bl.users == 0 {
			delete(l.m, key)
		}
		l.mu.Unlock()
	}
}

// batchChannel returns the BatchChannel of t's platform when q is a call
// of a batch it can show as one message.
func (r *Router) batchChannel(q *domain.Question, t domain.Target) BatchChannel {
	if q.Kind != domain.KindApproval || q.BatchID == "" {
		return nil
	}
	return r.batchers[t.Platform]
}

// batchOn is the batch of id as shown on the target keyed key: its calls
// asked there, in the order asked, each as it is now. A call that posted a
// message of its own there is not part of it.
func (r *Router) batchOn(ctx context.Context, project, id, key string) (*domain.Batch, error) {
	b, err := r.Batch(ctx, project, id)
	if err != nil {
		return nil, err
	}
	var qs []*domain.Question
	for _, q := range b.Questions {
		for _, t := range q.Targets {
			if t.Key() == key && (t.MessageTS == "" || t.Refs[BatchRef] == id) {
				qs = append(qs, q)
				break
			}
		}
	}
	out := domain.NewBatch(id, qs)
	if out == nil {
		return nil, domain.Errorf(domain.ENotFound, "no call of batch %s on %s", id, key)
	}
	return out, nil
}

// postBatched posts q's copy on t as a call of its batch (see above).
func (r *Router) postBatched(ctx context.Context, bc BatchChannel, q *domain.Question, t domain.Target) (domain.Target, error) {
	ch := r.channels[t.Platform]
	ttl := max(q.ExpiresAt.Sub(r.clock.Now()), 0) + batchCopyTTL
	first, err := r.store.Once(ctx, "batchcopy:"+q.ProjectID+":"+q.BatchID+":"+t.Key(), ttl)
	if err != nil {
		r.log.Warn("claiming the batch's message failed; posting the call on its own", "question", q.ID, "batch", q.BatchID, "err", err)
		return ch.Post(ctx, q, t)
	}
	if first {
		unlock := r.batchLocks.lock(q.BatchID + "|" + t.Key())
		defer unlock()
		var posted domain.Target
		b, err := r.batchOn(ctx, q.ProjectID, q.BatchID, t.Key())
		batch := err == nil && len(b.Questions) > 1
		if batch {
			posted, err = bc.PostBatch(ctx, b, t)
		} else {
			posted, err = ch.Post(ctx, q, t)
		}
		if err != nil {
			return posted, err
		}
		posted = r.markBatch(ctx, q, posted)
		if batch {
			r.linkShown(ctx, q, b, posted)
		}
		return posted, nil
	}
	ref, ok := r.awaitBatchCopy(ctx, q, t)
	if !ok {
		r.log.Warn("the batch's message did not appear in time; posting the call on its own", "question", q.ID, "batch", q.BatchID, "platform", t.Platform)
		return ch.Post(ctx, q, t)
	}
	// Recorded first, so the re-rendered message's controls for q are
	// taken as coming from one of q's copies.
	if err := r.store.AttachCopy(ctx, q.ProjectID, q.ID, ref); err != nil {
		return t, err
	}
	if err := r.renderBatch(ctx, bc, q.ProjectID, q.BatchID, ref); err != nil {
		// The copy exists and names the message: retry the re-render in
		// the background rather than post another message.
		r.log.Warn("re-rendering the batch's message failed; retrying", "question", q.ID, "batch", q.BatchID, "err", err)
		r.retryCopy(q.ID, ref, "re-rendering a batch's message", func(ctx context.Context) error {
			return r.renderBatch(ctx, bc, q.ProjectID, q.BatchID, ref)
		})
	}
	return ref, nil
}

// markBatch names q's batch on its posted copy.
func (r *Router) markBatch(ctx context.Context, q *domain.Question, posted domain.Target) domain.Target {
	refs := make(map[string]string, len(posted.Refs)+1)
	for k, v := range posted.Refs {
		refs[k] = v
	}
	refs[BatchRef] = q.BatchID
	posted.Refs = refs
	// Recorded at once: the batch's other calls wait for it.
	if err := r.store.AttachCopy(ctx, q.ProjectID, q.ID, posted); err != nil {
		r.log.Warn("recording the batch's message failed", "question", q.ID, "err", err)
	}
	return posted
}

// linkShown records the batch's message as the copy of every other call
// it shows, at once: a person may press Allow all the moment it appears,
// and the surfaces decide the calls whose copy is the message. Each call's
// own post still comes round (awaitBatchCopy), finds the message recorded
// and re-renders it; recording the same copy twice changes nothing.
func (r *Router) linkShown(ctx context.Context, q *domain.Question, b *domain.Batch, posted domain.Target) {
	for _, o := range b.Questions {
		if o.ID == q.ID {
			continue
		}
		if err := r.store.AttachCopy(ctx, o.ProjectID, o.ID, posted); err != nil {
			r.log.Warn("recording the batch's message on a call it shows failed; the call records it when its own post comes round", "question", o.ID, "batch", q.BatchID, "err", err)
		}
	}
}

// awaitBatchCopy waits (at most PostTimeout) for the batch's message on t
// to be recorded by the call that claimed it, and returns it as q's copy.
// ok is false when that post failed or did not come in time.
func (r *Router) awaitBatchCopy(ctx context.Context, q *domain.Question, t domain.Target) (domain.Target, bool) {
	deadline := time.Now().Add(r.cfg.PostTimeout)
	wait := 5 * time.Millisecond
	for {
		qs, err := r.store.RunQuestions(ctx, q.ProjectID, q.RunID)
		if err == nil {
			for _, o := range qs {
				if o.BatchID != q.BatchID || o.ID == q.ID {
					continue
				}
				for _, c := range o.Targets {
					switch {
					case c.Key() != t.Key():
					case c.Error != "": // the batch's post (or a sibling's) failed
						return t, false
					case c.MessageTS != "" && c.Refs[BatchRef] == q.BatchID:
						return c, true
					}
				}
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return t, false
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
		wait = min(wait*2, 200*time.Millisecond)
	}
}

// renderBatch re-renders the batch's message on t with every call as it
// is now: as the batch's message, or as its one call's copy when only one
// call is on t.
func (r *Router) renderBatch(ctx context.Context, bc BatchChannel, project, id string, t domain.Target) error {
	unlock := r.batchLocks.lock(id + "|" + t.Key())
	defer unlock()
	b, err := r.batchOn(ctx, project, id, t.Key())
	if err != nil {
		return err
	}
	if len(b.Questions) > 1 {
		return bc.UpdateBatch(ctx, b, t)
	}
	q, ch := b.Questions[0], r.channels[t.Platform]
	if q.Status == domain.StatusPending {
		return ch.Update(ctx, q, t)
	}
	return ch.Finish(ctx, q, t)
}

// batchCopy reports the BatchChannel and batch of a posted copy that is a
// batch's message.
func (r *Router) batchCopy(q *domain.Question, t domain.Target) (BatchChannel, string) {
	id := t.Refs[BatchRef]
	if id == "" || id != q.BatchID {
		return nil, ""
	}
	bc := r.batchers[t.Platform]
	if bc == nil {
		return nil, ""
	}
	return bc, id
}
