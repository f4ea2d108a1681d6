package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestBadEnvironmentValuesAreRefusedByName: `bridge serve` refuses to start
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
			assert.Equal(t, 1, code, "bridge serve started with a bad value; stderr:\n%s", errb.String())
			assert.Contains(t, errb.String(), c.want)
			assert.NotContains(t, out.String(), "listening")
		})
	}
}
