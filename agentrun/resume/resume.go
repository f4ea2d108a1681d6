// Package resume delivers resume webhooks (README "Webhook mode"): it takes deliveries
// from the store's durable queue, signs and POSTs them, and retries with
// exponential backoff for 24 h. A delivery leased by a replica that dies is
// picked up by another when the lease runs out.
package resume

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/askbridge/askbridge/agentrun/webhook"
	"github.com/askbridge/askbridge/core"
)

// Config configures a Deliverer.
type Config struct {
	Store core.Store
	// Secret returns the signing secret for an agent (its own, else the
	// bridge's); nil or empty means the delivery cannot be signed.
	Secret func(agentID string) []byte
	Client *http.Client
	Clock  core.Clock
	Logger *slog.Logger
	// Observe is told each attempt's outcome: delivered, retried, failed.
	Observe func(outcome string)
	// Poll is how often the queue is read (default 500ms).
	Poll time.Duration
	// Lease is how long a claimed delivery is reserved (default 60s).
	Lease time.Duration
	// MinBackoff, MaxBackoff and GiveUpAfter shape retries (1s, 5min, 24h).
	MinBackoff, MaxBackoff, GiveUpAfter time.Duration
	// Workers bounds concurrent deliveries (default 8).
	Workers int
}

// Deliverer sends resume webhooks.
type Deliverer struct{ cfg Config }

// New builds a Deliverer with defaults filled in.
func New(cfg Config) *Deliverer {
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 15 * time.Second}
	}
	if cfg.Clock == nil {
		cfg.Clock = core.SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Observe == nil {
		cfg.Observe = func(string) {}
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 500 * time.Millisecond
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 60 * time.Second
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = time.Second
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 5 * time.Minute
	}
	if cfg.GiveUpAfter <= 0 {
		cfg.GiveUpAfter = 24 * time.Hour
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 8
	}
	return &Deliverer{cfg: cfg}
}

// Payload is the body of a resume webhook.
type Payload struct {
	Event       string         `json:"event"`
	Question    *core.Question `json:"question"`
	Run         RunRef         `json:"run"`
	UserMessage string         `json:"user_message"`
}

// RunRef names the run that continues.
type RunRef struct {
	ID          string `json:"id"`
	ResumedFrom string `json:"resumed_from,omitempty"`
	AgentID     string `json:"agent_id"`
	ProjectID   string `json:"project_id"`
}

// Run delivers until ctx ends; in-flight deliveries finish first (a
// delivery interrupted anyway is retried after its lease).
func (d *Deliverer) Run(ctx context.Context) {
	t := time.NewTicker(d.cfg.Poll)
	defer t.Stop()
	for {
		d.Once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Once claims and sends the deliveries due now, and waits for them.
func (d *Deliverer) Once(ctx context.Context) int {
	ds, err := d.cfg.Store.ClaimDeliveries(ctx, d.cfg.Clock.Now(), d.cfg.Lease, d.cfg.Workers*4)
	if err != nil {
		if ctx.Err() == nil {
			d.cfg.Logger.Warn("reading the resume queue failed", "err", err)
		}
		return 0
	}
	sem := make(chan struct{}, d.cfg.Workers)
	var wg sync.WaitGroup
	for _, dl := range ds {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			d.deliver(context.WithoutCancel(ctx), dl)
		}()
	}
	wg.Wait()
	return len(ds)
}

func (d *Deliverer) deliver(ctx context.Context, dl core.Delivery) {
	log := d.cfg.Logger.With("delivery", dl.ID, "question", dl.QuestionID, "project", dl.ProjectID, "attempt", dl.Attempts)
	q, err := d.cfg.Store.Get(ctx, dl.ProjectID, dl.QuestionID)
	if err != nil {
		if core.ErrorCode(err) == core.ENotFound {
			d.fail(ctx, dl, log, "the question no longer exists")
			return
		}
		d.retry(ctx, dl, log, err.Error())
		return
	}
	if !q.WebhookMode() {
		d.fail(ctx, dl, log, "the question has no resume url")
		return
	}
	secret := d.cfg.Secret(q.AgentID)
	if len(secret) == 0 {
		d.fail(ctx, dl, log, "no webhook secret configured for agent "+q.AgentID)
		return
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
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "askbridge")
	req.Header.Set(webhook.HeaderEvent, dl.Event)
	req.Header.Set(webhook.HeaderDelivery, dl.ID)
	req.Header.Set(webhook.HeaderSignature, webhook.Sign(secret, d.cfg.Clock.Now(), body))
	resp, err := d.cfg.Client.Do(req)
	if err != nil {
		d.retry(ctx, dl, log, "request failed: "+err.Error())
		return
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		if err := d.cfg.Store.FinishDelivery(ctx, dl); err != nil {
			log.Warn("delivered, but clearing the queue entry failed; it may be sent again", "err", err)
		}
		d.cfg.Observe("delivered")
		d.audit(ctx, q, "webhook.delivered", fmt.Sprintf("%s to %s: %d (attempt %d, delivery %s)", dl.Event, q.Resume.URL, resp.StatusCode, dl.Attempts, dl.ID))
		log.Info("resume webhook delivered", "status", resp.StatusCode)
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != 408 && resp.StatusCode != 429:
		d.fail(ctx, dl, log, fmt.Sprintf("receiver answered %d", resp.StatusCode))
	default:
		d.retry(ctx, dl, log, fmt.Sprintf("receiver answered %d", resp.StatusCode))
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

func (d *Deliverer) retry(ctx context.Context, dl core.Delivery, log *slog.Logger, why string) {
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

func (d *Deliverer) fail(ctx context.Context, dl core.Delivery, log *slog.Logger, why string) {
	if err := d.cfg.Store.FinishDelivery(ctx, dl); err != nil {
		log.Warn("clearing a failed delivery failed", "err", err)
	}
	data, _ := json.Marshal(map[string]string{"delivery": dl.ID, "reason": why})
	_ = d.cfg.Store.AppendEvent(ctx, core.Event{Type: core.EventResumeFailed, ProjectID: dl.ProjectID,
		QuestionID: dl.QuestionID, At: d.cfg.Clock.Now().UTC(), Data: data})
	d.cfg.Observe("failed")
	d.audit(ctx, &core.Question{ProjectID: dl.ProjectID, ID: dl.QuestionID}, "webhook.failed", why+" (delivery "+dl.ID+")")
	log.Error("resume webhook failed for good", "reason", why)
}

func (d *Deliverer) audit(ctx context.Context, q *core.Question, typ, detail string) {
	_ = d.cfg.Store.AppendAudit(ctx, core.AuditEntry{Type: typ, ProjectID: q.ProjectID, QuestionID: q.ID, RunID: q.RunID,
		Detail: detail, At: d.cfg.Clock.Now().UTC()})
}
