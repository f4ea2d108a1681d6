package app

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/pagerduty"
	"github.com/askbridge/askbridge/internal/outbound"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/server/api"
	"github.com/askbridge/askbridge/server/egress"
	"github.com/askbridge/askbridge/server/resume"
)

// PagerDutySettings enables paging through PagerDuty and on-call
// responders (docs/pagerduty.md).
type PagerDutySettings struct {
	// EventsURL and APIURL: pagerduty.events_url and pagerduty.api_url
	// (defaults PagerDuty's).
	EventsURL, APIURL string
	// APIToken is the read-only REST API key (pagerduty.api_token_file);
	// without it on-call responders admit nobody.
	APIToken string
	// WebhookSecrets verify POST /pagerduty/webhook
	// (pagerduty.webhook_secret_file); none: the endpoint is not served.
	WebhookSecrets []string
	// Profiles are the page settings of routes and escalation steps, by
	// the name their domain.Page carries.
	Profiles map[string]pagerduty.Profile
	// People maps PagerDuty users' emails to chat people.
	People map[string][]string
	// MaxLevel admits escalation policies' levels 1..MaxLevel (default 1).
	MaxLevel int
}

// addPagerDuty wires PagerDuty: the page sender on the deliverer, the
// on-call directory on the router, the webhook on the mux. Every request
// goes through the egress policy.
func (a *App) addPagerDuty(mux *http.ServeMux, policy *egress.Policy, metrics *api.Metrics) {
	pd := a.s.PagerDuty
	if pd == nil {
		return
	}
	log := a.log.With("adapter", pagerduty.Pager)
	client := pagerduty.NewClient(pagerduty.ClientConfig{EventsURL: pd.EventsURL, APIURL: pd.APIURL, APIToken: pd.APIToken,
		HTTP: a.pagerDutyClient(policy), UserAgent: "askbridge/" + a.s.Version, Logger: log})
	a.deliverer.AddSender(pageSender{pagerduty.NewSender(pagerduty.SenderConfig{Client: client, Questions: a.st,
		Profiles: pd.Profiles, PublicURL: a.s.PublicURL, Clock: a.s.Clock, Logger: log})})
	var lookup func(context.Context, string) (string, error)
	if a.slack != nil {
		lookup = a.slack.LookupByEmail // the person on call is the Slack user with their email
	}
	a.router.AddGroupResolver(pagerduty.NewResolver(pagerduty.ResolverConfig{Client: client, People: pd.People,
		MaxLevel: pd.MaxLevel, Clock: a.s.Clock, Lookup: lookup,
		Observe: func(op, outcome string) { metrics.SenderDelivery("pagerduty_"+op, outcome) }}))
	if len(pd.WebhookSecrets) > 0 {
		mux.Handle("POST "+pagerduty.WebhookPath, pagerduty.NewWebhook(pagerduty.WebhookConfig{Secrets: pd.WebhookSecrets,
			Incidents: a.router, Logger: log,
			Observe: func(op, outcome string) { metrics.SenderDelivery("pagerduty_"+op, outcome) }}))
	}
	log.Info("PagerDuty enabled", "pages", len(pd.Profiles), "webhook", len(pd.WebhookSecrets) > 0)
}

// pageSender tells the deliverer what the PagerDuty sender's failures mean
// (the adapter cannot import the deliverer).
type pageSender struct{ s *pagerduty.Sender }

func (p pageSender) Name() string { return p.s.Name() }

func (p pageSender) Send(ctx context.Context, d lifecycle.Delivery) error {
	err := p.s.Send(ctx, d)
	var refused *egress.RefusedError
	var pe *pagerduty.Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pagerduty.ErrDrop):
		return resume.ErrDrop
	case errors.As(err, &refused), lifecycle.IsPermanent(err):
		return resume.Permanent(err)
	case errors.As(err, &pe) && pe.RetryAfter() > 0:
		return resume.RetryAfter(err, pe.RetryAfter())
	}
	return err
}

// pagerDutyClient is the egress policy's client (PagerDuty's hosts are
// outbound destinations like any other), its calls counted as
// pagerduty's in the operational metrics.
func (a *App) pagerDutyClient(policy *egress.Policy) *http.Client {
	c := policy.Client(10 * time.Second)
	c.Transport = a.ops.Transport(c.Transport, "pagerduty", pagerDutyMethod)
	return c
}

// pagerDutyMethod names a PagerDuty call without its ids: enqueue,
// oncalls, users.
func pagerDutyMethod(r *http.Request) string {
	if strings.Contains(r.URL.Path, "/users/") {
		return "users"
	}
	return outbound.LastSegmentMethod(r)
}
