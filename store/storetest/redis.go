// Package storetest starts real Redis servers for tests and holds the
// conformance suite every core.Store implementation must pass.
package storetest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Server is a redis-server process started for a test.
type Server struct {
	URL  string
	Addr string
	cmd  *exec.Cmd
	dir  string
	args []string
}

// Redis starts a redis-server on a free loopback port in a temp dir and
// returns its URL. The server is killed when the test ends. The test fails
// (it is not skipped) when redis-server is missing: `make test` installs it.
func Redis(t testing.TB, extra ...string) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server not found: run `make test` (it installs redis-server) or apt-get install redis-server")
	}
	dir := t.TempDir()
	port := freePort(t)
	args := append([]string{"--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--protected-mode", "no"}, extra...)
	s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), dir: dir, args: args}
	s.URL = "redis://" + s.Addr
	s.start(t, bin)
	t.Cleanup(s.Kill)
	return s
}

func (s *Server) start(t testing.TB, bin string) {
	t.Helper()
	s.cmd = exec.Command(bin, s.args...)
	s.cmd.Dir = s.dir
	log, err := os.Create(filepath.Join(s.dir, "redis.log"))
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if ping(s.Addr) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	b, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	t.Fatalf("redis-server did not start on %s: %s", s.Addr, b)
}

// Kill stops the server at once (SIGKILL).
func (s *Server) Kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
		s.cmd = nil
	}
}

// Restart kills the server and starts it again on the same port and dir.
func (s *Server) Restart(t testing.TB) {
	s.Kill()
	bin, _ := exec.LookPath("redis-server")
	s.start(t, bin)
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

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
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
