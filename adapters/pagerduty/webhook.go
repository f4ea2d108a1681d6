package pagerduty

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// WebhookPath is where PagerDuty's webhook subscription posts.
const WebhookPath = "/pagerduty/webhook"

// maxWebhookBody bounds a webhook's body: PagerDuty's v3 events are a few KB.
const maxWebhookBody = 256 << 10

// Incidents is what the webhook tells the bridge (lifecycle.Router
// implements it): a question's page was acknowledged, or its incident was
// resolved by a person in the pager (which does not answer the question),
// by whom and when PagerDuty says it happened.
type Incidents interface {
	PageAcknowledged(ctx context.Context, questionID, pager, by string, at time.Time) error
	PageResolved(ctx context.Context, questionID, pager, by string, at time.Time) error
}

// WebhookConfig configures the inbound webhook.
type WebhookConfig struct {
	// Secrets verify X-PagerDuty-Signature (pagerduty.webhook_secret_file);
	// several during a rotation of the subscription's secret.
	Secrets   []string
	Incidents Incidents
	Logger    *slog.Logger
	// Observe is told of each request's outcome: "accepted", "ignored",
	// "unsigned", "forged", "invalid", "failed".
	Observe func(op, outcome string)
}

// Webhook serves POST /pagerduty/webhook (webhooks v3).
type Webhook struct {
	cfg WebhookConfig
	log *slog.Logger
}

// NewWebhook builds the handler.
func NewWebhook(cfg WebhookConfig) *Webhook {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Observe == nil {
		cfg.Observe = func(string, string) {}
	}
	return &Webhook{cfg: cfg, log: cfg.Logger.With("adapter", Pager)}
}

var (
	errUnsigned = errors.New("missing X-PagerDuty-Signature")
	errForged   = errors.New("X-PagerDuty-Signature does not match the body")
)

// VerifySignature checks X-PagerDuty-Signature: one or more comma-separated
// "v1=<hex HMAC-SHA256(secret, raw body)>" (several while PagerDuty rotates
// the subscription's secret), against each of secrets, in constant time.
func VerifySignature(header string, body []byte, secrets []string) error {
	if strings.TrimSpace(header) == "" {
		return errUnsigned
	}
	var sigs [][]byte
	for _, part := range strings.Split(header, ",") {
		v, ok := strings.CutPrefix(strings.TrimSpace(part), "v1=")
		if !ok {
			continue
		}
		if b, err := hex.DecodeString(v); err == nil && len(b) == sha256.Size {
			sigs = append(sigs, b)
		}
	}
	ok := 0
	for _, s := range secrets {
		if s == "" {
			continue
		}
		want := signBody(s, body)
		for _, got := range sigs {
			ok |= boolInt(hmac.Equal(got, want))
		}
	}
	if ok == 0 {
		return errForged
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func signBody(secret string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return m.Sum(nil)
}

// Sign returns the X-PagerDuty-Signature of body, for tests and tools that
// play PagerDuty.
func Sign(secret string, body []byte) string {
	return "v1=" + hex.EncodeToString(signBody(secret, body))
}

// webhookEvent is a webhooks v3 message (the fields the bridge reads).
type webhookEvent struct {
	Event struct {
		ID           string    `json:"id"`
		EventType    string    `json:"event_type"`
		ResourceType string    `json:"resource_type"`
		OccurredAt   time.Time `json:"occurred_at"`
		Agent        *struct {
			ID      string `json:"id"`
			Type    string `json:"type"`
			Summary string `json:"summary"`
		} `json:"agent"`
		Data struct {
			ID          string `json:"id"`
			Type        string `json:"type"`
			Status      string `json:"status"`
			IncidentKey string `json:"incident_key"`
			Title       string `json:"title"`
		} `json:"data"`
	} `json:"event"`
}

// ServeHTTP implements http.Handler. The signature is checked before the
// body is parsed: anything unsigned or forged gets 401 and changes nothing.
func (h *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "use POST", http.StatusMethodNotAllowed)
		return
	}
	sig := r.Header.Get("X-PagerDuty-Signature")
	if sig == "" {
		h.cfg.Observe("webhook", "unsigned")
		http.Error(w, "missing X-PagerDuty-Signature", http.StatusUnauthorized)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxWebhookBody))
	if err != nil {
		h.cfg.Observe("webhook", "invalid")
		http.Error(w, "body too large or unreadable", http.StatusRequestEntityTooLarge)
		return
	}
	if err := VerifySignature(sig, body, h.cfg.Secrets); err != nil {
		h.cfg.Observe("webhook", "forged")
		h.log.Warn("refused a webhook with a wrong signature", "remote", r.RemoteAddr)
		http.Error(w, "signature does not match", http.StatusUnauthorized)
		return
	}
	var ev webhookEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		h.cfg.Observe("webhook", "invalid")
		http.Error(w, "body is not a PagerDuty webhook event", http.StatusBadRequest)
		return
	}
	e := ev.Event
	id := e.Data.IncidentKey
	if e.ResourceType != "incident" || id == "" || (e.EventType != "incident.acknowledged" && e.EventType != "incident.resolved") {
		h.cfg.Observe("webhook", "ignored")
		w.WriteHeader(http.StatusNoContent) // other events and incidents the bridge did not open
		return
	}
	by := "someone"
	if e.Agent != nil && e.Agent.Summary != "" {
		by = e.Agent.Summary
	}
	ctx, cancel := context.WithTimeout(r.Context(), 4*time.Second) // PagerDuty waits 5 s
	defer cancel()
	if e.EventType == "incident.acknowledged" {
		err = h.cfg.Incidents.PageAcknowledged(ctx, id, "PagerDuty", by, e.OccurredAt)
	} else {
		err = h.cfg.Incidents.PageResolved(ctx, id, "PagerDuty", by, e.OccurredAt)
	}
	switch {
	case err == nil:
		h.cfg.Observe("webhook", "accepted")
		w.WriteHeader(http.StatusNoContent)
	case domain.ErrorCode(err) == domain.ENotFound:
		h.cfg.Observe("webhook", "ignored") // not one of ours (or gone): nothing to retry
		w.WriteHeader(http.StatusNoContent)
	default:
		h.cfg.Observe("webhook", "failed")
		h.log.Error("handling a PagerDuty webhook failed", "event", e.EventType, "question", id, "err", err)
		http.Error(w, "try again", http.StatusServiceUnavailable) // PagerDuty retries
	}
}
