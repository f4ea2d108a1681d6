package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The configuration's teams keys, the TEAMS_* variables over them, and the
// words of a Teams setting that cannot work.
func TestTeamsConfig(t *testing.T) {
	dir := t.TempDir()
	sec := filepath.Join(dir, "secret")
	if err := os.WriteFile(sec, []byte("s3cret-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "c.yaml")
	write := func(yaml string) {
		t.Helper()
		if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	none := func(string) string { return "" }
	write("teams: {app_id: app-1, app_secret_file: " + sec + ", tenant_id: tenant-1, service_url_allow: [smba.trafficmanager.net]}\n" +
		"routes:\n  - {name: oncall, default: true, targets: [{platform: teams, channel: \"Platform/Deployments\"}], responders: {users: [\"teams:0f0e0d0c-aaaa-bbbb-cccc-123456789abc\"]}}\n")
	s, err := loadConfig(cfg, none)
	if err != nil {
		t.Fatal(err)
	}
	if tc := s.Teams; tc.AppID != "app-1" || tc.AppSecret != "s3cret-value" || tc.TenantID != "tenant-1" || len(tc.ServiceURLAllow) != 1 {
		t.Errorf("teams settings: app %q tenant %q allow %v (secret read: %t)", tc.AppID, tc.TenantID, tc.ServiceURLAllow, tc.AppSecret == "s3cret-value")
	}
	if tg := s.Routes[0].Targets[0]; tg.Platform != "teams" || tg.Channel != "Platform/Deployments" {
		t.Errorf("target: %+v", tg)
	}
	env := map[string]string{"TEAMS_APP_ID": "app-2", "TEAMS_APP_SECRET": "other", "TEAMS_TOKEN_URL": "http://127.0.0.1:9/t/oauth2/v2.0/token",
		"TEAMS_SERVICE_URL_ALLOW": "http://127.0.0.1:9, *.botframework.com"}
	s, err = loadConfig(cfg, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if tc := s.Teams; tc.AppID != "app-2" || tc.AppSecret != "other" || tc.TokenURL != env["TEAMS_TOKEN_URL"] ||
		strings.Join(tc.ServiceURLAllow, ",") != "http://127.0.0.1:9,*.botframework.com" {
		t.Errorf("the environment over the file: %q %q %v", tc.AppID, tc.TokenURL, tc.ServiceURLAllow)
	}

	for _, c := range []struct{ yaml, env, want string }{
		{"routes:\n  - {name: oncall, targets: [{platform: teams, channel: \"19:a@thread.tacv2\"}]}\n", "", "no Teams app id is set (TEAMS_APP_ID or teams.app_id)"},
		{"teams: {app_id: app-1, app_secret: x, token_url: \"ftp://login\"}\n", "", "teams.token_url: \"ftp://login\" must be an http:// or https:// address"},
		{"", "TEAMS_OPENID_METADATA_URL=https://user:pw@login.botframework.com/x", "TEAMS_OPENID_METADATA_URL"},
	} {
		write(c.yaml)
		getenv := none
		if k, v, ok := strings.Cut(c.env, "="); ok {
			getenv = func(name string) string {
				if name == k {
					return v
				}
				return ""
			}
		}
		_, err := resolveConfig(cfg, readServeEnv(getenv))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %q: %v, want an error saying %q", c.yaml, c.env, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), ":pw@") {
			t.Errorf("the error shows a password: %v", err)
		}
	}
}
