package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/askbridge/askbridge/store/storetest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The walkthrough's shell blocks are marked in README.md with an HTML
// comment naming their role, right above the fence:
//
//	setup        the terminal that installs the command and then runs the bridge
//	environment  the first lines of every other terminal
//	agent        steps 1 and 2, in order, in the agent's terminal
//	person       step 3, in another terminal
//	script       step 5: askbridge ask, answered as its message says
var walkthroughBlock = regexp.MustCompile("(?s)<!-- walkthrough: ([a-z]+) -->\n```sh\n(.*?)```")

// readmeWalkthrough returns README.md's marked shell blocks by role.
func readmeWalkthrough(t *testing.T) (readme string, blocks map[string][]string) {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	blocks = map[string][]string{}
	for _, m := range walkthroughBlock.FindAllStringSubmatch(string(b), -1) {
		blocks[m[1]] = append(blocks[m[1]], m[2])
	}
	for role, n := range map[string]int{"setup": 1, "environment": 1, "agent": 2, "person": 1, "script": 1} {
		require.Len(t, blocks[role], n, "README.md marks %d walkthrough block(s) %q (<!-- walkthrough: %s --> above a ```sh fence)", n, role, role)
	}
	return string(b), blocks
}

// terminal is one shell of the walkthrough: bash running blocks in the
// clone, in a process group of its own so that stopping it stops
// whatever it started (make run's children too).
type terminal struct {
	cmd      *exec.Cmd
	mu       sync.Mutex
	out, err bytes.Buffer
	done     chan struct{}
	exitErr  error
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (s *terminal) stdout() string { s.mu.Lock(); defer s.mu.Unlock(); return s.out.String() }
func (s *terminal) stderr() string { s.mu.Lock(); defer s.mu.Unlock(); return s.err.String() }
func (s *terminal) output() string { return s.stdout() + s.stderr() }

// wait waits for the shell to end, failing the test after d.
func (s *terminal) wait(t *testing.T, d time.Duration, what string) error {
	t.Helper()
	select {
	case <-s.done:
		return s.exitErr
	case <-time.After(d):
		t.Fatalf("%s did not finish within %s:\n%s", what, d, s.output())
	}
	return nil
}

// stop ends the shell's process group: SIGTERM, then SIGKILL.
func (s *terminal) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
}

// cleanMachine is a fresh HOME with a copy of the repository in it, the Go
// toolchain on PATH, and nothing of askbridge installed or on PATH.
type cleanMachine struct {
	home, clone string
	port        string
	env         []string // every terminal's environment before the README's steps
}

func newCleanMachine(t *testing.T) *cleanMachine {
	t.Helper()
	home := t.TempDir()
	m := &cleanMachine{home: home, clone: filepath.Join(home, "askbridge")}
	copyRepository(t, "../..", m.clone)
	addr := freeAddr(t)
	m.port = addr[strings.LastIndex(addr, ":")+1:]
	// PATH as found, without any directory that holds an askbridge
	// already: the command must come from this walkthrough's make install.
	var path []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "askbridge")); err != nil && dir != "" {
			path = append(path, dir)
		}
	}
	// The Go caches are shared with this machine (no network: GOPROXY=off);
	// GOBIN is not set, so make install takes ~/.local/bin.
	goEnv, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	require.NoError(t, err)
	caches := strings.Fields(string(goEnv))
	require.Len(t, caches, 2)
	m.env = []string{"HOME=" + home, "PATH=" + strings.Join(path, string(os.PathListSeparator)), "LANG=C.UTF-8",
		"GOCACHE=" + caches[0], "GOMODCACHE=" + caches[1], "GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS=" + os.Getenv("GOFLAGS")}
	return m
}

// copyRepository copies the files git tracks (or would: untracked ones not
// ignored), as a fresh clone of this working tree has them.
func copyRepository(t *testing.T, from, to string) {
	t.Helper()
	out, err := exec.Command("git", "-C", from, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("the walkthrough copies a git checkout; git ls-files: %v", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(from, name)
		st, err := os.Lstat(src)
		if err != nil || !st.Mode().IsRegular() {
			continue // deleted in the working tree, or a link
		}
		dst := filepath.Join(to, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(dst, b, st.Mode().Perm()))
	}
}

// start runs blocks in a new terminal: bash in the clone, with the
// walkthrough's port for 8080 (as README.md says to do for another port).
func (m *cleanMachine) start(t *testing.T, extraEnv []string, blocks ...string) *terminal {
	t.Helper()
	src := "set -euo pipefail\n" + strings.ReplaceAll(strings.Join(blocks, "\n"), ":8080", ":"+m.port)
	s := &terminal{cmd: exec.Command("bash", "-c", src), done: make(chan struct{})}
	s.cmd.Dir = m.clone
	s.cmd.Env = append(append([]string{}, m.env...), extraEnv...)
	s.cmd.Stdout, s.cmd.Stderr = lockedWriter{&s.mu, &s.out}, lockedWriter{&s.mu, &s.err}
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, s.cmd.Start())
	go func() { s.exitErr = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(s.stop)
	return s
}

// run runs blocks in a new terminal to their end.
func (m *cleanMachine) run(t *testing.T, what string, blocks ...string) *terminal {
	t.Helper()
	s := m.start(t, nil, blocks...)
	require.NoError(t, s.wait(t, 2*time.Minute, what), "%s failed:\n%s", what, s.output())
	return s
}

func (m *cleanMachine) url() string { return "http://127.0.0.1:" + m.port }

// TestReadmeWalkthroughOnACleanMachine walks README.md's walkthrough as a
// newcomer does, on a clean machine: a fresh HOME holding a copy of the
// repository, Go on PATH, GOBIN unset and ~/.local/bin not on PATH. It
// runs the README's marked shell blocks as written (only the port is
// another): make install and make run in one terminal, the agent's curl
// calls in a second, the CLI answering in a third, then askbridge ask
// answered with the id it printed. Then it runs docs/agents.md's MCP
// snippet's server command with its environment, as a host would, and
// checks that its question lands in project demo. It logs the time from
// the start (the clone) to the first answer.
func TestReadmeWalkthroughOnACleanMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("installs and runs the bridge from a copy of the repository")
	}
	for _, tool := range []string{"bash", "curl", "make", "git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the walkthrough needs %s", tool)
		}
	}
	began := time.Now()
	readme, blocks := readmeWalkthrough(t)
	assert.LessOrEqual(t, strings.Count(readme, "\n"), 400, "README.md stays within 400 lines")
	m := newCleanMachine(t)
	env := blocks["environment"][0]

	// Terminal 1: Set up — make install, then make run, which keeps it.
	bridge := m.start(t, []string{"BRIDGE_ADDR=127.0.0.1:" + m.port}, blocks["setup"]...)
	ready := storetest.WaitFor(t.Context(), 4*time.Minute, func() bool {
		select {
		case <-bridge.done:
			return true
		default:
		}
		res, err := http.Get(m.url() + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	select {
	case <-bridge.done:
		t.Fatalf("the Set up block ended (%v) instead of running the bridge:\n%s", bridge.exitErr, bridge.output())
	default:
	}
	require.True(t, ready, "the bridge of make run did not become ready:\n%s", bridge.output())
	assert.Contains(t, bridge.output(), "installed "+filepath.Join(m.home, ".local", "bin", "askbridge"))
	assert.Contains(t, bridge.output(), "is not on PATH", "make install says so on a machine where ~/.local/bin is not on PATH")
	t.Logf("clone to a ready bridge (make install, make run): %s", time.Since(began).Round(100*time.Millisecond))

	// Terminal 2: the agent asks (step 1) and waits (step 2).
	agent := m.start(t, nil, append([]string{env}, blocks["agent"]...)...)
	idFile := filepath.Join(m.clone, ".question-id")
	storetest.WaitFor(t.Context(), 30*time.Second, func() bool {
		b, _ := os.ReadFile(idFile)
		return strings.TrimSpace(string(b)) != ""
	})
	b, _ := os.ReadFile(idFile)
	require.NotEmpty(t, strings.TrimSpace(string(b)), "step 1 kept no question id:\n%s", agent.output())

	// Terminal 3: someone answers with the CLI (step 3).
	person := m.run(t, "step 3 (the CLI answers)", env, blocks["person"][0])
	assert.Contains(t, person.stdout(), "Which auth method?", "questions list and show print the question")
	assert.Contains(t, person.stdout(), "OAuth 2.0")

	// Step 4: the waiter wakes with the answer.
	require.NoError(t, agent.wait(t, time.Minute, "step 2 (the wait)"), "steps 1-2 failed:\n%s", agent.output())
	firstAnswer := time.Since(began)
	t.Logf("clone to the first answer: %s", firstAnswer.Round(100*time.Millisecond))
	assert.Contains(t, agent.stdout(), `"status":"answered"`)
	assert.Contains(t, agent.stdout(), `"response":"oauth"`)
	assert.Contains(t, agent.stdout(), `"answers":{"Which auth method?":"OAuth 2.0"}`)
	// The message the README quotes is the one the agent got.
	var asked struct {
		Message string `json:"message"`
	}
	require.NoError(t, json.NewDecoder(strings.NewReader(agent.stderr())).Decode(&asked), "step 1's record (tee'd to stderr):\n%s", agent.stderr())
	quoted := regexp.MustCompile("`(Question \\S+ sent to the web inbox; this run will pause\\s+until someone answers \\(expires in 30 min\\)\\.)`").FindStringSubmatch(readme)
	require.NotNil(t, quoted, "README.md quotes step 1's message")
	shortID := regexp.MustCompile(`^Question (\S+) sent`)
	assert.Equal(t, shortID.ReplaceAllString(strings.Join(strings.Fields(quoted[1]), " "), "Question ID sent"),
		shortID.ReplaceAllString(asked.Message, "Question ID sent"), "the README quotes the message as the bridge writes it")
	assert.Regexp(t, `^Question [0-9a-f]{8}… sent`, asked.Message)
	assert.Regexp(t, `^Question [0-9a-f]{8}… sent`, quoted[1], "the README's example short id has the length of one")

	// Step 5: askbridge ask waits; the person answers with the short id it
	// printed, ellipsis and all, in another terminal.
	script := m.start(t, nil, env, blocks["script"][0])
	var printed []string
	storetest.WaitFor(t.Context(), 30*time.Second, func() bool {
		printed = regexp.MustCompile(`Question (\S+) sent to the web inbox`).FindStringSubmatch(script.stderr())
		return printed != nil
	})
	require.NotNil(t, printed, "askbridge ask printed no short id:\n%s", script.output())
	assert.Contains(t, readme, "short id on stderr (`Question 3f2a9c1b… sent", "the README says askbridge ask prints a short id, as it does")
	m.run(t, "answering step 5 with the printed short id", env, "askbridge questions answer '"+printed[1]+"' 1")
	require.NoError(t, script.wait(t, time.Minute, "step 5 (askbridge ask)"), "step 5 failed:\n%s", script.output())
	assert.Equal(t, "Deploy now\n", script.stdout())

	t.Run("MCP snippet of docs/agents.md", func(t *testing.T) { mcpSnippetAsWritten(t, m, env) })
}

// mcpSnippetAsWritten runs the server command of docs/agents.md's
// `claude mcp add` snippet with the environment it sets, as Claude Code
// would start it from a shell where the README's PATH step was done (the
// snippet's --env only: not the README's BRIDGE_URL or BRIDGE_PROJECT),
// asks through it with a minimal MCP client, and checks the question lands
// in project demo, where the walkthrough's list looks.
func mcpSnippetAsWritten(t *testing.T, m *cleanMachine, env string) {
	b, err := os.ReadFile("../../docs/agents.md")
	require.NoError(t, err)
	line := regexp.MustCompile(`(?m)^claude mcp add askbridge (.*) -- (.+)$`).FindStringSubmatch(string(b))
	require.NotNil(t, line, "docs/agents.md has no `claude mcp add askbridge … -- …` snippet")
	var vars []string
	for _, kv := range regexp.MustCompile(`--env (\S+)`).FindAllStringSubmatch(line[1], -1) {
		vars = append(vars, strings.ReplaceAll(kv[1], ":8080", ":"+m.port))
	}
	// The command as the shell that followed the README's environment step
	// expands it (the snippet may write "$(command -v askbridge)"), one
	// word a line, then that shell's PATH.
	shell := m.run(t, "the README's environment step", env, `for w in `+line[2]+`; do printf '%s\n' "$w"; done; printf '%s' "$PATH"`)
	words := strings.Split(shell.stdout(), "\n")
	argv, path := words[:len(words)-1], words[len(words)-1]
	require.NotEmpty(t, argv)
	require.Equal(t, "askbridge", filepath.Base(argv[0]))
	bin := argv[0]
	if !filepath.IsAbs(bin) {
		bin = ""
		for _, dir := range filepath.SplitList(path) {
			if st, err := os.Stat(filepath.Join(dir, argv[0])); err == nil && !st.IsDir() {
				bin = filepath.Join(dir, argv[0])
				break
			}
		}
	}
	require.NotEmpty(t, bin, "%s is not on the PATH the README's environment step gives (%s)", argv[0], path)
	cmd := exec.Command(bin, argv[1:]...)
	cmd.Env = append([]string{"HOME=" + m.home, "PATH=" + path}, vars...)
	var logMu sync.Mutex
	var logBuf bytes.Buffer
	cmd.Stderr = lockedWriter{&logMu, &logBuf}
	serverLog := func() string { logMu.Lock(); defer logMu.Unlock(); return logBuf.String() }

	c := mcp.NewClient(&mcp.Implementation{Name: "walkthrough-host", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	s, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err, "%s %s did not start as an MCP server:\n%s", bin, strings.Join(argv[1:], " "), serverLog())
	defer s.Close()

	type called struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan called, 1)
	go func() {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "ask_user", Arguments: map[string]any{"questions": []any{map[string]any{
			"question": "Which region first?", "header": "Region",
			"options": []any{map[string]any{"label": "eu-west-1", "description": "Dublin"}, map[string]any{"label": "us-east-1", "description": "Virginia"}},
		}}}})
		done <- called{res, err}
	}()
	var id string
	storetest.WaitFor(ctx, time.Minute, func() bool {
		select {
		case r := <-done:
			done <- r // the call ended before anyone answered: reported below
			return true
		default:
		}
		id = pendingIn(m.url(), "demo", "Which region first?")
		return id != ""
	})
	if id == "" {
		cancel() // a call still waiting: on a question nobody here will see
		r := <-done
		where := "nowhere"
		for _, p := range []string{"default", "ops"} {
			if pendingIn(m.url(), p, "Which region first?") != "" {
				where = "project " + p
			}
		}
		t.Fatalf("the MCP question did not land in project demo (it is in %s); the call returned %v %s; the server said:\n%s",
			where, r.err, toolText(r.res), serverLog())
	}
	status, body := authed(t, "POST", m.url()+"/api/projects/demo/agent-questions/"+id+"/respond", "", map[string]any{"response": "eu-west-1"})
	require.Equal(t, http.StatusAccepted, status, "%v", body)
	r := <-done
	require.NoError(t, r.err)
	require.False(t, r.res.IsError, toolText(r.res))
	assert.Contains(t, toolText(r.res), "eu-west-1")
}

// pendingIn returns the id of the pending question of project whose first
// item is text, or "".
func pendingIn(base, project, text string) string {
	res, err := http.Get(base + "/api/projects/" + project + "/agent-questions?status=pending")
	if err != nil {
		return ""
	}
	defer res.Body.Close()
	var list struct {
		Questions []struct {
			ID        string `json:"id"`
			Questions []struct {
				Question string `json:"question"`
			} `json:"questions"`
		} `json:"questions"`
	}
	if json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&list) != nil {
		return ""
	}
	for _, q := range list.Questions {
		if len(q.Questions) > 0 && q.Questions[0].Question == text {
			return q.ID
		}
	}
	return ""
}

func toolText(r *mcp.CallToolResult) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			fmt.Fprintln(&b, tc.Text)
		}
	}
	return b.String()
}
