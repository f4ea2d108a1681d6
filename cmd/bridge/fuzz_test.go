package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzConfigFile loads arbitrary configuration files: no panic, and no
// error message ever carries a secret given in the environment.
func FuzzConfigFile(f *testing.F) {
	for _, s := range []string{
		"defaults: {timeout: 5m, retention: 168h}\nwebhooks: {secret: \"abc\"}\n",
		"agents:\n  - {id: deploy-bot, project: ops, token: \"t1\", tools: [ask_user], route: oncall}\noperators:\n  - {id: alice, projects: [ops], token: \"t2\"}\n" +
			"routes:\n  - name: oncall\n    default: true\n    targets: [{platform: slack, channel: C0123}, {platform: discord, channel: \"1122\"}]\n" +
			"    responders: {slack_usergroups: [S0123], discord_roles: [\"667788\"]}\n    thread: per-run\n    timeout: 30m\n" +
			"slack: {bot_token: \"xoxb-1\", signing_secret: \"s\"}\ndiscord: {bot_token: \"d\", application_id: \"1\", public_key: \"ab\"}\n",
		"redis: {url: \"redis+sentinel://:pw@s1:26379?master_name=m\", prefix: ab}\n",
		"redis: {url: \"redis://x\", url_file: /nonexistent}\n",
		"routes:\n  - {name: a, thread: always}\n", "defaults:\n  timeout: soon\n", "- a\n- b\n", "{", "agents: [{id: x, tools: [rm]}]",
		"webhooks: {secret_file: /nonexistent/s}\n", "defaults: {timeout: 99999999999999h}\n",
	} {
		f.Add([]byte(s))
	}
	env := map[string]string{"SLACK_BOT_TOKEN": "xoxb-env-Zq9wPL", "SLACK_SIGNING_SECRET": "sig-env-Xy7Ka",
		"DISCORD_BOT_TOKEN": "disc-env-Hq3Mz", "BRIDGE_WEBHOOK_SECRET": "whsec-env-Nb2Wc", "REDIS_URL": "redis://:pw-env-Lk5Tr@127.0.0.1:1"}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, body []byte) {
		p := filepath.Join(dir, "bridge.yaml")
		if err := os.WriteFile(p, body, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := loadConfig(p, func(k string) string { return env[k] })
		if err == nil {
			return
		}
		for _, v := range []string{"Zq9wPL", "Xy7Ka", "Hq3Mz", "Nb2Wc", "Lk5Tr"} {
			if strings.Contains(err.Error(), v) && !strings.Contains(string(body), v) {
				t.Fatalf("error leaks an environment secret: %v", err)
			}
		}
	})
}
