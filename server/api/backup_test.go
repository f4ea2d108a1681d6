package api_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/server/api"
	"github.com/askbridge/askbridge/store/native"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBackupOnlyFromThisMachineWithoutTokens: on a bridge without tokens,
// GET /api/admin/backup hands the data file to a request from this
// machine, and refuses one forwarded by a proxy or sent by a web page; on
// Redis it says to back up Redis instead.
func TestBackupOnlyFromThisMachineWithoutTokens(t *testing.T) {
	st, err := native.Open(native.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st})
	mux := http.NewServeMux()
	api.New(api.Config{Router: router}).Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := &bridge{t: t, srv: srv}
	q := yesNo("r1")
	b.ask("ops", "", q)

	r := b.do("GET", "/api/admin/backup", "", nil)
	require.Equal(t, 200, r.status, string(r.raw))
	file := filepath.Join(t.TempDir(), "copy.db")
	require.NoError(t, os.WriteFile(file, r.raw, 0o600))
	sum, err := native.Check(file)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Questions["pending"], "the copy holds the question asked")

	for name, h := range map[string][2]string{
		"through a proxy": {"X-Forwarded-For", "203.0.113.9"},
		"from a web page": {"Sec-Fetch-Site", "cross-site"},
	} {
		req, _ := http.NewRequest("GET", srv.URL+"/api/admin/backup", nil)
		req.Header.Set(h[0], h[1])
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		assert.Equal(t, 403, res.StatusCode, "%s: %s", name, body)
	}

	redis := newBridge(t, opts{})
	r = redis.do("GET", "/api/admin/backup", "", nil)
	assert.Equal(t, 409, r.status)
	assert.Contains(t, string(r.raw), "back up Redis instead")
}

// TestAnAnswerWhoseCommitFailedIsNeverShown is the disk-full report of
// issue 38 through the API on the embedded store: the answer whose commit
// fails gets 503, and then GET, a new /wait, the pending list and the audit
// trail show the question pending; once writes succeed again (no restart)
// another answer is taken, and it is the one kept.
func TestAnAnswerWhoseCommitFailedIsNeverShown(t *testing.T) {
	var mu sync.Mutex
	var fail error
	dir := t.TempDir()
	st, err := native.Open(native.Options{Dir: dir, CommitHook: func() error {
		mu.Lock()
		defer mu.Unlock()
		return fail
	}})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st})
	mux := http.NewServeMux()
	api.New(api.Config{Router: router}).Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := &bridge{t: t, srv: srv}
	id := b.ask("ops", "", yesNo("r1"))
	base := "/api/projects/ops/agent-questions/"

	mu.Lock()
	fail = &os.PathError{Op: "write", Path: filepath.Join(dir, native.FileName), Err: syscall.ENOSPC}
	mu.Unlock()
	r := b.do("POST", base+id+"/respond", "", map[string]any{"response": "Yes"})
	assert.Equal(t, 503, r.status, string(r.raw))
	assert.Equal(t, "pending", b.do("GET", base+id, "", nil).body["status"])
	assert.Equal(t, "pending", b.do("GET", base+id+"/wait?timeout=1s", "", nil).body["status"])
	list := b.do("GET", "/api/projects/ops/agent-questions?status=pending", "", nil)
	assert.Contains(t, string(list.raw), id)
	audit := b.do("GET", "/api/projects/ops/audit?question="+id, "", nil)
	assert.NotContains(t, string(audit.raw), `"answered"`)
	assert.Equal(t, 503, b.do("GET", "/readyz", "", nil).status)

	mu.Lock()
	fail = nil
	mu.Unlock()
	require.Eventually(t, func() bool { return b.do("GET", "/readyz", "", nil).status == 200 }, 10*time.Second, 50*time.Millisecond)
	r = b.do("POST", base+id+"/respond", "", map[string]any{"response": "No"})
	require.Equal(t, 202, r.status, string(r.raw))
	got := b.do("GET", base+id, "", nil)
	assert.Equal(t, "answered", got.body["status"])
	assert.Equal(t, "No", got.body["response"])
}
