package main

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type result struct {
	code           int
	stdout, stderr string
}

// runBridge runs the program in-process with the given environment.
func runBridge(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errb)
	return result{code, out.String(), errb.String()}
}

// envReadBySource lists the environment variables this package's code
// reads: the string literals passed to getenv, envOr and the config's env
// helper. withFile holds those read through env, which also reads NAME_FILE.
func envReadBySource(t *testing.T) (all, withFile map[string]bool) {
	t.Helper()
	all, withFile = map[string]bool{}, map[string]bool{}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	name := regexp.MustCompile(`^[A-Z][A-Z0-9_]+$`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			fn, ok := call.Fun.(*ast.Ident)
			if !ok || (fn.Name != "getenv" && fn.Name != "env" && fn.Name != "envURL" && fn.Name != "envOr") {
				return true
			}
			for _, a := range call.Args {
				lit, ok := a.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				v, _ := strconv.Unquote(lit.Value)
				if name.MatchString(v) {
					all[v] = true
					if fn.Name == "env" || fn.Name == "envURL" {
						withFile[v] = true
					}
				}
			}
			return true
		})
	}
	require.NotEmpty(t, all, "found no getenv calls: has the code moved?")
	return all, withFile
}

func TestServeHelpListsFlagsAndEveryEnvironmentVariable(t *testing.T) {
	for _, flag := range []string{"--help", "-h", "-help"} {
		r := runBridge(t, nil, "serve", flag)
		require.Equal(t, 0, r.code, "askbridge serve %s: %s", flag, r.stderr)
		assert.Empty(t, r.stderr)
		assert.Contains(t, r.stdout, "usage: askbridge serve [flags]")
		assert.NotContains(t, r.stdout, "Usage of serve", "Go's bare flag usage")
		for _, f := range []string{"-addr", "-config", "-redis-url"} {
			assert.Contains(t, r.stdout, f)
		}
	}
	help := runBridge(t, nil, "serve", "--help").stdout
	all, withFile := envReadBySource(t)
	for v := range all {
		assert.Regexp(t, `(?m)^  `+v+`\b`, help, "askbridge serve reads %s but its help does not list it", v)
	}
	for v := range withFile {
		assert.Regexp(t, `(?m)^  `+v+` \*`, help, "%s_FILE is read but the help does not mark %s as having a _FILE form", v, v)
	}
	assert.Contains(t, help, "NAME_FILE")
	for _, v := range serveEnv {
		assert.True(t, all[v.name], "the help lists %s, which askbridge serve does not read", v.name)
	}
}

func TestServeHelpNeverPrintsTheRedisPassword(t *testing.T) {
	r := runBridge(t, map[string]string{"REDIS_URL": "redis://:hunter2@redis:6379/0", "BRIDGE_ADDR": "0.0.0.0:9000"}, "serve", "--help")
	require.Equal(t, 0, r.code)
	assert.NotContains(t, r.stdout, "hunter2")
	assert.Contains(t, r.stdout, "0.0.0.0:9000", "the flag's default shows the environment's address")
}

func TestServeUsageErrors(t *testing.T) {
	r := runBridge(t, nil, "serve", "--nope")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "askbridge serve: flag provided but not defined: -nope")
	assert.Contains(t, r.stderr, "usage: askbridge serve [flags]")
	assert.Empty(t, r.stdout)

	r = runBridge(t, nil, "serve", "extra")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `unexpected argument "extra"`)
}

func TestTopLevelHelpNamesEveryCommand(t *testing.T) {
	r := runBridge(t, nil, "--help")
	require.Equal(t, 0, r.code)
	help := r.stdout
	for _, c := range []string{"serve", "ask", "mcp", "hook claude-code", "health", "version", "help"} {
		assert.Regexp(t, `(?m)^  `+regexp.QuoteMeta(c)+`\b`, help, "top-level help omits %q", c)
	}
	// Every subcommand `askbridge questions --help` describes is named too.
	q := runBridge(t, nil, "questions", "--help")
	require.Equal(t, 0, q.code)
	_, cmds, ok := strings.Cut(q.stdout, "commands:\n")
	require.True(t, ok, q.stdout)
	seen := map[string]bool{}
	for _, line := range strings.Split(cmds, "\n") {
		f := strings.Fields(line)
		if !strings.HasPrefix(line, "  ") || strings.HasPrefix(line, "   ") || len(f) == 0 || seen[f[0]] {
			continue
		}
		seen[f[0]] = true
		assert.Regexp(t, `(?m)^  questions `+f[0]+`\b`, help, "top-level help omits \"questions %s\"", f[0])
	}
	assert.True(t, seen["audit"], "questions --help lists audit")

	for _, args := range [][]string{nil, {"nope"}} {
		r := runBridge(t, nil, args...)
		assert.Equal(t, 2, r.code)
		assert.Contains(t, r.stderr, "questions audit", "usage errors show the same help")
	}
}

func TestVersionPrintsVersionCommitAndGo(t *testing.T) {
	a := runBridge(t, nil, "version")
	b := runBridge(t, nil, "--version")
	require.Equal(t, 0, a.code, a.stderr)
	require.Equal(t, 0, b.code, b.stderr)
	assert.Equal(t, a.stdout, b.stdout)
	assert.Regexp(t, `^askbridge \S+\ncommit: \S+`, a.stdout)
	assert.Contains(t, a.stdout, "go: "+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH)

	r := runBridge(t, nil, "version", "extra")
	assert.Equal(t, 2, r.code)
}

func TestReadBuildInfo(t *testing.T) {
	vcs := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.0"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-11-20T10:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	for _, tc := range []struct {
		name          string
		info          *debug.BuildInfo
		ver, com      string
		want, without []string
	}{
		{"link-time values win", vcs, "v2.0.0", "feedface", []string{"askbridge v2.0.0\n", "commit: feedface (modified)\n", "go: go1.26.8 "}, []string{"v1.4.0", "0123456789"}},
		{"toolchain stamp", vcs, "", "", []string{"askbridge v1.4.0\n", "commit: 0123456789abcdef0123456789abcdef01234567 (modified)\n", "commit time: 2026-11-20T10:00:00Z\n"}, nil},
		{"nothing known", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "", "", []string{"askbridge devel\n", "commit: unknown\n", "go: " + runtime.Version()}, []string{"(devel)", "modified", "commit time"}},
		{"no build info", nil, "v1", "", []string{"askbridge v1\n", "commit: unknown\n"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w bytes.Buffer
			readBuildInfo(tc.info, tc.ver, tc.com).write(&w)
			for _, s := range tc.want {
				assert.Contains(t, w.String(), s)
			}
			for _, s := range tc.without {
				assert.NotContains(t, w.String(), s)
			}
		})
	}
}

// TestMakeBuildStampsVersionAndCommit builds the binary the way `make
// build` does and checks that `askbridge --version` reports what was stamped.
func TestMakeBuildStampsVersionAndCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	bin := filepath.Join(t.TempDir(), "askbridge")
	cmd := exec.Command("make", "-s", "-C", "../..", "build", "BIN="+bin, "VERSION=v9.8.7-test")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(bin, "--version").Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "askbridge v9.8.7-test\n")
	assert.Contains(t, string(out), "go: "+runtime.Version())
	if head, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		assert.Contains(t, string(out), "commit: "+strings.TrimSpace(string(head)))
	} else {
		assert.Contains(t, string(out), "commit: unknown")
	}
	_ = os.Remove(bin)
}

func TestHealthExitsZeroOnlyWhenTheBridgeAnswersOK(t *testing.T) {
	status := http.StatusOK
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		w.WriteHeader(status)
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	_, port, _ := net.SplitHostPort(addr)

	r := runBridge(t, map[string]string{"BRIDGE_ADDR": "0.0.0.0:" + port}, "health")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "/healthz", path, "0.0.0.0 is dialled as 127.0.0.1")

	status = http.StatusServiceUnavailable
	r = runBridge(t, map[string]string{"BRIDGE_ADDR": addr}, "health", "--ready")
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "/readyz", path)
	assert.Contains(t, r.stderr, "503 Service Unavailable")

	srv.Close()
	r = runBridge(t, nil, "health", "--url", srv.URL+"/healthz")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "no answer")

	r = runBridge(t, nil, "health", "--help")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "usage: askbridge health")
}
