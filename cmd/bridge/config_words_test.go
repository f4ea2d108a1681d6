package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goInternals matches what a person reading an error should never see: Go
// type names, YAML tags, source positions, addresses.
var goInternals = regexp.MustCompile(`core\.|domain\.|lifecycle\.|main\.|\[\]|map\[|struct \{|!!|\.go:\d|dial tcp|\d+\.\d+\.\d+\.\d+:\d+`)

// TestConfigErrorsInPlainWords walks bad configuration files: every problem
// is named with its line and full path, all of them at once, and no message
// shows a Go type.
func TestConfigErrorsInPlainWords(t *testing.T) {
	cases := map[string]struct {
		body string
		want []string
	}{
		"unknown top-level key": {"webhook:\n  secret: x\n", []string{`line 1: webhook: unknown key; did you mean "webhooks"?`}},
		"agents not a list":     {"agents:\n  id: bot\n", []string{"line 2: agents: must be a list of agents"}},
		"every unknown key": {"defaults:\n  colour: red\n  size: 2\nroutes:\n  - name: a\n    targets:\n      - {platform: slack, channel: C1, icon: x}\n",
			[]string{"line 2: defaults.colour: unknown key", "line 3: defaults.size: unknown key", "line 7: routes[0].targets[0].icon: unknown key"}},
		"routes a mapping":     {"routes:\n  oncall: {}\n", []string{"line 2: routes: must be a list of routes"}},
		"defaults a string":    {"defaults: soon\n", []string{"line 1: defaults: must be an object"}},
		"bad duration":         {"defaults:\n  timeout: soon\n", []string{`line 2: defaults.timeout: "soon" is not a duration`}},
		"timeout a list":       {"defaults:\n  timeout: [1]\n", []string{"line 2: defaults.timeout: must be a duration"}},
		"tools not a list":     {"agents:\n  - {id: a, project: p, token: t, tools: ask_user}\n", []string{"line 2: agents[0].tools: must be a list of strings"}},
		"approvals not number": {"routes:\n  - {name: a, approvals_required: two}\n", []string{"line 2: routes[0].approvals_required: must be a whole number"}},
		"secure not bool":      {"web:\n  secure_cookies: maybe\n", []string{"line 2: web.secure_cookies: must be true or false"}},
		"not a mapping":        {"- a\n- b\n", []string{"line 1: the file must be a mapping"}},
		"bad yaml":             {"defaults:\n  timeout: [\n", []string{"config "}},
	}
	dir := t.TempDir()
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".yaml")
			require.NoError(t, os.WriteFile(p, []byte(c.body), 0o600))
			_, err := loadConfig(p, func(string) string { return "" })
			require.Error(t, err)
			msg := strings.ReplaceAll(err.Error(), p, "FILE") // the path is the user's own
			for _, w := range c.want {
				assert.Contains(t, msg, w)
			}
			assert.NotRegexp(t, goInternals, msg)
		})
	}
}

// TestADeeplyNestedConfigurationIsRefused: a configuration that nests
// deeper than the limit is refused with its line, before it is walked.
func TestADeeplyNestedConfigurationIsRefused(t *testing.T) {
	var fc fileConfig
	_, err := decodeConfig([]byte("routes:\n  - name: x\n    targets: "+strings.Repeat("[", 5000)+strings.Repeat("]", 5000)+"\n"), &fc)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 3: the file nests deeper than 64 levels")
}
