package clients

import (
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/bridgetest"
)

// docBlock returns the first fenced block of lang under the heading of
// docs/python.md.
func docBlock(t *testing.T, heading, lang string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(here(), "..", "docs", "python.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("docs/python.md has no %q section", heading)
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	m := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```").FindStringSubmatch(section)
	if m == nil {
		t.Fatalf("docs/python.md %s has no ```%s block", heading, lang)
	}
	return m[1]
}

// copyTree copies the files of src (no caches) into dst: the package as a
// fresh checkout has it.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && p != src || d.Name() == "__pycache__" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// shell runs script with sh -e in dir and returns its output.
func shell(t *testing.T, dir string, env []string, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", "-ec", script)
	cmd.Dir = dir
	cmd.Env = append(bridgetest.CleanEnv(), env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("$ %s(%s)\n%s", strings.ReplaceAll(script, "\n", "\n$ "), time.Since(start).Round(time.Millisecond), out)
	return string(out), err
}

// TestPythonInstall follows docs/python.md as a new user would, in a fresh
// directory holding a copy of clients/python: the install block exactly as
// written (with PIP_NO_INDEX=1, so any download would fail), then the quick
// start against a real bridge, answered as a person through the API.
func TestPythonInstall(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the bridge, makes venvs and runs Python")
	}
	install := docBlock(t, "## Install", "sh")
	quick := docBlock(t, "## Quick start", "python")
	if n := strings.Count(strings.TrimSpace(quick), "\n") + 1; n > 10 {
		t.Errorf("the quick start has %d lines; at most 10", n)
	}
	// The install block says python3: on a machine without a package index
	// that must be the Python that has httpx (the doc says so), which may
	// not be the first python3 on PATH (a pyenv shim).
	py := python(t)
	exe, err := exec.Command(py, "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	copyTree(t, filepath.Join(here(), "python"), filepath.Join(dir, "clients", "python"))
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	wrapper := fmt.Sprintf("#!/bin/sh\nexec %q \"$@\"\n", strings.TrimSpace(string(exe)))
	if err := os.WriteFile(filepath.Join(bin, "python3"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "PIP_NO_INDEX=1", "PYTHONDONTWRITEBYTECODE=1"}
	if out, err := shell(t, dir, env, install); err != nil {
		t.Fatalf("the install block of docs/python.md failed: %v\n%s", err, out)
	}
	venvPy := filepath.Join(dir, ".venv", "bin", "python")
	where, err := exec.Command(venvPy, "-c", "import askbridge; print(askbridge.__file__)").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(where), filepath.Join(dir, ".venv")) {
		t.Fatalf("askbridge is not installed in the venv: %v %s", err, where)
	}

	t.Run("quick start", func(t *testing.T) {
		srv := bridgetest.Serve(t)
		project := "python-quickstart"
		if err := os.WriteFile(filepath.Join(dir, "quickstart.py"), []byte(quick), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(venvPy, "quickstart.py")
		cmd.Dir = dir
		cmd.Env = append(bridgetest.CleanEnv(), "BRIDGE_URL="+srv.URL, "BRIDGE_PROJECT="+project)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		id := waitPending(t, srv.URL, project, done, &stderr)
		res, err := http.Post(srv.URL+"/api/projects/"+project+"/agent-questions/"+id+"/respond", "application/json", strings.NewReader(`{"response": "EU"}`))
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusAccepted {
			t.Fatalf("respond: %s", res.Status)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("quickstart.py: %v\n%s", err, stderr.String())
			}
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			t.Fatal("quickstart.py did not finish after the answer")
		}
		t.Logf("quickstart.py printed %q", stdout.String())
		if stdout.String() != "answered EU\n" {
			t.Fatalf("quickstart.py printed %q, want %q\nstderr: %s", stdout.String(), "answered EU\n", stderr.String())
		}
	})

	// Anywhere else: whatever python3 comes first on PATH, in a venv that
	// sees no system packages, the build itself downloads nothing and the
	// one thing pip wants from an index is httpx.
	t.Run("the build needs no index", func(t *testing.T) {
		first := "python3"
		if exec.Command(first, "-c", "import sys; assert sys.version_info >= (3, 11)").Run() != nil {
			first = strings.TrimSpace(string(exe))
		}
		env := []string{"PIP_NO_INDEX=1", "PYTHONDONTWRITEBYTECODE=1"}
		out, err := shell(t, dir, env, first+" -m venv plain\nplain/bin/pip --version\nplain/bin/pip wheel --no-deps -w wheels ./clients/python")
		if err != nil {
			t.Fatalf("building the wheel: %v\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "wheels", "askbridge-0.1.0-py3-none-any.whl")); err != nil {
			t.Fatalf("no wheel built: %v\n%s", err, out)
		}
		out, err = shell(t, dir, env, "plain/bin/pip install ./clients/python")
		if err == nil || !strings.Contains(out, "No matching distribution found for httpx") || strings.Contains(out, "setuptools") {
			t.Fatalf("without httpx and an index, pip should want httpx and nothing else: %v\n%s", err, out)
		}
	})
}
