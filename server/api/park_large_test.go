package api_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParkedWaitGetsALargeAnswerWhole: a parked wait's socket is held
// outside Go's poller; an answer of most of a megabyte, to a client that
// reads it late, arrives whole (writeFD_test covers a full send buffer).
func TestParkedWaitGetsALargeAnswerWhole(t *testing.T) {
	b := newBridge(t, opts{})
	big := strings.Repeat("x", 250<<10)
	r := b.do("POST", "/api/projects/ops/agent-questions", "", map[string]any{
		"run_id": "run-1", "question": "Write the file?", "options": []map[string]any{{"label": "Allow"}, {"label": "Deny"}},
		"action": map[string]any{"tool": "Write", "input": map[string]any{"content": big}}})
	require.Equal(t, 201, r.status, string(r.raw))
	id := r.body["id"].(string)
	u, _ := url.Parse(b.srv.URL)
	c, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "GET /api/projects/ops/agent-questions/%s/wait?timeout=60s HTTP/1.1\r\nHost: %s\r\n\r\n", id, u.Host)
	time.Sleep(200 * time.Millisecond) // parked
	r = b.do("POST", "/api/projects/ops/agent-questions/"+id+"/respond", "", map[string]any{"response": "Allow"})
	require.Equal(t, 202, r.status, string(r.raw))
	time.Sleep(300 * time.Millisecond) // the client reads nothing yet: the bridge's write must wait for it
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	assert.Equal(t, 200, res.StatusCode)
	assert.EqualValues(t, res.ContentLength, len(body))
	var q struct {
		Status string
		Action struct{ Input struct{ Content string } }
	}
	require.NoError(t, json.Unmarshal(body, &q))
	assert.Equal(t, "answered", q.Status)
	assert.Equal(t, len(big), len(q.Action.Input.Content))
}
