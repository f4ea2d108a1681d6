package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBadEnvironmentValuesAreRefusedByName: `askbridge serve` refuses to start
// when an environment variable holds a value it cannot use, and says which
// variable and how to write it, instead of starting on a default (a log
// level it does not know, an API base that is no URL) or failing later with
// an error that does not name the variable.
func TestBadEnvironmentValuesAreRefusedByName(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"log level", map[string]string{"BRIDGE_LOG_LEVEL": "verbose"},
			`BRIDGE_LOG_LEVEL: "verbose" is not a log level (write debug, info, warn or error)`},
		{"listen address", map[string]string{"BRIDGE_ADDR": "8080"},
			`BRIDGE_ADDR: "8080" is not a listen address (write host:port`},
		{"Slack API base", map[string]string{"SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": "s", "SLACK_API_URL": "slack.com/api"},
			`SLACK_API_URL: "slack.com/api" must be an http:// or https:// address`},
		{"Discord API base", map[string]string{"DISCORD_BOT_TOKEN": "tok", "DISCORD_APPLICATION_ID": "1",
			"DISCORD_PUBLIC_KEY": strings.Repeat("ab", 32), "DISCORD_API_URL": "ftp://discord.com"},
			`DISCORD_API_URL: "ftp://discord.com" must be an http:// or https:// address`},
		{"public URL", map[string]string{"BRIDGE_PUBLIC_URL": "bridge.example.com"},
			`BRIDGE_PUBLIC_URL: "bridge.example.com" must be an http:// or https:// address`},
		{"webhook allow list", map[string]string{"BRIDGE_WEBHOOK_ALLOW": "10.0.0.0/8,bad host"},
			`BRIDGE_WEBHOOK_ALLOW: "bad host"`},
		{"webhook lease", map[string]string{"BRIDGE_WEBHOOK_LEASE": "soon"},
			`BRIDGE_WEBHOOK_LEASE: "soon" is not a duration (write e.g. 60s or 2m)`},
		{"secret file", map[string]string{"REDIS_URL_FILE": "/nonexistent/redis-url"},
			"REDIS_URL_FILE: open /nonexistent/redis-url"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{"BRIDGE_ADDR": "127.0.0.1:0"}
			for k, v := range c.env {
				env[k] = v
			}
			// A bridge that starts anyway is stopped after a while; it
			// then exits 0, which fails the test.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			var out, errb bytes.Buffer
			code := run(ctx, []string{"serve"}, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errb)
			assert.Equal(t, 1, code, "askbridge serve started with a bad value; stderr:\n%s", errb.String())
			assert.Contains(t, errb.String(), c.want)
			assert.NotContains(t, out.String(), "listening")
		})
	}
}

// TestSecretsInURLSettingsAreNeverPrinted: a user name, password or token
// written into a URL setting is masked in the start-up error that refuses
// it, from the environment and from the configuration file alike.
func TestSecretsInURLSettingsAreNeverPrinted(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "bridge.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("public_url: https://cfguser:cfg-s3cret@bridge.example.com\n"), 0o600))
	for name, env := range map[string]map[string]string{
		"public URL with a password": {"BRIDGE_PUBLIC_URL": "https://admin:pub-s3cret@bridge.example.com"},
		"Slack API with a token":     {"SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": "s", "SLACK_API_URL": "https://slack-t0ken@slack.example/api/"},
		"Discord API, not http":      {"DISCORD_BOT_TOKEN": "tok", "DISCORD_APPLICATION_ID": "1", "DISCORD_PUBLIC_KEY": strings.Repeat("ab", 32), "DISCORD_API_URL": "ftp://u:disc-s3cret@discord.example"},
		"configuration file":         {"BRIDGE_CONFIG": cfg},
	} {
		t.Run(name, func(t *testing.T) {
			env["BRIDGE_ADDR"] = "127.0.0.1:0"
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			var out, errb bytes.Buffer
			code := run(ctx, []string{"serve"}, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errb)
			assert.Equal(t, 1, code, errb.String())
			assert.Contains(t, errb.String(), "without a user name or password")
			assert.Contains(t, errb.String(), "xxxxx@")
			for _, secret := range []string{"s3cret", "t0ken", "admin", "cfguser"} {
				assert.NotContains(t, errb.String()+out.String(), secret)
			}
		})
	}
}
