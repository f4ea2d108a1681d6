package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The pagerduty section, a route's and a step's page, and on-call
// responders reach the settings; the routing key stays out of the routes.
func TestPagerDutyConfig(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "pd-key")
	require.NoError(t, os.WriteFile(key, []byte("R0UT1NGKEY0000000000000000000001\n"), 0o600))
	p := filepath.Join(dir, "c.yaml")
	require.NoError(t, os.WriteFile(p, []byte(`
pagerduty:
  api_token: tok
  webhook_secret: whsec
  people: {"carla@example.com": ["discord:4455"]}
routes:
  - name: oncall
    responders: {pagerduty_schedules: [PSCHED1], pagerduty_escalation_policies: [PPOL001]}
    page: {pagerduty: {routing_key_file: `+key+`, severity: critical}}
    escalation:
      - after: 15m
        page: {pagerduty: {routing_key_file: `+key+`, severity: error}}
`), 0o600))
	s, err := loadConfig(p, func(name string) string {
		return map[string]string{"BRIDGE_PAGERDUTY_EVENTS_URL": "https://events.eu.pagerduty.com"}[name]
	})
	require.NoError(t, err)
	require.NotNil(t, s.PagerDuty)
	assert.Equal(t, "https://events.eu.pagerduty.com", s.PagerDuty.EventsURL)
	assert.Equal(t, "tok", s.PagerDuty.APIToken)
	assert.Equal(t, []string{"whsec"}, s.PagerDuty.WebhookSecrets)
	r := s.Routes[0]
	require.NotNil(t, r.Page)
	assert.Equal(t, "R0UT1NGKEY0000000000000000000001", s.PagerDuty.Profiles[r.Page.Profile].RoutingKey)
	assert.NotContains(t, r.Page.Profile, "R0UT1NG")
	require.NotNil(t, r.Escalation[0].Page)
	assert.Equal(t, "error", s.PagerDuty.Profiles[r.Escalation[0].Page.Profile].Severity)
	assert.Equal(t, []string{"PSCHED1"}, r.Responders.Group("pagerduty_schedules"))
	assert.Equal(t, []string{"PPOL001"}, r.Responders.Group("pagerduty_escalation_policies"))

	require.NoError(t, os.WriteFile(p, []byte("routes:\n  - name: x\n    page: {pagerduty: {severity: urgent}}\n"), 0o600))
	_, err = loadConfig(p, func(string) string { return "" })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "routes[0].page.pagerduty.routing_key_file: required")
	assert.Contains(t, err.Error(), `routes[0].page.pagerduty.severity: "urgent" is not one of critical, error, warning, info`)
}
