// Package bridgetest builds the real bridge binary and runs `askbridge serve`
// on the embedded default for end-to-end tests of the client side.
package bridgetest

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/cli"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildOut  []byte
)

// repoRoot is the module root, found from this file's location.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Binary builds ./cmd/bridge once per test process and returns its path.
// Long on a cold cache: callers skip under -short.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "askbridge-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "askbridge")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/bridge")
		cmd.Dir = repoRoot()
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("building bridge: %v\n%s", buildErr, buildOut)
	}
	return binPath
}

// HandlesClientCommands reports whether the built binary dispatches the
// client-side commands (cmd/bridge's run calls clientCommand).
func HandlesClientCommands(t testing.TB) bool {
	out, _ := exec.Command(Binary(t), "questions", "--help").CombinedOutput()
	return strings.Contains(string(out), "askbridge questions <command>")
}

// Server is a running `askbridge serve`.
type Server struct {
	URL string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	env  []string
	addr string // host:port, kept across Restart
	logs *logWriter
}

var listening = regexp.MustCompile(`listening on (http://([0-9.:]+))`)

// Serve starts `askbridge serve --addr 127.0.0.1:0` with env added to the
// environment (e.g. "BRIDGE_WEBHOOK_SECRET=..."), its own data directory,
// waits until it listens and stops it at the end of the test.
func Serve(t testing.TB, env ...string) *Server {
	t.Helper()
	// Each bridge keeps its state in a directory of its own: the default
	// (the user's state directory) is owned by one process at a time, so
	// parallel tests, or a bridge the user runs, would refuse each other.
	s := &Server{env: append(append(cleanEnv(), "BRIDGE_DATA_DIR="+t.TempDir()), env...), addr: "127.0.0.1:0",
		logs: &logWriter{t: t}}
	t.Cleanup(func() {
		s.stop()
		s.logs.stop()
	})
	s.start(t)
	return s
}

// start runs the bridge on s.addr and waits until it listens.
func (s *Server) start(t testing.TB) {
	t.Helper()
	cmd := exec.Command(Binary(t), "serve", "--addr", s.addr)
	cmd.Env = s.env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = s.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	urlCh := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urlCh <- m:
				default:
				}
			}
		}
		_ = cmd.Wait()
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	select {
	case m := <-urlCh:
		s.URL, s.addr = m[1], m[2]
	case <-done:
		t.Fatal("askbridge serve exited before it listened")
	case <-time.After(30 * time.Second):
		t.Fatal("askbridge serve did not start listening within 30s")
	}
}

// stop ends the bridge gracefully (SIGTERM), killing it after 15 s.
func (s *Server) stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// Restart stops the bridge as an operator would (SIGTERM: a graceful
// shutdown), leaves its address unanswered for down, and starts it again
// on the same address and data directory.
func (s *Server) Restart(t testing.TB, down time.Duration) {
	t.Helper()
	s.stop()
	time.Sleep(down)
	s.start(t)
}

// cleanEnv is the environment without BRIDGE_*, REDIS_URL and chat
// platform settings, so a developer's shell does not leak into tests.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "BRIDGE_") || strings.HasPrefix(k, "SLACK_") || strings.HasPrefix(k, "DISCORD_") || k == "REDIS_URL" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// CleanEnv is the environment without askbridge settings.
func CleanEnv() []string { return cleanEnv() }

type logWriter struct {
	t       testing.TB
	mu      sync.Mutex
	stopped bool
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.t.Logf("askbridge serve: %s", strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (w *logWriter) stop() { w.mu.Lock(); w.stopped = true; w.mu.Unlock() }

// Context returns a context that ends with the test or after d.
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// envAsBridge makes a test binary act as the bridge's client side.
const envAsBridge = "ASKBRIDGE_TEST_AS_BRIDGE"

// RunAsBridge must be called first in the TestMain of a package that uses
// ClientCommand: in the child process it runs the client command (the same
// cli.Run that cmd/bridge calls) and exits.
func RunAsBridge() {
	if os.Getenv(envAsBridge) != "1" {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code, handled := cli.Run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	if !handled {
		code = 2
	}
	os.Exit(code)
}

// ClientCommand returns a command running `askbridge <args>` against srv: the
// built binary once cmd/bridge dispatches the client commands, until then
// the test binary acting as it (see RunAsBridge). env is added to a clean
// environment with BRIDGE_URL set.
func ClientCommand(t testing.TB, srv *Server, args []string, env ...string) *exec.Cmd {
	t.Helper()
	var cmd *exec.Cmd
	if HandlesClientCommands(t) {
		cmd = exec.Command(Binary(t), args...)
		cmd.Env = cleanEnv()
	} else {
		cmd = exec.Command(os.Args[0], args...)
		cmd.Env = append(cleanEnv(), envAsBridge+"=1")
	}
	cmd.Env = append(cmd.Env, "BRIDGE_URL="+srv.URL)
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// Main runs the tests of a package that uses this package: call it from
// TestMain as os.Exit(bridgetest.Main(m)). It acts as the bridge in child
// processes (RunAsBridge) and removes the built binary at the end.
func Main(m *testing.M) int {
	RunAsBridge()
	code := m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	return code
}
