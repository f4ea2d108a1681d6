package main

import (
	"fmt"
	"slices"

	"github.com/askbridge/askbridge/adapters/pagerduty"
	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"
)

// pagerdutyConfig is the file's pagerduty section (docs/pagerduty.md).
type pagerdutyConfig struct {
	EventsURL         string `yaml:"events_url"`
	APIURL            string `yaml:"api_url"`
	APIToken          string `yaml:"api_token"`
	APITokenFile      string `yaml:"api_token_file"`
	WebhookSecret     string `yaml:"webhook_secret"`
	WebhookSecretFile string `yaml:"webhook_secret_file"`
	// People maps PagerDuty users' emails to chat people ("discord:4455").
	People map[string][]string `yaml:"people"`
	// EscalationLevel admits escalation policies' levels 1..n (default 1).
	EscalationLevel int `yaml:"escalation_level"`
}

// pageConfig is page: on a route or an escalation step.
type pageConfig struct {
	PagerDuty *struct {
		RoutingKey     string `yaml:"routing_key"`
		RoutingKeyFile string `yaml:"routing_key_file"`
		Severity       string `yaml:"severity"`
	} `yaml:"pagerduty"`
}

// pagerDuty reads the pagerduty section and the page settings of the
// routes (routes[i] was read from rcs[i]), naming each after where it is.
func (p *configProblems) pagerDuty(fc *fileConfig, routes []domain.Route) *app.PagerDutySettings {
	c := fc.PagerDuty
	s := &app.PagerDutySettings{EventsURL: c.EventsURL, APIURL: c.APIURL, People: c.People, MaxLevel: c.EscalationLevel,
		Profiles: map[string]pagerduty.Profile{}}
	s.APIToken = p.secret("pagerduty.api_token", c.APIToken, c.APITokenFile)
	if sec := p.secret("pagerduty.webhook_secret", c.WebhookSecret, c.WebhookSecretFile); sec != "" {
		s.WebhookSecrets = []string{sec}
	}
	page := func(field string, pc *pageConfig) *domain.Page {
		if pc == nil {
			return nil
		}
		if pc.PagerDuty == nil {
			p.fail("%s: name the pager, e.g. page: {pagerduty: {routing_key_file: /run/secrets/pd-key, severity: critical}}", field)
			return nil
		}
		key := p.secret(field+".pagerduty.routing_key", pc.PagerDuty.RoutingKey, pc.PagerDuty.RoutingKeyFile)
		if key == "" && pc.PagerDuty.RoutingKeyFile == "" {
			p.fail("%s.pagerduty.routing_key_file: required (the Integration Key of an Events API v2 integration)", field)
		}
		if sev := pc.PagerDuty.Severity; sev != "" && !slices.Contains(pagerduty.Severities, sev) {
			p.fail("%s.pagerduty.severity: %q is not one of critical, error, warning, info", field, sev)
		}
		s.Profiles[field] = pagerduty.Profile{RoutingKey: key, Severity: pc.PagerDuty.Severity}
		return &domain.Page{Pager: pagerduty.Pager, Profile: field}
	}
	for i := range routes {
		if i >= len(fc.Routes) {
			break
		}
		rc := fc.Routes[i]
		routes[i].Page = page(fmt.Sprintf("routes[%d].page", i), rc.Page)
		for j := range routes[i].Escalation {
			if j < len(rc.Escalation) {
				routes[i].Escalation[j].Page = page(fmt.Sprintf("routes[%d].escalation[%d].page", i, j), rc.Escalation[j].Page)
			}
		}
	}
	if len(s.Profiles) == 0 && s.APIToken == "" && len(s.WebhookSecrets) == 0 && c.EventsURL == "" && c.APIURL == "" {
		return nil // PagerDuty is not configured
	}
	return s
}

// overlayPagerDuty applies the BRIDGE_PAGERDUTY_* variables.
func (e *serveEnvValues) overlayPagerDuty(s *settings) {
	if e.pdEventsURL == "" && e.pdAPIURL == "" && e.pdAPIToken == "" && e.pdWebhookSecret == "" {
		return
	}
	if s.PagerDuty == nil {
		s.PagerDuty = &app.PagerDutySettings{Profiles: map[string]pagerduty.Profile{}}
	}
	pd := s.PagerDuty
	if e.pdEventsURL != "" {
		pd.EventsURL = e.pdEventsURL
	}
	if e.pdAPIURL != "" {
		pd.APIURL = e.pdAPIURL
	}
	if e.pdAPIToken != "" {
		pd.APIToken = e.pdAPIToken
	}
	if e.pdWebhookSecret != "" {
		pd.WebhookSecrets = []string{e.pdWebhookSecret}
	}
}
