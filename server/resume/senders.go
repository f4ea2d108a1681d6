package resume

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/tracing"
	"github.com/askbridge/askbridge/lifecycle"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Sender sends the deliveries a surface or a pager queued with
// lifecycle.DeliveryQueue.EnqueueDelivery: those whose Event starts with
// Name() and a dot (pagerduty.trigger, email.send). Pages and mails so get
// what resume webhooks have: a durable queue, leases taken over when a
// replica dies, backoff, a give-up time and a circuit of their own, so one
// sender's outage delays nobody else's deliveries.
type Sender interface {
	Name() string
	// Send makes one attempt. nil: sent. Permanent(err): give up now.
	// RetryAfter(err, wait): retry no sooner than wait. ErrDrop: nothing
	// is left to send. Any other error is retried with backoff.
	Send(ctx context.Context, d lifecycle.Delivery) error
}

// ErrDrop tells the deliverer that a delivery has nothing left to send (a
// page whose question ended before it left): it is finished quietly.
var ErrDrop = errors.New("nothing to send any more")

type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// Permanent marks err as one that no retry would cure (a 400, an unknown
// mailbox, a destination the egress rules refuse).
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

type retryAfterError struct {
	err  error
	wait time.Duration
}

func (e retryAfterError) Error() string { return e.err.Error() }
func (e retryAfterError) Unwrap() error { return e.err }

// RetryAfter marks err as retryable no sooner than wait (a 429's
// Retry-After).
func RetryAfter(err error, wait time.Duration) error {
	if err == nil {
		return nil
	}
	return retryAfterError{err, wait}
}

// senderFor returns the sender of a delivery's event, nil for a resume
// webhook.
func (d *Deliverer) senderFor(event string) Sender {
	name, _, ok := strings.Cut(event, ".")
	if !ok {
		return nil
	}
	for _, s := range d.cfg.Senders {
		if s.Name() == name {
			return s
		}
	}
	return nil
}

// holdNoSender puts back, unsent, a page or mail whose sender this
// replica lacks (its surface or pager is not configured here): another
// replica that has it may send it. Past GiveUpAfter it is given up.
func (d *Deliverer) holdNoSender(ctx context.Context, dl lifecycle.Delivery, name string, now time.Time, log *slog.Logger) {
	why := "no " + name + " sender on this replica (is " + name + " configured?)"
	if !dl.CreatedAt.IsZero() && now.Sub(dl.CreatedAt) > d.cfg.GiveUpAfter {
		d.failSender(ctx, name, dl, log, why+" within "+d.cfg.GiveUpAfter.String())
		return
	}
	dl.Attempts-- // nothing was sent
	if err := d.cfg.Store.RetryDelivery(ctx, dl, now.Add(min(noSecretWait, d.cfg.MaxBackoff))); err != nil {
		log.Warn("putting back a delivery without a sender failed; it is looked at again when its lease ends", "err", err)
	}
	log.Debug("delivery kept queued", "reason", why)
}

// circuitKey is what a sender's deliveries count against in the circuit of
// destinations: the sender, never a webhook host.
func circuitKey(s Sender) string { return "sender:" + s.Name() }

// send makes one attempt through a sender and records its outcome. It
// reports whether the sender's destination answered (for its circuit).
//
// The attempt is a span of the question's trace (child of the ask, as the
// resume webhook's attempt is) with the sender, the event, the attempt and
// the outcome: never an address or a text.
func (d *Deliverer) send(ctx context.Context, s Sender, dl lifecycle.Delivery, log *slog.Logger) (reached bool) {
	name := s.Name()
	spanCtx, span := d.tracer.Start(d.askContext(ctx, dl), "askbridge.delivery",
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
			attribute.String("askbridge.sender", name), attribute.String("askbridge.event", dl.Event),
			attribute.Int("askbridge.attempt", dl.Attempts), attribute.String("askbridge.question.id", dl.QuestionID),
			attribute.String("askbridge.delivery.id", dl.ID)))
	outcome := "failed"
	defer func() {
		span.SetAttributes(attribute.String("askbridge.outcome", outcome))
		if outcome == "failed" || outcome == "retried" {
			span.SetStatus(codes.Error, outcome)
		}
		span.End()
	}()
	sctx, cancel := context.WithTimeout(spanCtx, d.cfg.AttemptTimeout)
	err := s.Send(sctx, dl)
	cancel()
	var perm permanentError
	var ra retryAfterError
	switch {
	case err == nil:
		outcome = "sent"
		if ferr := d.cfg.Store.FinishDelivery(ctx, dl); ferr != nil {
			log.Warn("sent, but clearing the queue entry failed; it may be sent again", "err", ferr)
		}
		d.cfg.ObserveSender(name, "sent")
		d.audit(ctx, auditQuestion(dl), "delivery.sent", fmt.Sprintf("%s (attempt %d, delivery %s)", dl.Event, dl.Attempts, dl.ID))
		log.Info("delivery sent", "sender", name)
		return true
	case errors.Is(err, ErrDrop):
		outcome = "dropped"
		if ferr := d.cfg.Store.FinishDelivery(ctx, dl); ferr != nil {
			log.Warn("clearing a dropped delivery failed", "err", ferr)
		}
		d.cfg.ObserveSender(name, "dropped")
		log.Info("delivery dropped: nothing left to send", "sender", name)
		return true
	case errors.As(err, &perm):
		d.failSender(ctx, name, dl, log, perm.err.Error())
		return true
	case errors.As(err, &ra):
		outcome = d.retrySender(ctx, name, dl, log, ra.err.Error(), ra.wait)
		return false
	default:
		outcome = d.retrySender(ctx, name, dl, log, err.Error(), 0)
		return false
	}
}

// askContext is ctx with the question's stored ask context as the parent
// of a delivery's span (ctx itself when the question kept none or is gone).
func (d *Deliverer) askContext(ctx context.Context, dl lifecycle.Delivery) context.Context {
	q := dl.Question
	if q == nil { // enqueued by an older release: read the question
		var err error
		if q, err = d.cfg.Store.Get(ctx, dl.ProjectID, dl.QuestionID); err != nil {
			return ctx
		}
	}
	return tracing.Remote(ctx, q.TraceParent, q.TraceState)
}

// retrySender schedules the next attempt: the backoff, or the sender's
// wait when it asked for a longer one (capped at four times MaxBackoff).
// It returns the outcome: "retried", or "failed" past the give-up time.
func (d *Deliverer) retrySender(ctx context.Context, name string, dl lifecycle.Delivery, log *slog.Logger, why string, wait time.Duration) (outcome string) {
	now := d.cfg.Clock.Now()
	if !dl.CreatedAt.IsZero() && now.Sub(dl.CreatedAt) > d.cfg.GiveUpAfter {
		d.failSender(ctx, name, dl, log, "gave up after "+d.cfg.GiveUpAfter.String()+": "+why)
		return "failed"
	}
	next := now.Add(max(d.Backoff(dl.Attempts), min(wait, 4*d.cfg.MaxBackoff)))
	if err := d.cfg.Store.RetryDelivery(ctx, dl, next); err != nil {
		log.Warn("scheduling a retry failed; the lease will expire and it is retried then", "err", err)
	}
	d.cfg.ObserveSender(name, "retried")
	log.Warn("delivery failed; will retry", "sender", name, "reason", why, "next", next)
	return "retried"
}

// failSender gives a sender's delivery up for good, never silently: an
// error log, a metric and an audit entry with the reason.
func (d *Deliverer) failSender(ctx context.Context, name string, dl lifecycle.Delivery, log *slog.Logger, why string) {
	if err := d.cfg.Store.FinishDelivery(ctx, dl); err != nil {
		log.Warn("clearing a failed delivery failed", "err", err)
	}
	d.cfg.ObserveSender(name, "failed")
	d.audit(ctx, auditQuestion(dl), "delivery.failed", fmt.Sprintf("%s: %s (delivery %s)", dl.Event, why, dl.ID))
	log.Error("delivery failed for good", "sender", name, "reason", why)
}

func auditQuestion(dl lifecycle.Delivery) *domain.Question {
	if dl.Question != nil {
		return dl.Question
	}
	return &domain.Question{ProjectID: dl.ProjectID, ID: dl.QuestionID}
}

// AddSender adds a sender (a surface or a pager built after the
// deliverer); call it before Run.
func (d *Deliverer) AddSender(s Sender) { d.cfg.Senders = append(d.cfg.Senders, s) }
