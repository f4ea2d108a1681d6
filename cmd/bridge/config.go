package main

import (
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/askbridge/askbridge/agentrun/api"
	"github.com/askbridge/askbridge/agentrun/egress"
	"github.com/askbridge/askbridge/core"
	"gopkg.in/yaml.v3"
)

// fileConfig is the YAML configuration file (README "Configuration file"). Unknown keys are
// errors; every secret also has a <key>_file form.
type fileConfig struct {
	Defaults struct {
		Timeout   duration `yaml:"timeout"`
		Retention duration `yaml:"retention"`
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
	// PublicURL is where people and platforms reach the bridge; its host
	// is admitted by the guard against web pages.
	PublicURL string `yaml:"public_url"`
	Metrics   struct {
		Token     string `yaml:"token"`
		TokenFile string `yaml:"token_file"`
	} `yaml:"metrics"`
	Web struct {
		SessionKey     string `yaml:"session_key"`
		SessionKeyFile string `yaml:"session_key_file"`
		Secure         bool   `yaml:"secure_cookies"`
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
		Answer string `yaml:"answer"`
	} `yaml:"on_timeout"`
	Escalation []struct {
		After      duration          `yaml:"after"`
		Remind     bool              `yaml:"remind"`
		Targets    []targetConfig    `yaml:"targets"`
		Responders *respondersConfig `yaml:"responders"`
	} `yaml:"escalation"`
	// Approvals of tool calls (core/action.go, core/autoallow.go).
	AllowEdit *bool    `yaml:"allow_edit"`
	AutoAllow []string `yaml:"auto_allow"`
}

type respondersConfig struct {
	Users            []string `yaml:"users"`
	SlackUsergroups  []string `yaml:"slack_usergroups"`
	DiscordRoles     []string `yaml:"discord_roles"`
	ExcludeRequester bool     `yaml:"exclude_requester"`
}

func (r respondersConfig) core() core.Responders {
	return core.Responders{Users: r.Users, SlackUsergroups: r.SlackUsergroups, DiscordRoles: r.DiscordRoles,
		ExcludeRequester: r.ExcludeRequester}
}

type targetConfig struct {
	Platform string `yaml:"platform"`
	Channel  string `yaml:"channel"`
	ThreadTS string `yaml:"thread_ts"`
}

// duration reads "30m", "168h", "7d" or seconds.
type duration time.Duration

func (d *duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: must be a duration such as 30s, 30m, 168h or 7d", n.Line)
	}
	v, err := core.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %v", n.Line, err)
	}
	*d = duration(v)
	return nil
}

// settings is the resolved configuration: file, then environment.
type settings struct {
	Addr          string
	RedisURL      string
	RedisPrefix   string
	Timeout       time.Duration
	Retention     time.Duration
	WebhookSecret string
	// WebhookAllow is webhooks.allow (or BRIDGE_WEBHOOK_ALLOW).
	WebhookAllow []string
	// WebhookGiveUp is webhooks.give_up_after (default 24h).
	WebhookGiveUp time.Duration
	// WebhookLease is BRIDGE_WEBHOOK_LEASE (default 60s).
	WebhookLease  time.Duration
	Agents        []api.Agent
	Operators     []api.Operator
	Routes        []core.Route
	Slack         struct{ BotToken, SigningSecret, AppToken, APIURL string }
	Discord       struct{ BotToken, ApplicationID, PublicKey, APIURL string }
	SessionKey    string
	SecureCookies bool
	PublicURL     string
	MetricsToken  string
}

// loadConfig reads the file at path (may be empty) and applies the
// environment. Errors name the file, line and key, never a secret's value.
func loadConfig(path string, getenv func(string) string) (*settings, error) {
	var fc fileConfig
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("config: %v", err)
		}
		if err := decodeConfig(b, &fc); err != nil {
			return nil, fmt.Errorf("config %s:\n  %s", path, err)
		}
	}
	s := &settings{Timeout: time.Duration(fc.Defaults.Timeout), Retention: time.Duration(fc.Defaults.Retention),
		RedisPrefix: fc.Redis.Prefix, SecureCookies: fc.Web.Secure}
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	secret := func(key, val, file string) string {
		if val != "" && file != "" {
			fail("%s and %s_file are both set; keep one", key, key)
		}
		if file == "" {
			return val
		}
		b, err := os.ReadFile(file)
		if err != nil {
			fail("%s_file: %v", key, err)
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	s.WebhookSecret = secret("webhooks.secret", fc.Webhooks.Secret, fc.Webhooks.SecretFile)
	s.WebhookAllow, s.WebhookGiveUp = fc.Webhooks.Allow, time.Duration(fc.Webhooks.GiveUpAfter)
	if s.WebhookGiveUp == 0 {
		s.WebhookGiveUp = 24 * time.Hour
	}
	if s.WebhookGiveUp < time.Minute || s.WebhookGiveUp > core.MaxTimeout {
		fail("webhooks.give_up_after: must be between 1m and 720h (how long a resume webhook is retried)")
	}
	s.RedisURL = secret("redis.url", fc.Redis.URL, fc.Redis.URLFile)
	s.Slack.BotToken = secret("slack.bot_token", fc.Slack.BotToken, fc.Slack.BotTokenFile)
	s.Slack.SigningSecret = secret("slack.signing_secret", fc.Slack.SigningSecret, fc.Slack.SigningSecretFile)
	s.Slack.AppToken = secret("slack.app_token", fc.Slack.AppToken, fc.Slack.AppTokenFile)
	s.Slack.APIURL = fc.Slack.APIURL
	s.Discord.BotToken = secret("discord.bot_token", fc.Discord.BotToken, fc.Discord.BotTokenFile)
	s.Discord.ApplicationID, s.Discord.PublicKey, s.Discord.APIURL = fc.Discord.ApplicationID, fc.Discord.PublicKey, fc.Discord.APIURL
	s.SessionKey = secret("web.session_key", fc.Web.SessionKey, fc.Web.SessionKeyFile)
	s.MetricsToken = secret("metrics.token", fc.Metrics.Token, fc.Metrics.TokenFile)
	s.PublicURL = fc.PublicURL

	if s.Timeout != 0 && (s.Timeout < core.MinTimeout || s.Timeout > core.MaxTimeout) {
		fail("defaults.timeout: must be between 10s and 720h")
	}
	routeNames := map[string]bool{}
	defaults := 0
	for i, rc := range fc.Routes {
		f := fmt.Sprintf("routes[%d]", i)
		if rc.Name == "" {
			fail("%s.name: required", f)
		} else if routeNames[rc.Name] {
			fail("%s.name: route %q is defined twice", f, rc.Name)
		}
		routeNames[rc.Name] = true
		if rc.Default {
			defaults++
		}
		if rc.Thread != "" && rc.Thread != "per-run" {
			fail("%s.thread: %q is not a thread mode (use per-run or leave it out)", f, rc.Thread)
		}
		if t := time.Duration(rc.Timeout); t != 0 && (t < core.MinTimeout || t > core.MaxTimeout) {
			fail("%s.timeout: must be between 10s and 720h", f)
		}
		r := core.Route{Name: rc.Name, Default: rc.Default, Thread: rc.Thread, Timeout: time.Duration(rc.Timeout),
			Responders: rc.Responders.core(), ApprovalsRequired: rc.ApprovalsRequired}
		targets := func(field string, ts []targetConfig) []core.Target {
			var out []core.Target
			for j, t := range ts {
				if t.Platform != "slack" && t.Platform != "discord" {
					fail("%s[%d].platform: %q is not a chat platform (slack or discord)", field, j, t.Platform)
				}
				if t.Channel == "" {
					fail("%s[%d].channel: required", field, j)
				}
				out = append(out, core.Target{Platform: t.Platform, Channel: t.Channel, ThreadTS: t.ThreadTS})
			}
			return out
		}
		r.Targets = targets(f+".targets", rc.Targets)
		r.NoEdit = rc.AllowEdit != nil && !*rc.AllowEdit
		for j, rule := range rc.AutoAllow {
			if err := core.CheckAutoAllowRule(rule); err != nil {
				fail("%s.auto_allow[%d]: %v", f, j, err)
			}
		}
		r.AutoAllow = rc.AutoAllow
		if rc.ApprovalsRequired < 0 || rc.ApprovalsRequired > core.MaxApprovals {
			fail("%s.approvals_required: from 1 to %d", f, core.MaxApprovals)
		}
		if rc.OnTimeout != nil {
			if strings.TrimSpace(rc.OnTimeout.Answer) == "" {
				fail("%s.on_timeout.answer: required", f)
			}
			r.OnTimeout = &core.OnTimeout{Answer: rc.OnTimeout.Answer}
		}
		var last time.Duration
		for j, e := range rc.Escalation {
			ef := fmt.Sprintf("%s.escalation[%d]", f, j)
			if time.Duration(e.After) <= last {
				fail("%s.after: must be later than the step before (and above 0)", ef)
			}
			last = time.Duration(e.After)
			if !e.Remind && len(e.Targets) == 0 && e.Responders == nil {
				fail("%s: does nothing; set remind: true, targets or responders", ef)
			}
			step := core.EscalationStep{After: core.Duration(e.After), Remind: e.Remind, Targets: targets(ef+".targets", e.Targets)}
			if e.Responders != nil {
				rs := e.Responders.core()
				step.Responders = &rs
			}
			r.Escalation = append(r.Escalation, step)
		}
		for j, u := range rc.Responders.Users {
			if !strings.Contains(u, ":") {
				fail("%s.responders.users[%d]: %q must be <platform>:<id>, e.g. slack:U0123", f, j, u)
			}
		}
		s.Routes = append(s.Routes, r)
	}
	if defaults > 1 {
		fail("routes: %d routes are marked default; mark at most one", defaults)
	}
	seen := map[string]bool{}
	for i, ac := range fc.Agents {
		f := fmt.Sprintf("agents[%d]", i)
		if ac.ID == "" {
			fail("%s.id: required", f)
		} else if seen[ac.ID] {
			fail("%s.id: agent %q is defined twice", f, ac.ID)
		}
		seen[ac.ID] = true
		if ac.Project == "" {
			fail("%s.project: required", f)
		}
		tok := secret(f+".token", ac.Token, ac.TokenFile)
		if tok == "" {
			fail("%s.token: required (or token_file)", f)
		}
		for _, t := range ac.Tools {
			if t != "ask_user" {
				fail("%s.tools: unknown tool %q (known: ask_user)", f, t)
			}
		}
		if ac.Route != "" && !routeNames[ac.Route] {
			fail("%s.route: no route named %q", f, ac.Route)
		}
		s.Agents = append(s.Agents, api.Agent{ID: ac.ID, Project: ac.Project, Token: tok, Tools: ac.Tools,
			Route: ac.Route, WebhookSecret: secret(f+".webhook_secret", ac.WebhookSecret, ac.WebhookSecretFile)})
	}
	for i, oc := range fc.Operators {
		f := fmt.Sprintf("operators[%d]", i)
		if oc.ID == "" {
			fail("%s.id: required", f)
		}
		if len(oc.Projects) == 0 {
			fail("%s.projects: list the projects (or \"*\" for all)", f)
		}
		tok := secret(f+".token", oc.Token, oc.TokenFile)
		if tok == "" {
			fail("%s.token: required (or token_file)", f)
		}
		s.Operators = append(s.Operators, api.Operator{ID: oc.ID, Projects: oc.Projects, Token: tok, ActFor: oc.ActFor})
	}

	// The environment overrides the file.
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
	env("REDIS_URL", &s.RedisURL)
	env("BRIDGE_WEBHOOK_SECRET", &s.WebhookSecret)
	env("SLACK_BOT_TOKEN", &s.Slack.BotToken)
	env("SLACK_SIGNING_SECRET", &s.Slack.SigningSecret)
	env("SLACK_APP_TOKEN", &s.Slack.AppToken)
	env("SLACK_API_URL", &s.Slack.APIURL)
	env("DISCORD_BOT_TOKEN", &s.Discord.BotToken)
	env("DISCORD_APPLICATION_ID", &s.Discord.ApplicationID)
	env("DISCORD_PUBLIC_KEY", &s.Discord.PublicKey)
	env("DISCORD_API_URL", &s.Discord.APIURL)
	env("BRIDGE_WEB_SESSION_KEY", &s.SessionKey)
	env("BRIDGE_METRICS_TOKEN", &s.MetricsToken)
	env("BRIDGE_PUBLIC_URL", &s.PublicURL)
	if s.PublicURL != "" {
		if u, err := url.Parse(s.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			fail("public_url: %q must be an http:// or https:// address such as https://bridge.example.com", s.PublicURL)
		}
	}
	if v := getenv("BRIDGE_WEBHOOK_ALLOW"); v != "" {
		s.WebhookAllow = strings.Split(v, ",")
	}
	if _, err := egress.New(egress.Config{Allow: s.WebhookAllow}); err != nil {
		fail("webhooks.allow: %v (each entry: a CIDR like 10.0.0.0/8, an address, host, host:port or *.domain)", err)
	}
	if v := getenv("BRIDGE_WEBHOOK_LEASE"); v != "" {
		d, err := core.ParseDuration(v)
		switch {
		case err != nil:
			fail("BRIDGE_WEBHOOK_LEASE: %q is not a duration (write e.g. 60s or 2m)", v)
		case d < time.Second:
			fail("BRIDGE_WEBHOOK_LEASE: %s is too short (at least 1s; leases are renewed every third of it)", d)
		default:
			s.WebhookLease = d
		}
	}

	for i, r := range s.Routes {
		all := r.Targets
		for _, e := range r.Escalation {
			all = append(all, e.Targets...)
		}
		for j, t := range all {
			if t.Platform == "slack" && s.Slack.BotToken == "" {
				fail("routes[%d].targets[%d]: route %q posts to Slack but no Slack bot token is set (SLACK_BOT_TOKEN or slack.bot_token)", i, j, r.Name)
			}
			if t.Platform == "discord" && s.Discord.BotToken == "" {
				fail("routes[%d].targets[%d]: route %q posts to Discord but no Discord bot token is set (DISCORD_BOT_TOKEN or discord.bot_token)", i, j, r.Name)
			}
		}
	}
	if len(errs) > 0 {
		where := "configuration"
		if path != "" {
			where = "config " + path
		}
		return nil, fmt.Errorf("%s:\n  %s", where, strings.Join(errs, "\n  "))
	}
	return s, nil
}

// webhookSecret returns the signing secret for an agent: its own, else the
// bridge's.
func (s *settings) webhookSecret(agentID string) []byte {
	i := slices.IndexFunc(s.Agents, func(a api.Agent) bool { return a.ID == agentID })
	if i >= 0 && s.Agents[i].WebhookSecret != "" {
		return []byte(s.Agents[i].WebhookSecret)
	}
	return []byte(s.WebhookSecret)
}
