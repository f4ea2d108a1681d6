package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostTimeout is how long the host in TestMCPTaskOutlivesTheHostTimeout
// lets any HTTP call run: shorter than any person takes to answer.
const hostTimeout = 10 * time.Second

// restartAt starts a new `askbridge serve` at the address and with the
// environment of p, which has stopped: the replica behind the proxy comes
// back where it was.
func (p *proc) restartAt(t *testing.T) *proc {
	t.Helper()
	require.NotNil(t, p.cmd.ProcessState, "restart a replica that has stopped")
	q := &proc{t: t, URL: p.URL, logs: &bytes.Buffer{}, mu: &sync.Mutex{}}
	q.cmd = exec.Command(bridgeBin, "serve", "--addr", strings.TrimPrefix(p.URL, "http://"))
	q.cmd.Env = p.cmd.Env
	w := syncBuf{q.mu, q.logs}
	q.cmd.Stdout, q.cmd.Stderr = w, w
	require.NoError(t, q.cmd.Start())
	t.Cleanup(q.stop)
	ok := storetest.WaitFor(context.Background(), 15*time.Second, func() bool {
		res, err := http.Get(q.URL + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == 200
	})
	require.True(t, ok, "the restarted replica did not become ready:\n%s", q.output())
	return q
}

// hostCall is one request of the host: every call is cut after hostTimeout.
func (c *taskClient) hostCall(method string, params map[string]any) (map[string]any, *rpcError, error) {
	ctx, cancel := context.WithTimeout(c.t.Context(), hostTimeout)
	defer cancel()
	return c.call(ctx, method, params)
}

// hostPoll polls the task once through the proxy; the poll must succeed.
func (c *taskClient) hostPoll(id string) map[string]any {
	c.t.Helper()
	got, rerr, err := c.hostCall("tasks/get", map[string]any{"taskId": id})
	require.NoError(c.t, err, "tasks/get")
	require.Nil(c.t, rerr, "tasks/get")
	return got
}

// TestMCPTaskOutlivesTheHostTimeout is issue 42's "done when": a host that
// cuts every call after 10 s still gets the person's answer through the
// task, on either replica, after the replica that created it stops (SIGTERM,
// then kill -9) and comes back. Two replicas on one Redis, behind a
// round-robin proxy with no affinity; the question goes to Slack and is
// answered there by a click.
func TestMCPTaskOutlivesTheHostTimeout(t *testing.T) {
	fs := fakeslack.New("C1")
	t.Cleanup(fs.Close)
	cfg := filepath.Join(t.TempDir(), "bridge.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`agents:
  - {id: deploy-bot, project: ops, token: agent-secret, tools: [ask_user], route: oncall}
  - {id: other-bot, project: ops, token: other-secret, tools: [ask_user], route: oncall}
operators:
  - {id: alice, projects: [ops], token: op-secret}
routes:
  - {name: oncall, default: true, targets: [{platform: slack, channel: C1}]}
`), 0o600))
	rdb := storetest.Redis(t)
	env := []string{"REDIS_URL=" + rdb.URL, "BRIDGE_CONFIG=" + cfg, "SLACK_BOT_TOKEN=" + fs.BotToken,
		"SLACK_SIGNING_SECRET=" + secSlackSecret, "SLACK_API_URL=" + fs.APIURL()}
	replicas := []*proc{startBridge(t, env...), startBridge(t, env...)}
	rr := &roundRobin{}
	for _, p := range replicas {
		u, err := url.Parse(p.URL)
		require.NoError(t, err)
		rr.backends = append(rr.backends, u)
	}
	lb := httptest.NewServer(rr)
	t.Cleanup(lb.Close)
	tasksCaps := map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	host := &taskClient{t: t, url: lb.URL + "/mcp", token: "agent-secret", stateless: true, caps: tasksCaps}

	// The task comes back at once, well inside the host's timeout.
	began := time.Now()
	created, rerr, err := host.hostCall("tools/call", map[string]any{"name": "ask_user", "arguments": askArgs("Which auth method?")})
	require.NoError(t, err, "tools/call did not return within the host's timeout")
	require.Nil(t, rerr)
	require.Equal(t, "task", created["resultType"], "%v", created)
	assert.Less(t, time.Since(began), hostTimeout)
	id := created["taskId"].(string)
	assert.Equal(t, "working", created["status"])
	t.Logf("task %s created in %v: %q", id, time.Since(began).Round(time.Millisecond), created["statusMessage"])
	require.Eventually(t, func() bool { return len(fs.Messages("C1")) == 1 }, 10*time.Second, 20*time.Millisecond,
		"the question was never posted to Slack")
	rr.mu.Lock()
	creator := rr.calls[0]
	rr.mu.Unlock()

	// The replica that created the task stops, first gracefully, then hard;
	// each time it comes back at its address, and the host polls both
	// replicas through the proxy (one of each pair of polls per replica).
	for _, how := range []string{"SIGTERM", "kill -9"} {
		if how == "SIGTERM" {
			replicas[creator].stop()
		} else {
			replicas[creator].kill()
		}
		// While it is down, the proxy cannot deliver every other poll (a
		// failed HTTP call, which the host retries); the replica still up
		// serves the next.
		if rr.next() == creator {
			_, _, err := host.hostCall("tasks/get", map[string]any{"taskId": id})
			require.Error(t, err, "a poll reached the stopped replica")
			t.Logf("a poll while the creator is down (%s): %v", how, err)
		}
		got := host.hostPoll(id)
		assert.Equal(t, "working", got["status"], "while the creator is down (%s)", how)
		replicas[creator] = replicas[creator].restartAt(t)
		for range 2 {
			got := host.hostPoll(id)
			assert.Equal(t, "working", got["status"], "after the creator's restart (%s)", how)
		}
	}

	// Another credential, even through the same proxy, gets the extension's
	// not-found on either replica.
	other := &taskClient{t: t, url: lb.URL + "/mcp", token: "other-secret", stateless: true, caps: tasksCaps}
	for range 2 {
		_, rerr, err := other.hostCall("tasks/get", map[string]any{"taskId": id})
		require.NoError(t, err)
		require.NotNil(t, rerr, "another credential read the task")
		assert.Equal(t, -32602, rerr.Code)
		assert.Contains(t, rerr.Message, "task not found")
	}

	// The host keeps polling at the interval the task asks for; meanwhile
	// the person clicks in Slack, on the replica that created the task.
	interval := time.Duration(created["pollIntervalMs"].(float64)) * time.Millisecond
	seen := make(chan map[string]any, 1)
	go func() {
		for t.Context().Err() == nil {
			got, rerr, err := host.hostCall("tasks/get", map[string]any{"taskId": id})
			if err == nil && rerr == nil && got["status"] != "working" {
				seen <- got
				return
			}
			time.Sleep(interval)
		}
	}()
	time.Sleep(interval / 2)
	answered := time.Now()
	code, body := replicas[creator].send(t, signedSlack(slackClick(t, fs, "U1", "API key"), secSlackSecret))
	require.Equal(t, 200, code, body)
	var got map[string]any
	select {
	case got = <-seen:
	case <-time.After(3 * interval):
		t.Fatalf("the host did not see the answer within %v", 3*interval)
	}
	fmt.Printf("answer in Slack → host saw it: %v (the host polls every %v)\n", time.Since(answered).Round(time.Millisecond), interval)

	assert.Equal(t, "completed", got["status"])
	result, _ := got["result"].(map[string]any)
	require.NotNil(t, result, "%v", got)
	assert.NotEqual(t, true, result["isError"])
	assert.Equal(t, `User has answered your questions: "Which auth method?"="API key". You can now continue with the user's answers in mind.`,
		result["content"].([]any)[0].(map[string]any)["text"], "the person's answer is the task's result")
	// The next poll on the other replica reads the same.
	again := host.hostPoll(id)
	assert.Equal(t, "completed", again["status"])
	assert.Equal(t, got["result"], again["result"])

	// The Slack copy is settled with the outcome; the question was asked once.
	msgs := fs.Messages("C1")
	require.Len(t, msgs, 1, "the question was posted once to Slack")
	require.Eventually(t, func() bool {
		m, _ := fs.Message("C1", msgs[0].TS)
		return m.Edits > 0 && strings.Contains(m.Texts(), "API key")
	}, 10*time.Second, 20*time.Millisecond, "the Slack copy was not settled with the answer")
	m, _ := fs.Message("C1", msgs[0].TS)
	assert.NotContains(t, string(m.Blocks), `"type":"button"`, "the settled copy offers no buttons")
	t.Logf("settled Slack copy:\n%s", m.Texts())
	_, all := authed(t, "GET", lb.URL+"/api/projects/ops/agent-questions", "op-secret", nil)
	assert.Len(t, all["questions"], 1, "one question across restarts and replicas")
}
