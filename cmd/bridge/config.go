package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/discord"
	"github.com/askbridge/askbridge/adapters/email"
	"github.com/askbridge/askbridge/adapters/pagerduty"
	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/teams"
	"github.com/askbridge/askbridge/adapters/web"
	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/server/api"
	"github.com/askbridge/askbridge/server/egress"
	"gopkg.in/yaml.v3"
)

// fileConfig is the YAML configuration file (docs/operations.md "Configuration file"). Unknown keys are
// errors; every secret also has a <key>_file form.
type fileConfig struct {
	Defaults struct {
		Timeout   duration `yaml:"timeout"`
		Retention duration `yaml:"retention"`
		// BatchWindow: approvals of a run asked this close together form
		// one batch (domain/batch.go).
		BatchWindow duration `yaml:"batch_window"`
	} `yaml:"defaults"`
	Webhooks struct {
		Secret     string `yaml:"secret"`
		SecretFile string `yaml:"secret_file"`
		// Allow admits internal resume receivers (CIDRs, addresses,
		// host[:port], *.domain) that the egress policy refuses by default.
		Allow       []string `yaml:"allow"`
		GiveUpAfter duration `yaml:"give_up_after"`
	} `yaml:"webhooks"`
	Redis struct {
		URL     string `yaml:"url"`
		URLFile string `yaml:"url_file"`
		Prefix  string `yaml:"prefix"`
	} `yaml:"redis"`
	Agents    []agentConfig    `yaml:"agents"`
	Operators []operatorConfig `yaml:"operators"`
	Routes    []routeConfig    `yaml:"routes"`
	Slack     struct {
		BotToken          string `yaml:"bot_token"`
		BotTokenFile      string `yaml:"bot_token_file"`
		SigningSecret     string `yaml:"signing_secret"`
		SigningSecretFile string `yaml:"signing_secret_file"`
		AppToken          string `yaml:"app_token"`
		AppTokenFile      string `yaml:"app_token_file"`
		APIURL            string `yaml:"api_url"`
	} `yaml:"slack"`
	Discord struct {
		BotToken      string `yaml:"bot_token"`
		BotTokenFile  string `yaml:"bot_token_file"`
		ApplicationID string `yaml:"application_id"`
		PublicKey     string `yaml:"public_key"`
		APIURL        string `yaml:"api_url"`
	} `yaml:"discord"`
	Email struct {
		SMTPURL          string `yaml:"smtp_url"`
		SMTPPassword     string `yaml:"smtp_password"`
		SMTPPasswordFile string `yaml:"smtp_password_file"`
		From             string `yaml:"from"`
		LinkSecret       string `yaml:"link_secret"`
		LinkSecretFile   string `yaml:"link_secret_file"`
	} `yaml:"email"`
	Telegram struct {
		Token             string `yaml:"token"`
		TokenFile         string `yaml:"token_file"`
		APIURL            string `yaml:"api_url"`
		WebhookSecret     string `yaml:"webhook_secret"`
		WebhookSecretFile string `yaml:"webhook_secret_file"`
	} `yaml:"telegram"`
	PagerDuty pagerdutyConfig `yaml:"pagerduty"`
	Teams     teamsConfig     `yaml:"teams"`
	// PublicURL is where people and platforms reach the bridge; its host
	// is admitted by the guard against web pages.
	PublicURL string `yaml:"public_url"`
	Metrics   struct {
		Token     string `yaml:"token"`
		TokenFile string `yaml:"token_file"`
	} `yaml:"metrics"`
	// Tracing: OTLP/HTTP export of traces (docs/operations.md, Tracing);
	// the standard OTEL_* variables apply too.
	Tracing struct {
		Endpoint string `yaml:"endpoint"`
	} `yaml:"tracing"`
	Web struct {
		SessionKey     string `yaml:"session_key"`
		SessionKeyFile string `yaml:"session_key_file"`
		Secure         bool   `yaml:"secure_cookies"`
		// ImageHosts: the hosts the inbox loads question pictures from.
		ImageHosts []string `yaml:"image_hosts"`
	} `yaml:"web"`
}

type agentConfig struct {
	ID                string   `yaml:"id"`
	Project           string   `yaml:"project"`
	Token             string   `yaml:"token"`
	TokenFile         string   `yaml:"token_file"`
	Tools             []string `yaml:"tools"`
	Route             string   `yaml:"route"`
	WebhookSecret     string   `yaml:"webhook_secret"`
	WebhookSecretFile string   `yaml:"webhook_secret_file"`
}

type operatorConfig struct {
	ID        string   `yaml:"id"`
	Projects  []string `yaml:"projects"`
	Token     string   `yaml:"token"`
	TokenFile string   `yaml:"token_file"`
	// ActFor makes the operator a relay: it may answer for the person
	// named in responded_by (a team's chat bot relaying answers).
	ActFor bool `yaml:"act_for"`
}

type routeConfig struct {
	Name              string           `yaml:"name"`
	Default           bool             `yaml:"default"`
	Targets           []targetConfig   `yaml:"targets"`
	Responders        respondersConfig `yaml:"responders"`
	Thread            string           `yaml:"thread"`
	Timeout           duration         `yaml:"timeout"`
	ApprovalsRequired int              `yaml:"approvals_required"`
	OnTimeout         *struct {
		Answer      string `yaml:"answer"`
		UseDefaults bool   `yaml:"use_defaults"`
	} `yaml:"on_timeout"`
	SuggestFromHistory bool `yaml:"suggest_from_history"`
	Escalation         []struct {
		After      duration          `yaml:"after"`
		Remind     bool              `yaml:"remind"`
		Targets    []targetConfig    `yaml:"targets"`
		Responders *respondersConfig `yaml:"responders"`
		Page       *pageConfig       `yaml:"page"`
	} `yaml:"escalation"`
	Page *pageConfig `yaml:"page"`
	// Approvals of tool calls (domain/action.go, domain/autoallow.go).
	AllowEdit   *bool    `yaml:"allow_edit"`
	AutoAllow   []string `yaml:"auto_allow"`
	BatchWindow duration `yaml:"batch_window"`
	// Email: {require_login: true} takes answers from email links only
	// from a browser signed in to the web inbox.
	Email *struct {
		RequireLogin bool `yaml:"require_login"`
	} `yaml:"email"`
}

type respondersConfig struct {
	Users            []string `yaml:"users"`
	SlackUsergroups  []string `yaml:"slack_usergroups"`
	DiscordRoles     []string `yaml:"discord_roles"`
	EmailDomains     []string `yaml:"email_domains"`
	ExcludeRequester bool     `yaml:"exclude_requester"`
	// Whoever is on call in PagerDuty (docs/pagerduty.md).
	PagerDutySchedules          []string `yaml:"pagerduty_schedules"`
	PagerDutyEscalationPolicies []string `yaml:"pagerduty_escalation_policies"`
}

// core returns the responders; the groups go under the kinds the Slack and
// Discord surfaces register.
func (r respondersConfig) core() domain.Responders {
	out := domain.Responders{Users: r.Users, ExcludeRequester: r.ExcludeRequester}
	return out.WithGroup(slack.GroupKind, r.SlackUsergroups...).WithGroup(discord.GroupKind, r.DiscordRoles...).
		WithGroup(email.GroupKind, r.EmailDomains...).
		WithGroup(pagerduty.KindSchedules, r.PagerDutySchedules...).WithGroup(pagerduty.KindPolicies, r.PagerDutyEscalationPolicies...)
}

type targetConfig struct {
	Platform string   `yaml:"platform"`
	Channel  string   `yaml:"channel"`
	ThreadTS string   `yaml:"thread_ts"`
	To       []string `yaml:"to"` // email
	// Chat and Thread are Telegram's names for channel and thread_ts
	// ({platform: telegram, chat: "-100…", thread: 42}).
	Chat   string `yaml:"chat"`
	Thread string `yaml:"thread"`
}

// duration reads "30m", "168h", "7d" or seconds.
type duration time.Duration

func (d *duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: must be a duration such as 30s, 30m, 168h or 7d", n.Line)
	}
	v, err := domain.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %v", n.Line, err)
	}
	*d = duration(v)
	return nil
}

// settings is the resolved configuration: file, then environment.
type settings = app.Settings

// loadConfig reads the file at path (may be empty) and applies the
// environment. Errors name the file, line and key, never a secret's value.
func loadConfig(path string, getenv func(string) string) (*settings, error) {
	return resolveConfig(path, readServeEnv(getenv))
}

// resolveConfig reads the file at path (may be empty), applies the
// environment e over it and checks the result, reporting every problem at
// once: the file's, the environment's, then those of the combination.
func resolveConfig(path string, e *serveEnvValues) (*settings, error) {
	fc, lines, err := readConfigFile(path)
	if err != nil {
		return nil, err
	}
	var p, combined configProblems
	s := p.fromFile(fc)
	e.overlay(s)
	combined.check(s, fc, e)
	// Problems that name a key of the file carry its line, as the
	// structural ones do; the environment's name their variable.
	p = append(append(p.withLines(lines), e.problems...), combined.withLines(lines)...)
	if len(p) > 0 {
		where := "configuration"
		if path != "" {
			where = "config " + path
		}
		return nil, fmt.Errorf("%s:\n  %s", where, strings.Join(p, "\n  "))
	}
	return s, nil
}

// readConfigFile decodes the YAML file at path, with the line of every key
// and list item by its path (configLines); no path is an empty file.
func readConfigFile(path string) (*fileConfig, map[string]int, error) {
	var fc fileConfig
	if path == "" {
		return &fc, nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("config: %v", err)
	}
	lines, err := decodeConfig(b, &fc)
	if err != nil {
		return nil, nil, fmt.Errorf("config %s:\n  %s", path, err)
	}
	return &fc, lines, nil
}

// configProblems collects the problems of a configuration, one line each.
type configProblems []string

func (p *configProblems) fail(format string, args ...any) {
	*p = append(*p, fmt.Sprintf(format, args...))
}

// secret returns a secret given inline or as a key_file.
func (p *configProblems) secret(key, val, file string) string {
	if val != "" && file != "" {
		p.fail("%s and %s_file are both set; keep one", key, key)
	}
	if file == "" {
		return val
	}
	b, err := os.ReadFile(file)
	if err != nil {
		p.fail("%s_file: %v", key, err)
		return ""
	}
	return strings.TrimSpace(string(b))
}

// fromFile turns the file's values into settings, with defaults.
func (p *configProblems) fromFile(fc *fileConfig) *settings {
	s := &settings{Timeout: time.Duration(fc.Defaults.Timeout), Retention: time.Duration(fc.Defaults.Retention),
		BatchWindow: time.Duration(fc.Defaults.BatchWindow),
		RedisPrefix: fc.Redis.Prefix, SecureCookies: fc.Web.Secure, ImageHosts: fc.Web.ImageHosts}
	for i, h := range fc.Web.ImageHosts {
		if err := web.CheckImageHost(h); err != nil {
			p.fail("web.image_hosts[%d]: %q is not a host name such as img.example.com or *.example.com (no scheme, port or path)", i, h)
		}
	}
	s.WebhookSecret = p.secret("webhooks.secret", fc.Webhooks.Secret, fc.Webhooks.SecretFile)
	s.WebhookAllow, s.WebhookGiveUp = fc.Webhooks.Allow, time.Duration(fc.Webhooks.GiveUpAfter)
	if s.WebhookGiveUp == 0 {
		s.WebhookGiveUp = 24 * time.Hour
	}
	if s.WebhookGiveUp < time.Minute || s.WebhookGiveUp > domain.MaxTimeout {
		p.fail("webhooks.give_up_after: must be between 1m and 720h (how long a resume webhook is retried)")
	}
	s.RedisURL = p.secret("redis.url", fc.Redis.URL, fc.Redis.URLFile)
	s.Slack.BotToken = p.secret("slack.bot_token", fc.Slack.BotToken, fc.Slack.BotTokenFile)
	s.Slack.SigningSecret = p.secret("slack.signing_secret", fc.Slack.SigningSecret, fc.Slack.SigningSecretFile)
	s.Slack.AppToken = p.secret("slack.app_token", fc.Slack.AppToken, fc.Slack.AppTokenFile)
	s.Slack.APIURL = fc.Slack.APIURL
	s.Discord.BotToken = p.secret("discord.bot_token", fc.Discord.BotToken, fc.Discord.BotTokenFile)
	s.Discord.ApplicationID, s.Discord.PublicKey, s.Discord.APIURL = fc.Discord.ApplicationID, fc.Discord.PublicKey, fc.Discord.APIURL
	s.Email.SMTPURL, s.Email.From = fc.Email.SMTPURL, fc.Email.From
	s.Email.SMTPPassword = p.secret("email.smtp_password", fc.Email.SMTPPassword, fc.Email.SMTPPasswordFile)
	s.Email.LinkSecret = p.secret("email.link_secret", fc.Email.LinkSecret, fc.Email.LinkSecretFile)
	s.Telegram.Token = p.secret("telegram.token", fc.Telegram.Token, fc.Telegram.TokenFile)
	s.Telegram.WebhookSecret = p.secret("telegram.webhook_secret", fc.Telegram.WebhookSecret, fc.Telegram.WebhookSecretFile)
	s.Telegram.APIURL = fc.Telegram.APIURL
	p.teamsFromFile(fc, s)
	s.SessionKey = p.secret("web.session_key", fc.Web.SessionKey, fc.Web.SessionKeyFile)
	s.MetricsToken = p.secret("metrics.token", fc.Metrics.Token, fc.Metrics.TokenFile)
	s.TracingEndpoint = fc.Tracing.Endpoint
	s.PublicURL = fc.PublicURL
	if s.Timeout != 0 && (s.Timeout < domain.MinTimeout || s.Timeout > domain.MaxTimeout) {
		p.fail("defaults.timeout: must be between 10s and 720h")
	}
	if s.BatchWindow < 0 || s.BatchWindow > domain.MaxBatchWindow {
		p.fail("defaults.batch_window: must be between 0s and %s (0s: the default, %s)", domain.MaxBatchWindow, domain.DefaultBatchWindow)
	}
	s.Routes = p.routes(fc.Routes)
	s.PagerDuty = p.pagerDuty(fc, s.Routes)
	s.Agents = p.agents(fc.Agents, s.Routes)
	s.Operators = p.operators(fc.Operators)
	return s
}

// routes reads the routes of the file; domain.ValidateRoute holds the rules
// they share with the ask path.
func (p *configProblems) routes(rcs []routeConfig) []domain.Route {
	var routes []domain.Route
	routeNames := map[string]bool{}
	defaults := 0
	targets := func(ts []targetConfig) []domain.Target {
		var out []domain.Target
		for _, t := range ts {
			if t.Channel == "" {
				t.Channel = t.Chat
			}
			if t.ThreadTS == "" {
				t.ThreadTS = t.Thread
			}
			out = append(out, domain.CleanTarget(domain.Target{Platform: t.Platform, Channel: t.Channel, ThreadTS: t.ThreadTS, To: t.To}))
		}
		return out
	}
	for i, rc := range rcs {
		if rc.Name != "" && routeNames[rc.Name] {
			p.fail("routes[%d].name: route %q is defined twice", i, rc.Name)
		}
		routeNames[rc.Name] = true
		if rc.Default {
			defaults++
		}
		r := domain.Route{Name: rc.Name, Default: rc.Default, Thread: rc.Thread, Timeout: time.Duration(rc.Timeout),
			Targets: targets(rc.Targets), Responders: rc.Responders.core(), ApprovalsRequired: rc.ApprovalsRequired,
			NoEdit: rc.AllowEdit != nil && !*rc.AllowEdit, AutoAllow: rc.AutoAllow, BatchWindow: time.Duration(rc.BatchWindow),
			SuggestFromHistory: rc.SuggestFromHistory, EmailRequireLogin: rc.Email != nil && rc.Email.RequireLogin}
		if rc.OnTimeout != nil {
			r.OnTimeout = &domain.OnTimeout{Answer: rc.OnTimeout.Answer, UseDefaults: rc.OnTimeout.UseDefaults}
		}
		for _, e := range rc.Escalation {
			step := domain.EscalationStep{After: domain.Duration(e.After), Remind: e.Remind, Targets: targets(e.Targets)}
			if e.Page != nil {
				step.Page = &domain.Page{} // filled in by pagerDuty, which reads the pager's settings
			}
			if e.Responders != nil {
				rs := e.Responders.core()
				step.Responders = &rs
			}
			r.Escalation = append(r.Escalation, step)
		}
		for _, d := range domain.ValidateRoute(r) {
			p.fail("routes[%d].%s: %s", i, d.Field, d.Problem)
		}
		routes = append(routes, r)
	}
	if defaults > 1 {
		p.fail("routes: %d routes are marked default; mark at most one", defaults)
	}
	return routes
}

// agents reads the agents of the file; routes are the routes read.
func (p *configProblems) agents(acs []agentConfig, routes []domain.Route) []api.Agent {
	var agents []api.Agent
	seen := map[string]bool{}
	for i, ac := range acs {
		f := fmt.Sprintf("agents[%d]", i)
		if ac.ID == "" {
			p.fail("%s.id: required", f)
		} else if seen[ac.ID] {
			p.fail("%s.id: agent %q is defined twice", f, ac.ID)
		}
		seen[ac.ID] = true
		if ac.Project == "" {
			p.fail("%s.project: required", f)
		}
		tok := p.secret(f+".token", ac.Token, ac.TokenFile)
		if tok == "" {
			p.fail("%s.token: required (or token_file)", f)
		}
		for _, t := range ac.Tools {
			if t != "ask_user" {
				p.fail("%s.tools: unknown tool %q (known: ask_user)", f, t)
			}
		}
		if ac.Route != "" && !slices.ContainsFunc(routes, func(r domain.Route) bool { return r.Name == ac.Route }) {
			p.fail("%s.route: no route named %q", f, ac.Route)
		}
		agents = append(agents, api.Agent{ID: ac.ID, Project: ac.Project, Token: tok, Tools: ac.Tools,
			Route: ac.Route, WebhookSecret: p.secret(f+".webhook_secret", ac.WebhookSecret, ac.WebhookSecretFile)})
	}
	return agents
}

// operators reads the operators of the file.
func (p *configProblems) operators(ocs []operatorConfig) []api.Operator {
	var ops []api.Operator
	for i, oc := range ocs {
		f := fmt.Sprintf("operators[%d]", i)
		if oc.ID == "" {
			p.fail("%s.id: required", f)
		}
		if len(oc.Projects) == 0 {
			p.fail("%s.projects: list the projects (or \"*\" for all)", f)
		}
		tok := p.secret(f+".token", oc.Token, oc.TokenFile)
		if tok == "" {
			p.fail("%s.token: required (or token_file)", f)
		}
		ops = append(ops, api.Operator{ID: oc.ID, Projects: oc.Projects, Token: tok, ActFor: oc.ActFor})
	}
	return ops
}

// check validates what depends on the file and the environment together;
// values the environment set were checked, naming their variable, by
// readServeEnv.
func (p *configProblems) check(s *settings, fc *fileConfig, e *serveEnvValues) {
	if e.publicURL == "" && s.PublicURL != "" && !webURL(s.PublicURL) {
		p.fail("public_url: %q must be an http:// or https:// address without a user name or password, such as https://bridge.example.com", shownURL(s.PublicURL))
	}
	if e.webhookAllow == nil {
		if _, err := egress.New(egress.Config{Allow: fc.Webhooks.Allow}); err != nil {
			p.fail("webhooks.allow: %v (each entry: a CIDR like 10.0.0.0/8, an address, host, host:port or *.domain)", err)
		}
	}
	if e.slackAPIURL == "" && s.Slack.APIURL != "" && !webURL(s.Slack.APIURL) {
		p.fail("slack.api_url: %q must be an http:// or https:// address without a user name or password, such as https://slack.com/api/", shownURL(s.Slack.APIURL))
	}
	if e.discordAPIURL == "" && s.Discord.APIURL != "" && !webURL(s.Discord.APIURL) {
		p.fail("discord.api_url: %q must be an http:// or https:// address without a user name or password, such as https://discord.com/api/v10", shownURL(s.Discord.APIURL))
	}
	if e.telegramAPIURL == "" && s.Telegram.APIURL != "" && !webURL(s.Telegram.APIURL) {
		p.fail("telegram.api_url: %q must be an http:// or https:// address without a user name or password, such as https://api.telegram.org", shownURL(s.Telegram.APIURL))
	}
	var configured []string
	if s.Telegram.Token != "" {
		configured = append(configured, "telegram")
	}
	if s.Slack.BotToken != "" {
		configured = append(configured, "slack")
	}
	if s.Discord.BotToken != "" {
		configured = append(configured, "discord")
	}
	if s.Email.SMTPURL != "" {
		configured = append(configured, email.Platform)
	}
	p.checkTeams(s, e)
	if s.Teams.AppID != "" {
		configured = append(configured, teams.Platform)
	}
	for i, r := range s.Routes {
		if r.EmailRequireLogin && len(s.Operators) == 0 {
			p.fail("routes[%d].email.require_login: route %q takes email answers only from a browser signed in to the web inbox, but no operator is configured to sign in; add one under operators[] or remove require_login", i, r.Name)
		}
		fields := map[string][]domain.Target{"targets": r.Targets}
		order := []string{"targets"}
		for j, e := range r.Escalation {
			f := fmt.Sprintf("escalation[%d].targets", j)
			fields[f], order = e.Targets, append(order, f)
		}
		for _, f := range order {
			for j, t := range fields[f] {
				switch {
				case t.Platform == "" || t.Channel == "":
					// domain.ValidateRoute reported it
				case t.Platform == "slack" && s.Slack.BotToken == "":
					p.fail("routes[%d].%s[%d]: route %q posts to Slack but no Slack bot token is set (SLACK_BOT_TOKEN or slack.bot_token)", i, f, j, r.Name)
				case t.Platform == "telegram" && s.Telegram.Token == "":
					p.fail("routes[%d].%s[%d]: route %q posts to Telegram but no Telegram bot token is set (TELEGRAM_BOT_TOKEN or telegram.token_file)", i, f, j, r.Name)
				case t.Platform == teams.Platform && s.Teams.AppID == "":
					p.fail("routes[%d].%s[%d]: route %q posts to Microsoft Teams but no Teams app id is set (TEAMS_APP_ID or teams.app_id)", i, f, j, r.Name)
				case t.Platform == "discord" && s.Discord.BotToken == "":
					p.fail("routes[%d].%s[%d]: route %q posts to Discord but no Discord bot token is set (DISCORD_BOT_TOKEN or discord.bot_token)", i, f, j, r.Name)
				case !slices.Contains(configured, t.Platform):
					p.fail("routes[%d].%s[%d].platform: %s", i, f, j, domain.NotConfigured(t.Platform, configured))
				}
			}
		}
	}
}
