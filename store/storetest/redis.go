package storetest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/store"
)

// Server is a redis-server process started for a test.
type Server struct {
	URL  string
	Addr string
	Port int
	// Dir is the server's working directory (AOF, RDB, nodes.conf, log).
	Dir  string
	cmd  *exec.Cmd
	args []string
}

// errNoRedis explains how to get redis-server.
var errNoRedis = errors.New("redis-server not found: run `make test` (it installs redis-server) or apt-get install redis-server redis-tools")

// Redis starts a redis-server on a free loopback port in a temp dir and
// returns its URL. The server is killed when the test ends. The test fails
// (it is not skipped) when redis-server is missing: `make test` installs it.
// extra are further redis-server arguments, e.g. "--appendonly", "yes".
func Redis(t testing.TB, extra ...string) *Server {
	t.Helper()
	s, err := StartServer(t.TempDir(), extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Kill)
	return s
}

// StartServer starts a redis-server in dir on a free loopback port without
// tying it to a test (TestMain shares one between tests); call Kill.
func StartServer(dir string, extra ...string) (*Server, error) {
	port, err := freePortErr()
	if err != nil {
		return nil, err
	}
	args := append([]string{"--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--protected-mode", "no"}, extra...)
	s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), Port: port, Dir: dir, args: args}
	s.URL = "redis://" + s.Addr
	if err := s.start(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Server) start() error {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return errNoRedis
	}
	s.cmd = exec.Command(bin, s.args...)
	s.cmd.Dir = s.Dir
	log, err := os.OpenFile(filepath.Join(s.Dir, "redis.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("starting redis-server: %w", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if ping(s.Addr) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	b, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
	s.Kill()
	return fmt.Errorf("redis-server did not start on %s: %s", s.Addr, b)
}

// Kill stops the server at once (SIGKILL).
func (s *Server) Kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
		s.cmd = nil
	}
}

// Restart kills the server and starts it again on the same port and dir
// (with AOF on, what was fsynced survives).
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Kill()
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
}

// Start starts a killed server again on the same port and dir.
func (s *Server) Start() error {
	if s.cmd != nil {
		return nil
	}
	return s.start()
}

// Cli runs redis-cli against the server and returns its trimmed output.
func (s *Server) Cli(args ...string) (string, error) {
	return cli(append([]string{"-h", "127.0.0.1", "-p", fmt.Sprint(s.Port)}, args...)...)
}

func cli(args ...string) (string, error) {
	bin, err := exec.LookPath("redis-cli")
	if err != nil {
		return "", errors.New("redis-cli not found: apt-get install redis-tools")
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("redis-cli %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

func ping(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	fmt.Fprint(c, "PING\r\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

func freePortErr() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WaitFor polls cond every 10ms until it holds or d passes.
func WaitFor(ctx context.Context, d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
	return cond()
}

// Open opens a store for a test on url ("" = the embedded in-process
// store) and closes it when the test ends, after everything registered
// later (routers, adapters) has stopped.
func Open(t testing.TB, url string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), store.Options{URL: url})
	if err != nil {
		t.Fatalf("opening the store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}
