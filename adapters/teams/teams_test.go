package teams

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/teams/faketeams"
	"github.com/askbridge/askbridge/lifecycle"
)

// TestNewRefusesWhatCannotWork: settings that cannot work are refused when
// the bridge starts, naming the setting, never showing the secret.
func TestNewRefusesWhatCannotWork(t *testing.T) {
	f := faketeams.New(t)
	router := lifecycle.NewRouter(lifecycle.RouterConfig{})
	for _, c := range []struct {
		tweak func(*Config)
		want  string
	}{
		{func(c *Config) { c.AppID = "" }, "TEAMS_APP_ID is required"},
		{func(c *Config) { c.AppSecret = "" }, "TEAMS_APP_SECRET is required"},
		{func(c *Config) { c.TokenURL = "login.microsoftonline.com/x" }, "TEAMS_TOKEN_URL must be an absolute http(s) URL"},
		{func(c *Config) { c.OpenIDMetadataURL = "https://user:" + f.AppSecret + "@login.botframework.com/" }, "TEAMS_OPENID_METADATA_URL must be"},
	} {
		cfg := testConfig(f)
		c.tweak(&cfg)
		_, err := New(cfg, router, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), f.AppSecret) {
			t.Errorf("%v, want an error saying %q without the secret", err, c.want)
		}
	}
}
