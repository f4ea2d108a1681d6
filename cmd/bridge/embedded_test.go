package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKillNineLosesNothingAcknowledged: the embedded default with a data
// directory. Agents ask and people answer while the process is killed
// with SIGKILL; started again on the same directory, the bridge has every
// question whose ask was acknowledged (201) and every answer that was
// (202), and it prints where it keeps them.
func TestKillNineLosesNothingAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built binary twice")
	}
	dir := t.TempDir()
	a := startBridge(t, "BRIDGE_DATA_DIR="+dir)
	assert.Contains(t, a.output(), "embedded store in "+dir, "the data directory is printed at start")

	var mu sync.Mutex
	asked := map[string]bool{} // id -> answered (acknowledged)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				code, q, err := tryCall(a.URL, "POST", "/api/projects/ops/agent-questions", map[string]any{
					"run_id": fmt.Sprintf("w%d-r%d", w, i), "question": fmt.Sprintf("Ship %d/%d?", w, i),
					"options": []map[string]any{{"label": "Yes"}, {"label": "No"}}})
				if err != nil || code != 201 {
					return // killed
				}
				id := q["id"].(string)
				mu.Lock()
				asked[id] = false
				mu.Unlock()
				if i%2 == 0 {
					code, _, err = tryCall(a.URL, "POST", "/api/projects/ops/agent-questions/"+id+"/respond", map[string]any{"response": "yes"})
					if err != nil || code != 202 {
						return
					}
					mu.Lock()
					asked[id] = true
					mu.Unlock()
				}
			}
		})
	}
	time.Sleep(1500 * time.Millisecond)
	a.kill() // SIGKILL while asks and answers are in flight
	close(stop)
	wg.Wait()
	require.NotEmpty(t, asked)

	b := startBridge(t, "BRIDGE_DATA_DIR="+dir)
	answered := 0
	for id, wasAnswered := range asked {
		code, q := b.call("GET", "/api/projects/ops/agent-questions/"+id, nil)
		require.Equal(t, 200, code, "question %s was acknowledged before the kill", id)
		if wasAnswered {
			answered++
			assert.Equal(t, "answered", q["status"], "question %s was answered before the kill", id)
			assert.Equal(t, "Yes", q["response"])
		}
	}
	t.Logf("%d questions and %d answers acknowledged before kill -9, all there after the restart", len(asked), answered)
	code, q := b.call("POST", "/api/projects/ops/agent-questions", map[string]any{"run_id": "after", "question": "Still fine?"})
	require.Equal(t, 201, code, "the restarted bridge takes new questions")
	assert.NotEmpty(t, q["id"])
}

// TestSecondServeOnADataDirectoryIsRefused: one process owns a data
// directory; a second is refused at start and told why and what to do.
func TestSecondServeOnADataDirectoryIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built binary twice")
	}
	dir := t.TempDir()
	first := startBridge(t, "BRIDGE_DATA_DIR="+dir)
	cmd := exec.Command(bridgeBin, "serve", "--addr", freeAddr(t), "--data-dir", dir)
	cmd.Env = os.Environ()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	require.NoError(t, cmd.Start())
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, 1, ee.ExitCode())
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("a second bridge on the same data directory started:\n%s%s", out.String(), errb.String())
	}
	assert.Contains(t, errb.String(), fmt.Sprintf("in use by another askbridge process, PID %d", first.cmd.Process.Pid), "names the holder")
	assert.Contains(t, errb.String(), dir)
	assert.Contains(t, errb.String(), "REDIS_URL", "points to Redis for several replicas")
	assert.NotContains(t, out.String(), "listening")
}

// TestEphemeralKeepsNothing: --ephemeral (or an empty --data-dir) keeps the
// embedded store in memory: nothing is written, a restart starts empty.
func TestEphemeralKeepsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	for _, flag := range [][]string{{"--ephemeral"}, {"--data-dir", ""}} {
		dir := t.TempDir()
		addr := freeAddr(t)
		p := &proc{t: t, URL: "http://" + addr, logs: &bytes.Buffer{}, mu: &sync.Mutex{}}
		p.cmd = exec.Command(bridgeBin, append([]string{"serve", "--addr", addr}, flag...)...)
		p.cmd.Env = append(os.Environ(), "BRIDGE_DATA_DIR="+dir)
		w := syncBuf{p.mu, p.logs}
		p.cmd.Stdout, p.cmd.Stderr = w, w
		require.NoError(t, p.cmd.Start())
		t.Cleanup(p.stop)
		require.Eventually(t, func() bool { return bytes.Contains([]byte(p.output()), []byte("listening on")) }, 15*time.Second, 20*time.Millisecond)
		assert.Contains(t, p.output(), "embedded store in memory", "%v", flag)
		code, _ := p.call("POST", "/api/projects/ops/agent-questions", map[string]any{"run_id": "r", "question": "Kept?"})
		require.Equal(t, 201, code)
		p.stop()
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, entries, "%v writes nothing to the data directory", flag)
	}
}

// tryCall is proc.call that reports a failed request instead of failing
// the test (the process may have been killed).
func tryCall(base, method, path string, body any) (int, map[string]any, error) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(method, base+path, bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var out map[string]any
	err = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out, err
}
