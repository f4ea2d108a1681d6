package resume

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/agent/webhook"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/tracing"
	"github.com/askbridge/askbridge/server/egress"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// deliver makes one attempt and records its outcome. It reports whether
// the host answered (for its circuit): a connection failure, a timeout, a
// 5xx, 408 or 429 count against the host.
func (d *Deliverer) deliver(ctx context.Context, dl lifecycle.Delivery, q *domain.Question, log *slog.Logger) (hostOK bool) {
	secret := d.cfg.Secret(q.AgentID)
	if len(secret) == 0 {
		d.fail(ctx, dl, log, "no webhook secret configured for agent "+q.AgentID)
		return true
	}
	p := Payload{Event: dl.Event, Question: q.Public(), UserMessage: webhook.ResumeMessage(q),
		Run: RunRef{ID: q.RunID, AgentID: q.AgentID, ProjectID: q.ProjectID}}
	if q.ResumedRunID != "" {
		p.Run.ID, p.Run.ResumedFrom = q.ResumedRunID, q.RunID
	}
	body, _ := json.Marshal(p)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, q.Resume.URL, bytes.NewReader(body))
	if err != nil {
		d.fail(ctx, dl, log, "invalid resume url")
		return true
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "askbridge")
	req.Header.Set(webhook.HeaderEvent, dl.Event)
	req.Header.Set(webhook.HeaderDelivery, dl.ID)
	req.Header.Set(webhook.HeaderSignature, webhook.SignDelivery(secret, d.cfg.Clock.Now(), dl.ID, body))
	// The attempt is a span of the question's trace, and its traceparent
	// goes to the receiver so the continuation run joins the trace.
	sctx, span := d.tracer.Start(tracing.Remote(ctx, q.TraceParent, q.TraceState), "askbridge.resume_webhook",
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attribute.String("askbridge.question.id", q.ID),
			attribute.String("askbridge.delivery.id", dl.ID), attribute.Int("askbridge.attempt", dl.Attempts)))
	defer span.End()
	tracing.Inject(sctx, req.Header)
	resp, err := d.client.Do(req)
	if err != nil {
		span.SetStatus(codes.Error, "network")
		var refused *egress.RefusedError
		if errors.As(err, &refused) {
			d.fail(ctx, dl, log, "the resume url is not allowed: "+refused.Reason)
			return true
		}
		d.retry(ctx, dl, log, "request failed: "+err.Error())
		return false
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= 300 {
		span.SetStatus(codes.Error, http.StatusText(resp.StatusCode))
	}
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		if err := d.cfg.Store.FinishDelivery(ctx, dl); err != nil {
			log.Warn("delivered, but clearing the queue entry failed; it may be sent again", "err", err)
		}
		d.cfg.Observe("delivered")
		d.audit(ctx, q, "webhook.delivered", fmt.Sprintf("%s to %s: %d (attempt %d, delivery %s)", dl.Event, q.Resume.URL, code, dl.Attempts, dl.ID))
		log.Info("resume webhook delivered", "status", code)
		return true
	case code >= 300 && code < 400:
		d.fail(ctx, dl, log.With("location", resp.Header.Get("Location")),
			fmt.Sprintf("receiver answered %d, a redirect to %q; redirects are not followed, fix the resume url", code, resp.Header.Get("Location")))
		return true
	case code >= 400 && code < 500 && code != 408 && code != 429:
		d.fail(ctx, dl, log, fmt.Sprintf("receiver answered %d", code))
		return true
	default:
		d.retry(ctx, dl, log, fmt.Sprintf("receiver answered %d", code))
		return false
	}
}

// Backoff is the wait before retry n (1-based): MinBackoff doubling up to
// MaxBackoff.
func (d *Deliverer) Backoff(attempt int) time.Duration {
	b := d.cfg.MinBackoff
	for i := 1; i < attempt && b < d.cfg.MaxBackoff; i++ {
		b *= 2
	}
	return min(b, d.cfg.MaxBackoff)
}

func (d *Deliverer) retry(ctx context.Context, dl lifecycle.Delivery, log *slog.Logger, why string) {
	now := d.cfg.Clock.Now()
	if !dl.CreatedAt.IsZero() && now.Sub(dl.CreatedAt) > d.cfg.GiveUpAfter {
		d.fail(ctx, dl, log, "gave up after "+d.cfg.GiveUpAfter.String()+": "+why)
		return
	}
	next := now.Add(d.Backoff(dl.Attempts))
	if err := d.cfg.Store.RetryDelivery(ctx, dl, next); err != nil {
		log.Warn("scheduling a retry failed; the lease will expire and it is retried then", "err", err)
	}
	d.cfg.Observe("retried")
	log.Warn("resume webhook failed; will retry", "reason", why, "next", next)
}

// fail gives a delivery up for good, never silently: a resume.failed event,
// an error log with the delivery id and reason, a metric and an audit entry.
func (d *Deliverer) fail(ctx context.Context, dl lifecycle.Delivery, log *slog.Logger, why string) {
	if err := d.cfg.Store.FinishDelivery(ctx, dl); err != nil {
		log.Warn("clearing a failed delivery failed", "err", err)
	}
	data, _ := json.Marshal(map[string]string{"delivery": dl.ID, "reason": why})
	ev := domain.Event{Type: domain.EventResumeFailed, ProjectID: dl.ProjectID, QuestionID: dl.QuestionID, At: d.cfg.Clock.Now().UTC(), Data: data}
	if dl.Question != nil {
		ev.RunID = dl.Question.RunID
	}
	if err := d.cfg.Store.AppendEvent(ctx, ev); err != nil {
		log.Warn("recording the resume.failed event failed", "err", err)
	}
	d.cfg.Observe("failed")
	d.audit(ctx, &domain.Question{ProjectID: dl.ProjectID, ID: dl.QuestionID}, "webhook.failed", why+" (delivery "+dl.ID+")")
	log.Error("resume webhook failed for good", "reason", why)
}

func (d *Deliverer) audit(ctx context.Context, q *domain.Question, typ, detail string) {
	_ = d.cfg.Store.AppendAudit(ctx, domain.AuditEntry{Type: typ, ProjectID: q.ProjectID, QuestionID: q.ID, RunID: q.RunID,
		Detail: detail, At: d.cfg.Clock.Now().UTC()})
}
