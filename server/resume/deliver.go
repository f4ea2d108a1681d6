package resume

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
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
func (d *Deliverer) deliver(ctx context.Context, dl lifecycle.Delivery, q *domain.Question, secret []byte, log *slog.Logger) (hostOK bool) {
	// The body names the attempt and carries a nonce of its own, so each
	// attempt is signed anew: a retry within the same second never
	// carries the signature of the attempt before it.
	nonce := make([]byte, 12)
	_, _ = rand.Read(nonce)
	p := Payload{Event: dl.Event, Question: q.Public(), UserMessage: webhook.ResumeMessage(q),
		Run: RunRef{ID: q.RunID, AgentID: q.AgentID, ProjectID: q.ProjectID}, Attempt: dl.Attempts, Nonce: hex.EncodeToString(nonce)}
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

// noSecretWait is how long a resume webhook that cannot be signed (its
// agent has no webhook secret) waits before it is looked at again.
const noSecretWait = time.Minute

// hold keeps a resume webhook of an agent without a webhook secret queued,
// unsent, until the bridge has a secret (it is restarted with one) or the
// delivery's GiveUpAfter ran out; it is then given up, saying why. The
// agent is named in a warning once per process (warnUnsigned).
func (d *Deliverer) hold(ctx context.Context, dl lifecycle.Delivery, agent string, now time.Time, log *slog.Logger) {
	why := "no webhook secret configured for agent " + agent
	if !dl.CreatedAt.IsZero() && now.Sub(dl.CreatedAt) > d.cfg.GiveUpAfter {
		d.fail(ctx, dl, log, why+" within "+d.cfg.GiveUpAfter.String()+"; set BRIDGE_WEBHOOK_SECRET (webhooks.secret) or the agent's webhook_secret")
		return
	}
	dl.Attempts-- // nothing was sent
	if err := d.cfg.Store.RetryDelivery(ctx, dl, now.Add(min(noSecretWait, d.cfg.MaxBackoff))); err != nil {
		log.Warn("putting back a delivery that cannot be signed failed; it is looked at again when its lease ends", "err", err)
	}
	log.Debug("resume webhook kept queued", "reason", why)
	d.mu.Lock()
	if !d.unsigned[agent] {
		d.unsigned[agent] = true
		d.unwarned = append(d.unwarned, agent)
	}
	d.mu.Unlock()
}

// warnUnsigned names, in one warning, the agents whose resume webhooks
// were found held for want of a secret since the last warning: at start
// (the first read of the queue), every agent with queued resumes due.
func (d *Deliverer) warnUnsigned() {
	d.mu.Lock()
	agents := d.unwarned
	d.unwarned = nil
	d.mu.Unlock()
	if len(agents) == 0 {
		return
	}
	slices.Sort(agents)
	who := "agent "
	if len(agents) > 1 {
		who = "agents "
	}
	d.cfg.Logger.Warn("resume webhooks are kept queued, unsent: no webhook secret is configured for "+who+strings.Join(agents, ", ")+
		"; set BRIDGE_WEBHOOK_SECRET (webhooks.secret) or the agent's webhook_secret and restart the bridge; each is given up "+
		d.cfg.GiveUpAfter.String()+" after its question ended", "agents", strings.Join(agents, ","))
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
