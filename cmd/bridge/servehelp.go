package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/askbridge/askbridge/adapters/discord"
	"github.com/askbridge/askbridge/adapters/pagerduty"
	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/teams"
	"github.com/askbridge/askbridge/adapters/telegram"
	"github.com/askbridge/askbridge/app"
)

//go:generate go test -count=1 -run ^TestOperationsDocListsEveryServeVariable$ . -args -update-docs

// serveEnvVar is one environment variable `askbridge serve` reads.
type serveEnvVar struct {
	name string
	// file: the variable also has a NAME_FILE form naming a file that
	// holds the value (Docker and Kubernetes secrets).
	file    bool
	meaning string
	// def is the value used when the variable is unset, as people read
	// it; "" when there is none (the feature is off).
	def string
}

// serveEnv lists every environment variable `askbridge serve` reads: its
// --help prints it, and docs/operations.md's table is generated from it
// (go generate); tests check it against the getenv calls of this package
// and the table against it.
var serveEnv = []serveEnvVar{
	{name: "BRIDGE_ADDR", meaning: "listen address (the --addr flag wins)", def: "127.0.0.1:8080"},
	{name: "BRIDGE_CONFIG", meaning: "YAML configuration file (the --config flag wins)"},
	{name: "REDIS_URL", file: true, meaning: "redis://, rediss://, unix://, Sentinel redis+sentinel://host:26379?master_name=m&addr=host2:26379, " +
		"Cluster redis+cluster://host:7000?addr=host:7001 (the --redis-url flag wins)", def: "none: the embedded store"},
	{name: "BRIDGE_DATA_DIR", meaning: "the embedded store's data directory when there is no Redis URL (the --data-dir flag wins), printed at start; " +
		"one process owns a directory; --data-dir '' or --ephemeral: in memory, lost on exit", def: "$XDG_STATE_HOME/askbridge, else ~/.local/state/askbridge"},
	{name: "XDG_STATE_HOME", meaning: "the default data directory is $XDG_STATE_HOME/askbridge"},
	{name: "HOME", meaning: "without XDG_STATE_HOME, the default data directory is ~/.local/state/askbridge (neither set: in memory)"},
	{name: "BRIDGE_LOG_LEVEL", meaning: "debug, info, warn or error", def: "info"},
	{name: "BRIDGE_WEBHOOK_SECRET", file: true, meaning: "signs resume webhooks; webhook mode is refused without one"},
	{name: "BRIDGE_CONNS_PER_IP", meaning: "how many connections one client address may hold open at once; raise it behind a load balancer", def: strconv.Itoa(app.DefaultConnsPerIP)},
	{name: "BRIDGE_WEBHOOK_LEASE", meaning: "how long a replica holds a webhook delivery before another may take it over (at least 1s; renewed while it is in flight)", def: "60s"},
	{name: "BRIDGE_WEBHOOK_ALLOW", meaning: "internal resume receivers admitted on purpose, comma-separated CIDRs, hosts or host:port " +
		"(replaces webhooks.allow; see docs/agents.md#resume-destinations)"},
	{name: "BRIDGE_PUBLIC_URL", file: true, meaning: "public_url: the address people and platforms use to reach the bridge; its host and origin are admitted"},
	{name: "BRIDGE_METRICS_TOKEN", file: true, meaning: "metrics.token: when set, /metrics needs this token as a bearer token"},
	{name: "BRIDGE_WEB_SESSION_KEY", file: true, meaning: "key of the web inbox session cookies, the same on every replica", def: "random per process"},
	{name: "SLACK_BOT_TOKEN", file: true, meaning: "xoxb- token; enables the Slack adapter (docs/slack.md)"},
	{name: "SLACK_SIGNING_SECRET", file: true, meaning: "verifies POST /slack/interactions and /slack/events"},
	{name: "SLACK_APP_TOKEN", file: true, meaning: "xapp- token; Socket Mode instead of the HTTP endpoints"},
	{name: "SLACK_API_URL", file: true, meaning: "Slack API base", def: slack.DefaultAPIURL},
	{name: "DISCORD_BOT_TOKEN", file: true, meaning: "enables the Discord adapter (docs/discord.md)"},
	{name: "DISCORD_APPLICATION_ID", file: true, meaning: "the Discord application id"},
	{name: "DISCORD_PUBLIC_KEY", file: true, meaning: "hex Ed25519 key; enables POST /discord/interactions (else the gateway)"},
	{name: "DISCORD_API_URL", file: true, meaning: "Discord API base", def: discord.DefaultAPIURL},
	{name: "EMAIL_SMTP_URL", file: true, meaning: "smtp://user@host:587 (STARTTLS), smtps://user@host:465, smtp+insecure://127.0.0.1:25 (loopback only); enables email (docs/email.md)"},
	{name: "EMAIL_SMTP_PASSWORD", file: true, meaning: "the SMTP password"},
	{name: "EMAIL_FROM", file: true, meaning: "the sender of mailed questions, e.g. askbridge@example.com"},
	{name: "EMAIL_LINK_SECRET", file: true, meaning: "signs the answer links in mails (at least 32 characters)"},
	{name: "TELEGRAM_BOT_TOKEN", file: true, meaning: "BotFather's token; enables the Telegram adapter (telegram.token_file; docs/telegram.md)"},
	{name: "TELEGRAM_WEBHOOK_SECRET", file: true, meaning: "secret_token of the webhook; enables POST /telegram/webhook (else getUpdates long polling)"},
	{name: "TELEGRAM_API_URL", file: true, meaning: "Bot API base", def: telegram.DefaultAPIURL},
	{name: "TEAMS_APP_ID", file: true, meaning: "the bot's Microsoft app id; enables the Microsoft Teams adapter, POST /teams/messages (docs/teams.md)"},
	{name: "TEAMS_APP_SECRET", file: true, meaning: "a client secret of the bot's app registration (teams.app_secret_file)"},
	{name: "TEAMS_TENANT_ID", file: true, meaning: "the Entra tenant of a single-tenant bot (its token endpoint)"},
	{name: "TEAMS_OPENID_METADATA_URL", file: true, meaning: "Bot Framework OpenID metadata (inbound token keys)", def: teams.DefaultOpenIDMetadataURL},
	{name: "TEAMS_TOKEN_URL", file: true, meaning: "identity platform token endpoint", def: "https://login.microsoftonline.com/<tenant or botframework.com>/oauth2/v2.0/token"},
	{name: "TEAMS_SERVICE_URL", file: true, meaning: "Bot Connector for conversations not heard from yet", def: teams.DefaultServiceURL},
	{name: "TEAMS_SERVICE_URL_ALLOW", meaning: "comma-separated serviceUrl hosts the bridge may call", def: strings.Join(teams.DefaultServiceURLAllow, ",")},
	{name: "BRIDGE_PAGERDUTY_EVENTS_URL", file: true, meaning: "PagerDuty Events API base (docs/pagerduty.md)", def: pagerduty.DefaultEventsURL},
	{name: "BRIDGE_PAGERDUTY_API_URL", file: true, meaning: "PagerDuty REST API base", def: pagerduty.DefaultAPIURL},
	{name: "BRIDGE_PAGERDUTY_API_TOKEN", file: true, meaning: "read-only PagerDuty API key; admits whoever is on call"},
	{name: "BRIDGE_PAGERDUTY_WEBHOOK_SECRET", file: true, meaning: "verifies POST /pagerduty/webhook"},
}

const serveIntro = `usage: askbridge serve [flags]

Runs the bridge: the HTTP API for agents, the web inbox at /, the Slack,
Discord, Telegram and Microsoft Teams adapters, email, PagerDuty pages, the remote MCP
endpoint at /mcp, and /healthz (liveness), /readyz (readiness) and /metrics
(Prometheus). Without a Redis URL it keeps questions in its embedded store,
on disk in the data directory (one process per directory; --ephemeral: in
memory only). Several replicas share one Redis. With no agent or operator
tokens configured it only listens on loopback.
SIGTERM drains in-flight work for up to 30 s, then exits.`

// writeServeUsage prints the help of `askbridge serve`: its flags and every
// environment variable it reads.
func writeServeUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, serveIntro)
	fmt.Fprintln(w, "\nflags:")
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
	fmt.Fprintln(w, "\nenvironment (flags override the environment, the environment overrides the config file):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, v := range serveEnv {
		name := v.name
		if v.file {
			name += " *"
		}
		meaning := v.meaning
		if v.def != "" {
			meaning += " (default " + v.def + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\n", name, meaning)
	}
	tw.Flush()
	fmt.Fprintln(w, "\n* also as NAME_FILE: the value is read from that file, e.g. SLACK_BOT_TOKEN_FILE=/run/secrets/slack-bot.")
	fmt.Fprintln(w, `
examples:
  askbridge serve                                        # embedded store, web inbox at http://127.0.0.1:8080/
  askbridge serve --data-dir /var/lib/askbridge          # embedded store in that directory
  REDIS_URL=redis://localhost:6379 askbridge serve --config bridge.yaml --addr 0.0.0.0:8080`)
}
