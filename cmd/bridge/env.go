package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/server/egress"
)

// serveEnvValues is every environment variable `askbridge serve` reads (and
// `askbridge health` reads BRIDGE_ADDR from), read and checked in one place:
// readServeEnv. servehelp.go's serveEnv lists the same names for --help.
type serveEnvValues struct {
	addr, config string
	// dataDir is BRIDGE_DATA_DIR, else the default under the user's state
	// directory ("" when neither XDG_STATE_HOME nor HOME is known).
	dataDir  string
	logLevel slog.Level
	// Set values override the configuration file; empty ones leave it.
	redisURL, webhookSecret, publicURL, metricsToken, sessionKey   string
	slackBotToken, slackSigningSecret, slackAppToken, slackAPIURL  string
	discordBotToken, discordAppID, discordPublicKey, discordAPIURL string
	emailSMTPURL, emailSMTPPassword, emailFrom, emailLinkSecret    string
	telegramToken, telegramWebhookSecret, telegramAPIURL           string
	webhookAllow                                                   []string
	webhookLease                                                   time.Duration
	connsPerIP                                                     int
	pdEventsURL, pdAPIURL, pdAPIToken, pdWebhookSecret             string
	teams                                                          teamsEnv
	// problems are the bad values, each naming its variable and the fix.
	problems []string
	// getenv reads the OpenTelemetry variables (OTEL_*; internal/tracing).
	getenv func(string) string
}

// readServeEnv reads every environment variable of `askbridge serve` and
// checks each value: a value that cannot be used is a problem naming the
// variable, never silently replaced by a default.
func readServeEnv(getenv func(string) string) *serveEnvValues {
	e := &serveEnvValues{addr: "127.0.0.1:8080", logLevel: slog.LevelInfo, getenv: getenv}
	fail := func(format string, args ...any) { e.problems = append(e.problems, fmt.Sprintf(format, args...)) }
	// env reads NAME, then NAME_FILE (a file holding the value) over it.
	env := func(name string, dst *string) {
		if v := getenv(name); v != "" {
			*dst = v
		}
		if file := getenv(name + "_FILE"); file != "" {
			b, err := os.ReadFile(file)
			if err != nil {
				fail("%s_FILE: %v", name, err)
				return
			}
			*dst = strings.TrimSpace(string(b))
		}
	}
	// envURL is env for an address, refused unless http(s) without a user
	// name or password.
	envURL := func(name string, dst *string, example string) {
		env(name, dst)
		if *dst != "" && !webURL(*dst) {
			fail("%s: %q must be an http:// or https:// address without a user name or password, such as %s", name, shownURL(*dst), example)
		}
	}

	if v := getenv("BRIDGE_ADDR"); v != "" {
		if _, _, err := net.SplitHostPort(v); err != nil {
			fail("BRIDGE_ADDR: %q is not a listen address (write host:port, e.g. 127.0.0.1:8080 or 0.0.0.0:8080)", v)
		} else {
			e.addr = v
		}
	}
	e.config = getenv("BRIDGE_CONFIG")
	e.dataDir = getenv("BRIDGE_DATA_DIR")
	if e.dataDir == "" {
		e.dataDir = defaultDataDir(getenv)
	}
	if v := getenv("BRIDGE_LOG_LEVEL"); v != "" {
		if err := e.logLevel.UnmarshalText([]byte(strings.TrimSpace(v))); err != nil {
			e.logLevel = slog.LevelInfo
			fail("BRIDGE_LOG_LEVEL: %q is not a log level (write debug, info, warn or error)", v)
		}
	}
	env("REDIS_URL", &e.redisURL)
	env("BRIDGE_WEBHOOK_SECRET", &e.webhookSecret)
	if v := getenv("BRIDGE_WEBHOOK_LEASE"); v != "" {
		d, err := domain.ParseDuration(v)
		switch {
		case err != nil:
			fail("BRIDGE_WEBHOOK_LEASE: %q is not a duration (write e.g. 60s or 2m)", v)
		case d < time.Second:
			fail("BRIDGE_WEBHOOK_LEASE: %s is too short (at least 1s; leases are renewed every third of it)", d)
		default:
			e.webhookLease = d
		}
	}
	if v := getenv("BRIDGE_WEBHOOK_ALLOW"); v != "" {
		e.webhookAllow = strings.Split(v, ",")
		if _, err := egress.New(egress.Config{Allow: e.webhookAllow}); err != nil {
			fail("BRIDGE_WEBHOOK_ALLOW: %v (each entry: a CIDR like 10.0.0.0/8, an address, host, host:port or *.domain)", err)
		}
	}
	if v := getenv("BRIDGE_CONNS_PER_IP"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			fail("BRIDGE_CONNS_PER_IP: %q must be a whole number of connections, at least 1 (default %d)", v, app.DefaultConnsPerIP)
		} else {
			e.connsPerIP = n
		}
	}
	envURL("BRIDGE_PUBLIC_URL", &e.publicURL, "https://bridge.example.com")
	env("BRIDGE_METRICS_TOKEN", &e.metricsToken)
	env("BRIDGE_WEB_SESSION_KEY", &e.sessionKey)
	env("SLACK_BOT_TOKEN", &e.slackBotToken)
	env("SLACK_SIGNING_SECRET", &e.slackSigningSecret)
	env("SLACK_APP_TOKEN", &e.slackAppToken)
	envURL("SLACK_API_URL", &e.slackAPIURL, "https://slack.com/api/")
	env("DISCORD_BOT_TOKEN", &e.discordBotToken)
	env("DISCORD_APPLICATION_ID", &e.discordAppID)
	env("DISCORD_PUBLIC_KEY", &e.discordPublicKey)
	envURL("DISCORD_API_URL", &e.discordAPIURL, "https://discord.com/api/v10")
	env("EMAIL_SMTP_URL", &e.emailSMTPURL)
	env("EMAIL_SMTP_PASSWORD", &e.emailSMTPPassword)
	env("EMAIL_FROM", &e.emailFrom)
	env("EMAIL_LINK_SECRET", &e.emailLinkSecret)
	env("TELEGRAM_BOT_TOKEN", &e.telegramToken)
	env("TELEGRAM_WEBHOOK_SECRET", &e.telegramWebhookSecret)
	envURL("TELEGRAM_API_URL", &e.telegramAPIURL, "https://api.telegram.org")
	e.readTeamsEnv(getenv, env, envURL)
	envURL("BRIDGE_PAGERDUTY_EVENTS_URL", &e.pdEventsURL, "https://events.pagerduty.com")
	envURL("BRIDGE_PAGERDUTY_API_URL", &e.pdAPIURL, "https://api.pagerduty.com")
	env("BRIDGE_PAGERDUTY_API_TOKEN", &e.pdAPIToken)
	env("BRIDGE_PAGERDUTY_WEBHOOK_SECRET", &e.pdWebhookSecret)
	return e
}

// overlay applies the set variables over the configuration file's values.
func (e *serveEnvValues) overlay(s *settings) {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&s.RedisURL, e.redisURL)
	set(&s.WebhookSecret, e.webhookSecret)
	set(&s.PublicURL, e.publicURL)
	set(&s.MetricsToken, e.metricsToken)
	set(&s.SessionKey, e.sessionKey)
	set(&s.Slack.BotToken, e.slackBotToken)
	set(&s.Slack.SigningSecret, e.slackSigningSecret)
	set(&s.Slack.AppToken, e.slackAppToken)
	set(&s.Slack.APIURL, e.slackAPIURL)
	set(&s.Discord.BotToken, e.discordBotToken)
	set(&s.Discord.ApplicationID, e.discordAppID)
	set(&s.Discord.PublicKey, e.discordPublicKey)
	set(&s.Discord.APIURL, e.discordAPIURL)
	set(&s.Email.SMTPURL, e.emailSMTPURL)
	set(&s.Email.SMTPPassword, e.emailSMTPPassword)
	set(&s.Email.From, e.emailFrom)
	set(&s.Email.LinkSecret, e.emailLinkSecret)
	set(&s.Telegram.Token, e.telegramToken)
	set(&s.Telegram.WebhookSecret, e.telegramWebhookSecret)
	set(&s.Telegram.APIURL, e.telegramAPIURL)
	e.overlayPagerDuty(s)
	e.overlayTeams(s)
	if e.webhookAllow != nil {
		s.WebhookAllow = e.webhookAllow
	}
	if e.webhookLease != 0 {
		s.WebhookLease = e.webhookLease
	}
	if e.connsPerIP != 0 {
		s.ConnsPerIP = e.connsPerIP
	}
}

// defaultDataDir is where the embedded store keeps its data by default:
// $XDG_STATE_HOME/askbridge, else ~/.local/state/askbridge; "" when
// neither is known (the store then keeps everything in memory).
func defaultDataDir(getenv func(string) string) string {
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "askbridge")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "askbridge")
	}
	return ""
}

// shownURL is a URL setting as an error may show it: whatever stands
// before an @ after the scheme (a user name, a password, a token) is
// masked, as the Redis URL's password is.
func shownURL(s string) string {
	return userinfo.ReplaceAllString(s, "${1}xxxxx@")
}

var userinfo = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.\-]*:(?://)?)[^/?#]*@`)

// webURL reports whether s is an absolute http(s) address without a user
// name or password.
func webURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil
}
