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
		"allow from env":       {"", env("BRIDGE_WEBHOOK_ALLOW", "10.0.0.0/8,bad host"), `BRIDGE_WEBHOOK_ALLOW: "bad host"`},
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

// TestResumeDestinationsAsServed: the built binary applies the egress
// policy as configured. With tokens, a loopback resume url is refused at ask
// time unless webhooks.allow admits it; without tokens on loopback (the
// local default) loopback receivers are admitted, private networks are not.
func TestResumeDestinationsAsServed(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bridge.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("agents:\n  - {id: bot, project: ops, token: agent-tok, tools: [ask_user]}\n"), 0o600))
	ask := func(p *proc, token, url string) (int, map[string]any) {
		return authed(t, "POST", p.URL+"/api/projects/ops/agent-questions", token,
			map[string]any{"run_id": "r-" + url, "agent_id": "bot", "question": "Go?", "resume": map[string]any{"url": url}})
	}
	problem := func(body map[string]any) string {
		e, _ := body["error"].(map[string]any)
		ds, _ := e["details"].([]any)
		if len(ds) == 0 {
			return ""
		}
		d := ds[0].(map[string]any)
		return d["field"].(string) + ": " + d["problem"].(string)
	}

	withTokens := startBridge(t, "BRIDGE_CONFIG="+cfg, "BRIDGE_WEBHOOK_SECRET=s3cret")
	code, body := ask(withTokens, "agent-tok", "http://127.0.0.1:9/resume")
	assert.Equal(t, 400, code)
	assert.Contains(t, problem(body), "resume.url: 127.0.0.1 is a loopback address (this machine); resume webhooks may not reach it")
	code, body = ask(withTokens, "agent-tok", "http://2130706433/")
	assert.Equal(t, 400, code)
	assert.Contains(t, problem(body), "loopback")

	allowed := startBridge(t, "BRIDGE_CONFIG="+cfg, "BRIDGE_WEBHOOK_SECRET=s3cret", "BRIDGE_WEBHOOK_ALLOW=127.0.0.1:9")
	code, body = ask(allowed, "agent-tok", "http://127.0.0.1:9/resume")
	assert.Equal(t, 201, code, body)

	local := startBridge(t, "BRIDGE_WEBHOOK_SECRET=s3cret")
	code, body = ask(local, "", "http://127.0.0.1:9/resume")
	assert.Equal(t, 201, code, body)
	code, body = ask(local, "", "http://10.0.0.1/resume")
	assert.Equal(t, 400, code)
	assert.Contains(t, problem(body), "private network")
}
