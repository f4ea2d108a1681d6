package clients

import (
	"bufio"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/bridgetest"
)

// TestTypeScriptWaitThroughARestart: the TypeScript client's wait carries
// on while the bridge restarts (graceful stop, 2 s unreachable, started
// again on its data directory) and returns the answer given afterwards.
func TestTypeScriptWaitThroughARestart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds, restarts the bridge and runs Node")
	}
	node, tsc := nodeSetup(t)
	buildTS(t, node, tsc)
	waitThroughRestart(t, func(srv *bridgetest.Server) []*exec.Cmd {
		cmd := exec.Command(node, filepath.Join("test", "restart.mjs"))
		cmd.Dir = filepath.Join(here(), "typescript")
		cmd.Env = append(bridgetest.CleanEnv(), "BRIDGE_URL="+srv.URL, "BRIDGE_PROJECT=restart")
		return []*exec.Cmd{cmd}
	})
}

// TestPythonWaitThroughARestart: both Python clients, sync and async, as
// the TypeScript one.
func TestPythonWaitThroughARestart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds, restarts the bridge and runs Python")
	}
	py := python(t)
	waitThroughRestart(t, func(srv *bridgetest.Server) []*exec.Cmd {
		var cmds []*exec.Cmd
		for _, kind := range []string{"sync", "async"} {
			cmd := exec.Command(py, filepath.Join("tests", "restart_script.py"), kind)
			cmd.Dir = filepath.Join(here(), "python")
			cmd.Env = append(bridgetest.CleanEnv(), "BRIDGE_URL="+srv.URL, "BRIDGE_PROJECT=restart",
				"PYTHONPATH="+filepath.Join(here(), "python", "src"), "PYTHONDONTWRITEBYTECODE=1")
			cmds = append(cmds, cmd)
		}
		return cmds
	})
}

// waitThroughRestart starts the clients, each of which asks, prints its
// question's id and waits; restarts the bridge while they wait; answers
// every question; and checks each client printed the answer.
func waitThroughRestart(t *testing.T, clients func(*bridgetest.Server) []*exec.Cmd) {
	t.Helper()
	srv := bridgetest.Serve(t)
	type running struct {
		cmd    *exec.Cmd
		lines  chan string
		stderr *strings.Builder
		done   chan error
	}
	var rs []running
	for _, cmd := range clients(srv) {
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		r := running{cmd: cmd, lines: make(chan string, 4), stderr: &strings.Builder{}, done: make(chan error, 1)}
		cmd.Stderr = r.stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				r.lines <- sc.Text()
			}
			close(r.lines)
			r.done <- cmd.Wait()
		}()
		rs = append(rs, r)
	}
	line := func(r running, what string) string {
		t.Helper()
		select {
		case l, ok := <-r.lines:
			if !ok {
				t.Fatalf("%v ended before printing %s: %v\n%s", r.cmd.Args, what, <-r.done, r.stderr)
			}
			return l
		case <-time.After(60 * time.Second):
			t.Fatalf("%v printed no %s in time\n%s", r.cmd.Args, what, r.stderr)
		}
		return ""
	}
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = line(r, "question id")
	}
	time.Sleep(500 * time.Millisecond) // their long-polls are parked on the bridge
	srv.Restart(t, 2*time.Second)
	for i, id := range ids {
		res, err := http.Post(srv.URL+"/api/projects/restart/agent-questions/"+id+"/respond", "application/json", strings.NewReader(`{"response": "Yes"}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if res.StatusCode != http.StatusAccepted {
			t.Fatalf("answering %v's question: %s %s\n%s", rs[i].cmd.Args, res.Status, body, rs[i].stderr)
		}
	}
	for _, r := range rs {
		if got := line(r, "the final record"); got != `{"status": "answered", "response": "Yes"}` && got != `{"status":"answered","response":"Yes"}` {
			t.Errorf("%v printed %s, want the answer", r.cmd.Args, got)
		}
		if err := <-r.done; err != nil {
			t.Errorf("%v: %v\n%s", r.cmd.Args, err, r.stderr)
		}
	}
}
