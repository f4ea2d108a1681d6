package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWebhookSettingsAreCheckedNotIgnored: a bad BRIDGE_WEBHOOK_LEASE, allow
// entry or give_up_after stops the bridge with an error naming it, instead
// of silently falling back to a default.
func TestWebhookSettingsAreCheckedNotIgnored(t *testing.T) {
	dir := t.TempDir()
	file := func(body string) string {
		p := filepath.Join(dir, "c.yaml")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	cases := map[string]struct {
		body string
		env  func(string) string
		want string
	}{
		"lease not a duration": {"", env("BRIDGE_WEBHOOK_LEASE", "ten seconds"), `BRIDGE_WEBHOOK_LEASE: "ten seconds" is not a duration`},
		"lease too short":      {"", env("BRIDGE_WEBHOOK_LEASE", "100ms"), "BRIDGE_WEBHOOK_LEASE: 100ms is too short"},
		"allow entry":          {"webhooks: {allow: [\"10.0.0.0/8\", \"http://x\"]}\n", env(), `webhooks.allow: "http://x"`},
		"allow from env":       {"", env("BRIDGE_WEBHOOK_ALLOW", "10.0.0.0/8,bad host"), `webhooks.allow: "bad host"`},
		"give up too short":    {"webhooks: {give_up_after: 5s}\n", env(), "webhooks.give_up_after: must be between 1m and 720h"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := loadConfig(file(c.body), c.env)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	s, err := loadConfig(file("webhooks: {allow: [\"10.0.0.0/8\", \"runtime.internal:8443\"], give_up_after: 2h}\n"),
		env("BRIDGE_WEBHOOK_LEASE", "90s"))
	require.NoError(t, err)
	assert.Equal(t, []string{"10.0.0.0/8", "runtime.internal:8443"}, s.WebhookAllow)
	assert.Equal(t, 2*time.Hour, s.WebhookGiveUp)
	assert.Equal(t, 90*time.Second, s.WebhookLease)
	s, err = loadConfig("", env())
	require.NoError(t, err)
	assert.Equal(t, 24*time.Hour, s.WebhookGiveUp, "24 h of retries by default")
}
