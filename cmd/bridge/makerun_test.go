package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/askbridge/askbridge/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestMakeRunStopsWithItsPID: stopping `make run` by its PID (kill PID, as
// a script or a process manager does) stops the bridge: the address and
// the data directory are free for the next `make run`. `go run` left its
// child serving.
func TestMakeRunStopsWithItsPID(t *testing.T) {
	if testing.Short() {
		t.Skip("runs make run")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not found")
	}
	addr, dir := freeAddr(t), t.TempDir()
	cmd := exec.Command("make", "-s", "run")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "BRIDGE_ADDR="+addr, "BRIDGE_DATA_DIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // so the test can clean up whatever make left
	// A file, not a pipe: Wait returns when make exits, whatever it leaves behind.
	logFile, err := os.Create(filepath.Join(t.TempDir(), "make-run.log"))
	require.NoError(t, err)
	defer logFile.Close()
	logs := fileText(logFile.Name())
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start())
	group := cmd.Process.Pid
	t.Cleanup(func() { _ = syscall.Kill(-group, syscall.SIGKILL) })
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	ready := storetest.WaitFor(t.Context(), 3*time.Minute, func() bool {
		res, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	require.True(t, ready, "make run did not serve:\n%s", logs)
	// The bridge says its PID, and it is make's own child: no `go run`
	// between them to swallow the signal.
	m := regexp.MustCompile(`listening on .*PID (\d+)\)`).FindStringSubmatch(logs.String())
	require.NotNil(t, m, "the bridge does not print its PID:\n%s", logs)
	if stat, err := os.ReadFile("/proc/" + m[1] + "/stat"); err == nil { // Linux
		fields := strings.Fields(string(stat)[strings.LastIndexByte(string(stat), ')')+1:])
		require.Equal(t, strconv.Itoa(cmd.Process.Pid), fields[1], "the bridge's parent is make")
	}

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("make run did not exit on SIGTERM:\n%s", logs)
	}
	free := storetest.WaitFor(context.Background(), 10*time.Second, func() bool {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return false
		}
		ln.Close()
		return true
	})
	require.True(t, free, "the bridge still serves %s after make run's PID was stopped:\n%s", addr, logs)
	next := startBridge(t, "BRIDGE_DATA_DIR="+dir)
	code, _ := next.call("GET", "/readyz", nil)
	require.Equal(t, http.StatusOK, code, "the next bridge on the data directory:\n%s", next.output())
}

// fileText prints a file's content when formatted (%s).
type fileText string

func (f fileText) String() string {
	b, _ := os.ReadFile(string(f))
	return string(b)
}
