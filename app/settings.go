package app

import (
	"log/slog"
	"slices"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/discord"
	"github.com/askbridge/askbridge/adapters/email"
	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/teams"
	"github.com/askbridge/askbridge/adapters/telegram"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/server/api"

	"go.opentelemetry.io/otel/trace"
)

// Settings is everything one bridge needs: the resolved configuration of
// `askbridge serve` (file, then environment, then flags), or what a benchmark
// or a test sets to point it at fakes.
type Settings struct {
	// Version is the build's version, reported to MCP clients as
	// serverInfo.version ("dev" when empty).
	Version string
	// Addr is the listen address (default 127.0.0.1:8080; ":0" or
	// "127.0.0.1:0" picks a free port).
	Addr     string
	RedisURL string // empty: the embedded store (DataDir)
	// DataDir is the embedded store's data directory when RedisURL is
	// empty; empty keeps everything in memory (lost on restart).
	DataDir     string
	RedisPrefix string
	Timeout     time.Duration
	Retention   time.Duration
	// BatchWindow is defaults.batch_window (domain.DefaultBatchWindow when 0).
	BatchWindow time.Duration
	// WebhookSecret signs resume webhooks of agents without their own.
	WebhookSecret string
	// WebhookAllow is webhooks.allow (or BRIDGE_WEBHOOK_ALLOW).
	WebhookAllow []string
	// WebhookGiveUp is webhooks.give_up_after (default 24h).
	WebhookGiveUp time.Duration
	// WebhookLease is BRIDGE_WEBHOOK_LEASE (default 60s).
	WebhookLease time.Duration
	// ConnsPerIP bounds the connections one client address may hold open
	// (0: DefaultConnsPerIP).
	ConnsPerIP int
	// AcceptAtOnce bounds the new connections busy with their first
	// request at once: more wait to be accepted (internal/admit); 0:
	// admit.AcceptPerCore per core; negative: no bound.
	AcceptAtOnce int
	Agents       []api.Agent
	Operators    []api.Operator
	Routes       []domain.Route
	// Slack and Discord are enabled when their BotToken is set.
	Slack   slack.Config
	Discord discord.Config
	// Telegram is enabled when its Token is set (docs/telegram.md).
	Telegram telegram.Config
	// Teams is enabled when its AppID is set (docs/teams.md).
	Teams teams.Config
	// PagerDuty, when set, pages and admits whoever is on call.
	PagerDuty     *PagerDutySettings
	SessionKey    string
	SecureCookies bool
	// ImageHosts are the hosts the web inbox loads question pictures from
	// (web.image_hosts).
	ImageHosts   []string
	PublicURL    string
	MetricsToken string
	// TracingEndpoint is tracing.endpoint (internal/tracing.Config); the
	// command builds TracerProvider from it and the OTEL_* variables.
	TracingEndpoint string
	// TracerProvider records the bridge's spans (nil: none recorded).
	TracerProvider trace.TracerProvider

	// Email is enabled when its SMTPURL is set (PublicURL, when empty, is
	// the bridge's).
	Email email.Config

	// Sweep is the deadline sweeper's interval (default 250ms).
	Sweep time.Duration
	// Logger receives every component's log (default: discarded).
	Logger *slog.Logger
	// Clock and PostTimeout, if set, are the router's (tests).
	Clock       lifecycle.Clock
	PostTimeout time.Duration
	// MCPProgressEvery, if set, is how often /mcp's waiting calls report
	// progress (default 15s; tests).
	MCPProgressEvery time.Duration
	// MCPSessionTimeout, if set, is how long a /mcp session may idle
	// (default 10m; tests).
	MCPSessionTimeout time.Duration
}

// WebhookSecretFor returns the signing secret for an agent: its own, else
// the bridge's.
func (s *Settings) WebhookSecretFor(agentID string) []byte {
	i := slices.IndexFunc(s.Agents, func(a api.Agent) bool { return a.ID == agentID })
	if i >= 0 && s.Agents[i].WebhookSecret != "" {
		return []byte(s.Agents[i].WebhookSecret)
	}
	return []byte(s.WebhookSecret)
}
