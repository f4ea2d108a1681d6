package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/store/native"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const backupConfig = `
agents:
  - {id: bot, project: ops, token: tok-bot, tools: [ask_user]}
operators:
  - {id: opA, projects: [ops], token: tok-opA}
  - {id: admin, projects: ["*"], token: tok-admin}
`

// TestBackupWhileServing: askbridge backup takes a copy of the running
// bridge's data file while agents keep asking; the copy checks whole
// (askbridge check-data), and a bridge started on it has every question
// acknowledged before the backup began. Only an operator of every project
// may take one; the live data file cannot be checked while the bridge
// holds it.
func TestBackupWhileServing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	cfg := filepath.Join(t.TempDir(), "bridge.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(backupConfig), 0o600))
	dir := t.TempDir()
	p := startBridge(t, "BRIDGE_CONFIG="+cfg, "BRIDGE_DATA_DIR="+dir)

	var mu sync.Mutex
	var acked []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id, err := askAs(p.URL, "tok-bot", map[string]any{"run_id": fmt.Sprintf("w%d-%d", w, i), "agent_id": "bot",
					"question": fmt.Sprintf("Ship %d/%d?", w, i)})
				if err != nil {
					t.Errorf("ask: %v", err)
					return
				}
				mu.Lock()
				acked = append(acked, id)
				mu.Unlock()
			}
		})
	}
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 50 }, 20*time.Second, 10*time.Millisecond)
	mu.Lock()
	before := append([]string(nil), acked...)
	mu.Unlock()

	file := filepath.Join(t.TempDir(), "askbridge-backup.db")
	env := map[string]string{"BRIDGE_URL": p.URL, "BRIDGE_TOKEN": "tok-admin"}
	r := runBridge(t, env, "backup", file)
	close(stop)
	wg.Wait()
	require.Equal(t, 0, r.code, "%s", r.stderr)
	assert.Contains(t, r.stdout, "wrote "+file+": a backup of the embedded store, checked whole")

	r = runBridge(t, nil, "check-data", file)
	require.Equal(t, 0, r.code, "%s", r.stderr)
	assert.Contains(t, r.stdout, file+" is whole: ")
	assert.Contains(t, r.stdout, "1 project(s)")

	r = runBridge(t, nil, "check-data", filepath.Join(dir, native.FileName))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "a running bridge holds", "the live file is checked through a backup")

	for _, tc := range []struct{ token, want string }{
		{"tok-opA", "only an operator of every project"},
		{"tok-bot", "an agent token may not take a backup"},
		{"", "missing bearer token"},
	} {
		other := filepath.Join(t.TempDir(), "refused.db")
		r = runBridge(t, map[string]string{"BRIDGE_URL": p.URL, "BRIDGE_TOKEN": tc.token}, "backup", other)
		assert.Equal(t, 1, r.code, "token %q", tc.token)
		assert.Contains(t, r.stderr, tc.want)
		assert.NoFileExists(t, other)
	}

	restored := t.TempDir()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(restored, native.FileName), b, 0o600))
	s, err := native.Open(native.Options{Dir: restored})
	require.NoError(t, err)
	defer s.Close()
	for _, id := range before {
		q, err := s.Get(t.Context(), "ops", id)
		if assert.NoError(t, err, "question %s was acknowledged before the backup began", id) {
			assert.Equal(t, "pending", string(q.Status))
		}
	}
}

// TestBackupWithoutTokensFromThisMachine: a bridge without tokens hands a
// backup to its own host; one on memory only says there is no data file.
func TestBackupWithoutTokensFromThisMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	p := startBridge(t)
	code, _ := p.call("POST", "/api/projects/ops/agent-questions", map[string]any{"run_id": "r", "question": "Kept?"})
	require.Equal(t, 201, code)
	file := filepath.Join(t.TempDir(), "b.db")
	r := runBridge(t, map[string]string{"BRIDGE_URL": p.URL}, "backup", file)
	require.Equal(t, 0, r.code, "%s", r.stderr)
	assert.Contains(t, r.stdout, "1 question(s) (1 pending)")

	addr := freeAddr(t)
	m := &proc{t: t, URL: "http://" + addr, logs: &bytes.Buffer{}, mu: &sync.Mutex{}}
	m.cmd = exec.Command(bridgeBin, "serve", "--addr", addr, "--ephemeral")
	w := syncBuf{m.mu, m.logs}
	m.cmd.Stdout, m.cmd.Stderr = w, w
	require.NoError(t, m.cmd.Start())
	t.Cleanup(m.stop)
	require.Eventually(t, func() bool { return strings.Contains(m.output(), "listening on") }, 15*time.Second, 20*time.Millisecond)
	r = runBridge(t, map[string]string{"BRIDGE_URL": m.URL}, "backup", file)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "keeps its state in memory")
}

// askAs asks with token and returns the question's id.
func askAs(base, token string, body map[string]any) (string, error) {
	b, _ := json.Marshal(body)
	r, err := http.NewRequest("POST", base+"/api/projects/ops/agent-questions", bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	var q struct{ ID string }
	if err := json.NewDecoder(res.Body).Decode(&q); err != nil || res.StatusCode != 201 {
		return "", fmt.Errorf("%s (%v)", res.Status, err)
	}
	return q.ID, nil
}
