package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goEnv returns `go env NAME`.
func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

// TestMakeInstallThenTheReadmeFindsAskbridge follows the README on a
// machine where the directory `make install` chooses is not on PATH: `make
// install` (with and without GOBIN), then, in a new shell, the
// walkthrough's first block and step 3's block as written. askbridge is
// found in both (step 3 is pasted in a new terminal, so it must stand on
// its own).
func TestMakeInstallThenTheReadmeFindsAskbridge(t *testing.T) {
	if testing.Short() {
		t.Skip("runs make install")
	}
	for _, tool := range []string{"make", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found", tool)
		}
	}
	goBin, err := exec.LookPath("go")
	require.NoError(t, err)
	// A shell of a newcomer: PATH has the system's directories and Go's,
	// neither ~/.local/bin nor $GOBIN.
	basePath := filepath.Dir(goBin) + ":/usr/bin:/bin"
	goCache := []string{"GOCACHE=" + goEnv(t, "GOCACHE"), "GOMODCACHE=" + goEnv(t, "GOMODCACHE"), "GOPATH=" + goEnv(t, "GOPATH"),
		"GOFLAGS=" + goEnv(t, "GOFLAGS"), "GOTOOLCHAIN=local"}
	_, blocks := readmeWalkthrough(t)
	envBlock, step3 := blocks["environment"][0], blocks["person"][0]
	b := startBridge(t)
	port := b.URL[strings.LastIndex(b.URL, ":")+1:]

	for _, c := range []struct{ name, gobin string }{{"no GOBIN", ""}, {"GOBIN set", "gobin"}} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			env := append([]string{"HOME=" + home, "PATH=" + basePath, "LANG=C.UTF-8"}, goCache...)
			want := filepath.Join(home, ".local", "bin", "askbridge")
			if c.gobin != "" {
				gobin := filepath.Join(home, c.gobin)
				env = append(env, "GOBIN="+gobin)
				want = filepath.Join(gobin, "askbridge")
			}
			install := exec.Command("make", "-s", "install")
			install.Dir = filepath.Join("..", "..")
			install.Env = env
			got, err := install.CombinedOutput()
			require.NoError(t, err, "%s", got)
			assert.Contains(t, string(got), "installed "+want+"\n")
			assert.Contains(t, string(got), filepath.Dir(want)+" is not on PATH")

			// The walkthrough's first block, then askbridge.
			sh := exec.Command("bash", "-euo", "pipefail", "-c", envBlock+"\ncommand -v askbridge\naskbridge version")
			sh.Dir, sh.Env = home, env
			got, err = sh.CombinedOutput()
			require.NoError(t, err, "the README's first block does not put askbridge on PATH:\n%s", got)
			assert.True(t, strings.HasPrefix(string(got), want+"\naskbridge "), "%s", got)

			// Step 3 pasted alone in a new terminal, in the directory of step 1.
			code, out := b.call("POST", "/api/projects/demo/agent-questions", map[string]any{"run_id": "r-" + strings.ReplaceAll(c.name, " ", "-"), "question": "Which auth method?",
				"options": []map[string]any{{"label": "OAuth 2.0"}, {"label": "API key"}}})
			require.Equal(t, 201, code)
			require.NoError(t, os.WriteFile(filepath.Join(home, ".question-id"), []byte(out["id"].(string)+"\n"), 0o600))
			sh = exec.Command("bash", "-euo", "pipefail", "-c", strings.ReplaceAll(step3, ":8080", ":"+port))
			sh.Dir, sh.Env = home, env
			got, err = sh.CombinedOutput()
			require.NoError(t, err, "step 3 pasted in a new terminal:\n%s", got)
			assert.Contains(t, string(got), "Which auth method?")
		})
	}
}
