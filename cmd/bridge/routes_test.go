package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/discord"
	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// TestRouteRulesAreTheAskRules: what a route may hold (targets, responders,
// timeout, approvals, a default answer) is what an ask may hold. For each
// value, the configuration accepts the route exactly when the ask path
// accepts an ask carrying the same fields, and both say the same words about
// the same field (the configuration under routes[0].).
func TestRouteRulesAreTheAskRules(t *testing.T) {
	fs := fakeslack.New("C1")
	t.Cleanup(fs.Close)
	fd := fakediscord.New(t)
	a, err := app.New(context.Background(), app.Settings{Addr: "127.0.0.1:0",
		Slack:   slack.Config{BotToken: fs.BotToken, SigningSecret: "s", APIURL: fs.APIURL()},
		Discord: discord.Config{BotToken: fd.BotToken, ApplicationID: fd.AppID, PublicKey: fd.PublicKey(), APIURL: fd.APIURL()}})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	env := map[string]string{"SLACK_BOT_TOKEN": fs.BotToken, "DISCORD_BOT_TOKEN": fd.BotToken}

	type fields struct {
		targets   []domain.Target
		users     []string
		timeout   string
		approvals int
		onTimeout *string
	}
	slackC1 := []domain.Target{{Platform: "slack", Channel: "C1"}}
	blank, yes := "  ", "Yes"
	eleven := slices.Repeat(slackC1, 11)
	cases := map[string]fields{
		"plain":                      {targets: slackC1},
		"no targets":                 {},
		"platform missing":           {targets: []domain.Target{{Channel: "C1"}}},
		"platform unknown":           {targets: []domain.Target{{Platform: "irc", Channel: "C1"}}},
		"platform spelled Slack":     {targets: []domain.Target{{Platform: " Slack ", Channel: "C1"}}},
		"channel missing":            {targets: []domain.Target{{Platform: "slack"}}},
		"too many targets":           {targets: eleven},
		"responder without platform": {targets: slackC1, users: []string{"U0123"}},
		"responder":                  {targets: slackC1, users: []string{"slack:U0123"}},
		"timeout too short":          {targets: slackC1, timeout: "5s"},
		"timeout":                    {targets: slackC1, timeout: "30m"},
		"approvals too many":         {targets: slackC1, approvals: domain.MaxApprovals + 1},
		"two approvals":              {targets: slackC1, approvals: 2},
		"default answer blank":       {targets: slackC1, onTimeout: &blank},
		"default answer":             {targets: slackC1, onTimeout: &yes},
	}
	dir := t.TempDir()
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			// The route, as written in the configuration file.
			route := map[string]any{"name": "r"}
			var ts []map[string]string
			for _, tg := range f.targets {
				ts = append(ts, map[string]string{"platform": tg.Platform, "channel": tg.Channel})
			}
			if ts != nil {
				route["targets"] = ts
			}
			if f.users != nil {
				route["responders"] = map[string]any{"users": f.users}
			}
			if f.timeout != "" {
				route["timeout"] = f.timeout
			}
			if f.approvals != 0 {
				route["approvals_required"] = f.approvals
			}
			if f.onTimeout != nil {
				route["on_timeout"] = map[string]string{"answer": *f.onTimeout}
			}
			b, err := yaml.Marshal(map[string]any{"routes": []any{route}})
			require.NoError(t, err)
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".yaml")
			require.NoError(t, os.WriteFile(path, b, 0o600))
			var configSays []string
			if _, err := loadConfig(path, func(k string) string { return env[k] }); err != nil {
				for _, l := range strings.Split(err.Error(), "\n")[1:] {
					l = lineNumber.ReplaceAllString(strings.TrimSpace(l), "")
					require.True(t, strings.HasPrefix(l, "routes[0]."), "a problem outside the route: %s", l)
					configSays = append(configSays, strings.TrimPrefix(l, "routes[0]."))
				}
			}

			// The same fields, in an ask.
			req := &domain.AskRequest{RunID: "run-" + strings.ReplaceAll(name, " ", "-"), Question: "Ship it?",
				Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}, Targets: f.targets, OnTimeout: nil}
			if f.users != nil {
				req.Responders = &domain.Responders{Users: f.users}
			}
			if f.timeout != "" {
				d, err := domain.ParseDuration(f.timeout)
				require.NoError(t, err)
				req.Timeout = (*domain.Duration)(&d)
			}
			if f.approvals != 0 {
				req.ApprovalsRequired = &f.approvals
			}
			if f.onTimeout != nil {
				req.OnTimeout = &domain.OnTimeout{Answer: *f.onTimeout}
			}
			var askSays []string
			if _, err := a.Router().Ask(context.Background(), "routes", req, ""); err != nil {
				var ce *domain.Error
				require.True(t, errors.As(err, &ce), "%v", err)
				for _, d := range ce.Details {
					askSays = append(askSays, fmt.Sprintf("%s: %s", d.Field, d.Problem))
				}
			}
			slices.Sort(configSays)
			slices.Sort(askSays)
			assert.Equal(t, askSays, configSays, "the configuration and the ask path disagree about %s", name)
		})
	}
}

// lineNumber is the "line N: " a problem of the file starts with.
var lineNumber = regexp.MustCompile(`^line \d+: `)
