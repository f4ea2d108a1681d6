package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHealthUsesBridgeURL: `askbridge health` checks the bridge the other
// client commands talk to (BRIDGE_URL) before falling back to BRIDGE_ADDR.
func TestHealthUsesBridgeURL(t *testing.T) {
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { path = r.URL.Path }))
	defer srv.Close()
	r := runBridge(t, map[string]string{"BRIDGE_URL": srv.URL + "/", "BRIDGE_ADDR": "127.0.0.1:1"}, "health", "--ready")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "/readyz", path)
	assert.Equal(t, srv.URL+"/readyz: ok\n", r.stdout)
}

// TestServeOnAPortInUseNamesTheFlag: a port that is taken is reported with
// --addr and BRIDGE_ADDR, the two ways to choose another.
func TestServeOnAPortInUseNamesTheFlag(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	r := runBridge(t, nil, "serve", "--addr", ln.Addr().String())
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, ln.Addr().String()+" is already in use")
	assert.Contains(t, r.stderr, "--addr or BRIDGE_ADDR")
}

// TestMCPServerInfoCarriesTheBuildVersion: both MCP servers, `askbridge mcp`
// and /mcp of `askbridge serve`, report the version `askbridge version`
// prints, not "dev".
func TestMCPServerInfoCarriesTheBuildVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	out, err := exec.Command(bridgeBin, "version").Output()
	require.NoError(t, err)
	want := strings.TrimPrefix(strings.SplitN(string(out), "\n", 2)[0], "askbridge ")
	require.NotEqual(t, "dev", want)

	b := startBridge(t)
	remote := mcpConnect(t, b.URL+"/mcp", "")
	assert.Equal(t, want, remote.InitializeResult().ServerInfo.Version, "/mcp")

	cmd := exec.Command(bridgeBin, "mcp")
	cmd.Env = []string{"BRIDGE_URL=" + b.URL}
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	s, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, want, s.InitializeResult().ServerInfo.Version, "askbridge mcp")
}

// TestSemanticConfigProblemsCarryLines: problems found after the shape
// check (duplicates, missing tokens, unknown tools, bad addresses) name
// the line of the key, or of the item that lacks it, like the structural
// ones.
func TestSemanticConfigProblemsCarryLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bridge.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`routes:
  - name: a
  - name: a
agents:
  - id: bot
    project: ops
    tools: [rm_rf]
public_url: ftp://x
`), 0o600))
	r := runBridge(t, nil, "serve", "--config", path)
	assert.Equal(t, 1, r.code)
	for _, want := range []string{
		`line 3: routes[1].name: route "a" is defined twice`,
		`line 5: agents[0].token: required (or token_file)`,
		`line 7: agents[0].tools: unknown tool "rm_rf"`,
		`line 8: public_url: "ftp://x" must be`,
	} {
		assert.Contains(t, r.stderr, want)
	}
}

// TestSlackManifestsPointToTheSlackPage: the manifests' comments send the
// admin to docs/slack.md, which must exist.
func TestSlackManifestsPointToTheSlackPage(t *testing.T) {
	manifests, err := filepath.Glob("../../deploy/slack/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, manifests)
	for _, m := range manifests {
		b, err := os.ReadFile(m)
		require.NoError(t, err)
		assert.Contains(t, string(b), "See docs/slack.md.", m)
	}
	_, err = os.Stat("../../docs/slack.md")
	assert.NoError(t, err)
}

// TestNoDocOrHelpNamesTheOldCommand: the command is askbridge; Debian and
// Ubuntu's own `bridge` (iproute2) must not be what a snippet starts.
func TestNoDocOrHelpNamesTheOldCommand(t *testing.T) {
	old := regexp.MustCompile("(?m)(^|[\\s`\"'(])bridge (ask|serve|mcp|hook|questions|version|health)\\b|bin/bridge\\b|\"command\": \"bridge\"")
	var files []string
	for _, g := range []string{"../../README.md", "../../docs/*.md", "../../deploy/*", "../../deploy/*/*", "../../scripts/*.sh", "../../Makefile", "../../agent/*/*.go", "../../adapters/*/*.go", "*.go"} {
		m, err := filepath.Glob(g)
		require.NoError(t, err)
		files = append(files, m...)
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.IsDir() {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		if strings.HasSuffix(f, "newcomer_test.go") {
			continue
		}
		for _, m := range old.FindAllString(string(b), -1) {
			t.Errorf("%s names the old command: %q", f, strings.TrimSpace(m))
		}
	}
}
