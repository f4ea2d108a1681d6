package main

import (
	"strings"

	"github.com/askbridge/askbridge/adapters/teams"
)

// teamsConfig is the file's teams section (docs/teams.md).
type teamsConfig struct {
	AppID             string   `yaml:"app_id"`
	AppSecret         string   `yaml:"app_secret"`
	AppSecretFile     string   `yaml:"app_secret_file"`
	TenantID          string   `yaml:"tenant_id"`
	OpenIDMetadataURL string   `yaml:"openid_metadata_url"`
	TokenURL          string   `yaml:"token_url"`
	ServiceURL        string   `yaml:"service_url"`
	ServiceURLAllow   []string `yaml:"service_url_allow"`
}

// teamsEnv are the TEAMS_* variables.
type teamsEnv struct {
	appID, appSecret, tenant, metadataURL, tokenURL, serviceURL string
	allow                                                       []string
}

// readTeamsEnv reads the TEAMS_* variables with readServeEnv's readers.
func (e *serveEnvValues) readTeamsEnv(getenv func(string) string, env func(string, *string), envURL func(string, *string, string)) {
	env("TEAMS_APP_ID", &e.teams.appID)
	env("TEAMS_APP_SECRET", &e.teams.appSecret)
	env("TEAMS_TENANT_ID", &e.teams.tenant)
	envURL("TEAMS_OPENID_METADATA_URL", &e.teams.metadataURL, teams.DefaultOpenIDMetadataURL)
	envURL("TEAMS_TOKEN_URL", &e.teams.tokenURL, teams.DefaultTokenURL(""))
	envURL("TEAMS_SERVICE_URL", &e.teams.serviceURL, teams.DefaultServiceURL)
	if v := getenv("TEAMS_SERVICE_URL_ALLOW"); v != "" {
		e.teams.allow = splitList(v)
	}
}

// overlayTeams applies the set TEAMS_* variables over the file's values.
func (e *serveEnvValues) overlayTeams(s *settings) {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	t := &s.Teams
	set(&t.AppID, e.teams.appID)
	set(&t.AppSecret, e.teams.appSecret)
	set(&t.TenantID, e.teams.tenant)
	set(&t.OpenIDMetadataURL, e.teams.metadataURL)
	set(&t.TokenURL, e.teams.tokenURL)
	set(&t.ServiceURL, e.teams.serviceURL)
	if e.teams.allow != nil {
		t.ServiceURLAllow = e.teams.allow
	}
}

// teamsFromFile reads the teams section.
func (p *configProblems) teamsFromFile(fc *fileConfig, s *settings) {
	c := fc.Teams
	s.Teams = teams.Config{AppID: c.AppID, TenantID: c.TenantID, OpenIDMetadataURL: c.OpenIDMetadataURL,
		TokenURL: c.TokenURL, ServiceURL: c.ServiceURL, ServiceURLAllow: c.ServiceURLAllow}
	s.Teams.AppSecret = p.secret("teams.app_secret", c.AppSecret, c.AppSecretFile)
}

// checkTeams validates the Teams settings the environment did not set
// (those were checked naming their variable). A missing secret is the
// adapter's to refuse when serve builds it (teams.New): commands that only
// read the app id (askbridge teams manifest) need none.
func (p *configProblems) checkTeams(s *settings, e *serveEnvValues) {
	t := s.Teams
	for _, u := range []struct{ field, env, val, example string }{
		{"teams.openid_metadata_url", e.teams.metadataURL, t.OpenIDMetadataURL, teams.DefaultOpenIDMetadataURL},
		{"teams.token_url", e.teams.tokenURL, t.TokenURL, teams.DefaultTokenURL("")},
		{"teams.service_url", e.teams.serviceURL, t.ServiceURL, teams.DefaultServiceURL},
	} {
		if u.env == "" && u.val != "" && !webURL(u.val) {
			p.fail("%s: %q must be an http:// or https:// address without a user name or password, such as %s", u.field, shownURL(u.val), u.example)
		}
	}
	for _, h := range t.ServiceURLAllow {
		if strings.TrimSpace(h) == "" || strings.ContainsAny(h, " /?#@") && !strings.HasPrefix(h, "http://") {
			p.fail("teams.service_url_allow: %q is not a host name, host:port or *.domain", h)
		}
	}
}

// splitList splits a comma-separated variable, dropping blanks.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
