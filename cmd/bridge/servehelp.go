package main

import (
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
)

// serveEnvVar is one environment variable `askbridge serve` reads.
type serveEnvVar struct {
	name string
	// file: the variable also has a NAME_FILE form naming a file that
	// holds the value (Docker and Kubernetes secrets).
	file    bool
	meaning string
}

// serveEnv lists every environment variable `askbridge serve` reads, for its
// --help; a test checks it against the getenv calls of this package.
var serveEnv = []serveEnvVar{
	{"BRIDGE_ADDR", false, "listen address (the --addr flag wins)"},
	{"BRIDGE_CONFIG", false, "YAML configuration file (the --config flag wins)"},
	{"REDIS_URL", true, "redis://, rediss://, unix://, redis+sentinel://, redis+cluster:// (the --redis-url flag wins); empty: the embedded store"},
	{"BRIDGE_DATA_DIR", false, "the embedded store's data directory when there is no Redis URL (the --data-dir flag wins; default $XDG_STATE_HOME/askbridge)"},
	{"XDG_STATE_HOME", false, "the default data directory is $XDG_STATE_HOME/askbridge"},
	{"HOME", false, "without XDG_STATE_HOME, the default data directory is ~/.local/state/askbridge (neither set: in memory)"},
	{"BRIDGE_LOG_LEVEL", false, "debug, info (default), warn, error"},
	{"BRIDGE_WEBHOOK_SECRET", true, "signs resume webhooks; webhook mode is refused without one"},
	{"BRIDGE_CONNS_PER_IP", false, "how many connections one client address may hold open at once (default 16384; raise it behind a load balancer)"},
	{"BRIDGE_WEBHOOK_LEASE", false, "how long a replica holds a webhook delivery before another may take it over (default 60s)"},
	{"BRIDGE_WEBHOOK_ALLOW", false, "internal resume receivers admitted on purpose, comma-separated CIDRs, hosts or host:port (replaces webhooks.allow)"},
	{"BRIDGE_PUBLIC_URL", true, "the address people and platforms use to reach the bridge; its host and origin are admitted"},
	{"BRIDGE_METRICS_TOKEN", true, "when set, /metrics needs Authorization: Bearer <token>"},
	{"BRIDGE_WEB_SESSION_KEY", true, "key of the web inbox session cookies, the same on every replica (default: random per process)"},
	{"SLACK_BOT_TOKEN", true, "xoxb- token; enables the Slack adapter"},
	{"SLACK_SIGNING_SECRET", true, "verifies POST /slack/interactions and /slack/events"},
	{"SLACK_APP_TOKEN", true, "xapp- token; Socket Mode instead of the HTTP endpoints"},
	{"SLACK_API_URL", true, "Slack API base (default https://slack.com/api/)"},
	{"DISCORD_BOT_TOKEN", true, "enables the Discord adapter"},
	{"DISCORD_APPLICATION_ID", true, "the Discord application id"},
	{"DISCORD_PUBLIC_KEY", true, "hex Ed25519 key; enables POST /discord/interactions (else the gateway)"},
	{"DISCORD_API_URL", true, "Discord API base (default https://discord.com/api/v10)"},
	{"EMAIL_SMTP_URL", true, "smtp://user@host:587 (STARTTLS), smtps://user@host:465, smtp+insecure://127.0.0.1:25 (loopback only); enables email"},
	{"EMAIL_SMTP_PASSWORD", true, "the SMTP password"},
	{"EMAIL_FROM", true, "the sender of mailed questions, e.g. askbridge@example.com"},
	{"EMAIL_LINK_SECRET", true, "signs the answer links in mails (at least 32 characters)"},
	{"TELEGRAM_BOT_TOKEN", true, "BotFather's token; enables the Telegram adapter (telegram.token_file)"},
	{"TELEGRAM_WEBHOOK_SECRET", true, "secret_token of the webhook; enables POST /telegram/webhook (else getUpdates long polling)"},
	{"TELEGRAM_API_URL", true, "Bot API base (default https://api.telegram.org)"},
	{"BRIDGE_PAGERDUTY_EVENTS_URL", true, "PagerDuty Events API base (default https://events.pagerduty.com)"},
	{"BRIDGE_PAGERDUTY_API_URL", true, "PagerDuty REST API base (default https://api.pagerduty.com)"},
	{"BRIDGE_PAGERDUTY_API_TOKEN", true, "read-only PagerDuty API key; admits whoever is on call"},
	{"BRIDGE_PAGERDUTY_WEBHOOK_SECRET", true, "verifies POST /pagerduty/webhook"},
}

const serveIntro = `usage: askbridge serve [flags]

Runs the bridge: the HTTP API for agents, the web inbox at /, the Slack and
Discord adapters, the remote MCP endpoint at /mcp, and /healthz (liveness),
/readyz (readiness) and /metrics (Prometheus). Without a Redis URL it keeps
questions in its embedded store, on disk in the data directory (one process
per directory; --ephemeral: in memory only). Several replicas share one
Redis. With no agent or operator tokens configured it only listens on
loopback.
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
		fmt.Fprintf(tw, "  %s\t%s\n", name, v.meaning)
	}
	tw.Flush()
	fmt.Fprintln(w, "\n* also as NAME_FILE: the value is read from that file, e.g. SLACK_BOT_TOKEN_FILE=/run/secrets/slack-bot.")
	fmt.Fprintln(w, `
examples:
  askbridge serve                                        # embedded store, web inbox at http://127.0.0.1:8080/
  askbridge serve --data-dir /var/lib/askbridge          # embedded store in that directory
  REDIS_URL=redis://localhost:6379 askbridge serve --config bridge.yaml --addr 0.0.0.0:8080`)
}
