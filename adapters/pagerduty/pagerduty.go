// Package pagerduty pages people through PagerDuty and reads who is on
// call: the Events API v2 sender (trigger and resolve, one alert per
// question, dedup_key = the question id), the REST reader of /oncalls that
// admits whoever is on call as a responder, and the inbound webhooks v3
// endpoint (POST /pagerduty/webhook) that tells the bridge an incident was
// acknowledged or resolved in PagerDuty. docs/pagerduty.md says how to set
// it up.
package pagerduty

import (
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Defaults of the endpoints (settings pagerduty.events_url and
// pagerduty.api_url).
const (
	DefaultEventsURL = "https://events.pagerduty.com"
	DefaultAPIURL    = "https://api.pagerduty.com"
)

// Client talks to PagerDuty's Events API v2 and REST API.
type Client struct {
	eventsURL, apiURL string
	token             string
	http              *http.Client
	userAgent         string
	log               *slog.Logger
}

// ClientConfig configures a Client.
type ClientConfig struct {
	// EventsURL and APIURL default to PagerDuty's (an EU account, a proxy
	// or a test points elsewhere).
	EventsURL, APIURL string
	// APIToken is a read-only REST API key (pagerduty.api_token_file); only
	// the on-call reader needs it.
	APIToken string
	// HTTP is the client every request goes through. The application passes
	// the egress policy's client so the resume-destination rules apply to
	// PagerDuty too; nil: a client with a 10 s timeout.
	HTTP      *http.Client
	UserAgent string
	Logger    *slog.Logger
}

// NewClient builds a Client.
func NewClient(cfg ClientConfig) *Client {
	c := &Client{eventsURL: strings.TrimRight(cfg.EventsURL, "/"), apiURL: strings.TrimRight(cfg.APIURL, "/"),
		token: cfg.APIToken, http: cfg.HTTP, userAgent: cfg.UserAgent, log: cfg.Logger}
	if c.eventsURL == "" {
		c.eventsURL = DefaultEventsURL
	}
	if c.apiURL == "" {
		c.apiURL = DefaultAPIURL
	}
	if c.http == nil {
		c.http = &http.Client{Timeout: 10 * time.Second}
	}
	if c.userAgent == "" {
		c.userAgent = "askbridge"
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c
}
