package mcpserver_test

import (
	"fmt"
	"io"
	"iter"
	"maps"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/askbridge/askbridge/domain"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// restingServer is sessionsServerWith, with awake counting the sessions
// the SDK holds objects for and sessions listing them.
func restingServer(t *testing.T, timeout time.Duration) (api *fakeapi.Server, endpoint string, post func(session, body string) (string, string), awake func() int, sessions func() iter.Seq[*mcp.ServerSession]) {
	t.Helper()
	api, srv, ts, post := sessionsServerWith(t, nil, timeout)
	awake = func() int {
		n := 0
		for range srv.MCP().Sessions() {
			n++
		}
		return n
	}
	return api, ts.URL, post, awake, srv.MCP().Sessions
}

// TestAnIdleSessionRests: an idle 2025-11-25 session (its ask_user call
// parked, say) keeps no SDK session, connection or transport: ~2 KB less
// per waiting session, 100,000 of which must fit one replica (SDK patch #4,
// third_party/go-sdk/PATCHES.md). Its next request makes it anew from
// what it negotiated (its client's name still names the agent that asks),
// and a resting session still ends on DELETE and on its idle timeout.
func TestAnIdleSessionRests(t *testing.T) {
	api, endpoint, post, awake, sessions := restingServer(t, 0)
	// Every SDK session seen while they open, weakly: none may outlive
	// its rest (a closure kept with the session would keep them all).
	seen := map[*mcp.ServerSession]weak.Pointer[mcp.ServerSession]{}
	stop, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		for {
			for ss := range sessions() {
				if _, ok := seen[ss]; !ok {
					seen[ss] = weak.Make(ss)
				}
			}
			select {
			case <-stop:
				return
			default:
				runtime.Gosched()
			}
		}
	}()
	const n = 20
	var ids []string
	for range n {
		ids = append(ids, openSession(t, post))
	}
	close(stop)
	<-watched
	require.Eventually(t, func() bool { return awake() == 0 }, 3*time.Second, 10*time.Millisecond,
		"%d idle sessions, %d still awake", n, awake())
	require.NotEmpty(t, seen)
	weaks := slices.Collect(maps.Values(seen))
	clear(seen)
	alive := func() int {
		runtime.GC()
		return len(slices.DeleteFunc(slices.Clone(weaks), func(p weak.Pointer[mcp.ServerSession]) bool { return p.Value() == nil }))
	}
	require.Eventually(t, func() bool { return alive() == 0 }, 3*time.Second, 50*time.Millisecond,
		"of %d SDK sessions seen, %d still alive once resting", len(weaks), alive())

	answered := make(chan string, 1)
	go func() {
		_, got := post(ids[0], `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask_user","arguments":{"questions":[{"question":"Ship build 61?","header":"Ship","multiSelect":false,"options":[{"label":"yes","description":"ship it"},{"label":"no","description":"hold it"}]}]}}}`)
		answered <- got
	}()
	q := api.WaitPending(t, 1)
	assert.Equal(t, "probe", q.AgentID, "the session made anew forgot its client")
	assert.Equal(t, 1, awake(), "the session of the waiting call")
	api.Answer(t, q.ID, []string{"yes"})
	select {
	case got := <-answered:
		assert.Contains(t, got, `"answered"`)
	case <-time.After(10 * time.Second):
		t.Fatal("no result")
	}
	require.Eventually(t, func() bool { return awake() == 0 }, 3*time.Second, 10*time.Millisecond, "it rests again")

	for _, id := range ids[1:] {
		_, got := post(id, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
		require.Contains(t, got, `"ask_user"`)
	}
	require.Eventually(t, func() bool { return awake() == 0 }, 3*time.Second, 10*time.Millisecond)
	req, err := http.NewRequestWithContext(t.Context(), "DELETE", endpoint, nil)
	require.NoError(t, err)
	req.Header.Set("Mcp-Session-Id", ids[1])
	res, err := noKeepAlive.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusNoContent, res.StatusCode)
	code, _ := postStatus(t, endpoint, ids[1], `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
	require.Equal(t, http.StatusNotFound, code, "a resting session deleted still answers")
	code, _ = postStatus(t, endpoint, ids[2], `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
	require.Equal(t, http.StatusOK, code, "deleting one session ended another")

	_, endpoint, post, awake, _ = restingServer(t, 300*time.Millisecond)
	id := openSession(t, post)
	require.Eventually(t, func() bool { return awake() == 0 }, 3*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		code, _ := postStatus(t, endpoint, id, `{"jsonrpc":"2.0","id":5,"method":"ping"}`)
		return code == http.StatusNotFound
	}, 5*time.Second, 700*time.Millisecond, "a resting session never idles out") // each try is a request
}

// TestARestingSessionTakesRequestsAtOnce: requests that reach a session as
// it rests, and notifications (answered 202 before they are handled), are
// all served: none finds the session half gone, and it rests once they
// are done.
func TestARestingSessionTakesRequestsAtOnce(t *testing.T) {
	_, _, post, awake, _ := restingServer(t, 0)
	ids := []string{openSession(t, post), openSession(t, post)}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			id := ids[i%2]
			for j := range 25 {
				switch j % 3 {
				case 0:
					_, got := post(id, fmt.Sprintf(`{"jsonrpc":"2.0","id":"%d-%d","method":"tools/list"}`, i, j))
					assert.Contains(t, got, `"ask_user"`)
				case 1:
					_, got := post(id, fmt.Sprintf(`{"jsonrpc":"2.0","id":"%d-%d","method":"ping"}`, i, j))
					assert.Contains(t, got, `"result"`)
				default:
					post(id, `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
				}
			}
		})
	}
	wg.Wait()
	require.Eventually(t, func() bool { return awake() == 0 }, 5*time.Second, 10*time.Millisecond, "%d awake", awake())
}

// TestARestingSessionIdlesOutUnprompted: a resting session keeps no timer
// of its own (SDK patch #4: ~150 B a session), yet its idle timeout still
// ends it with no request to notice: the question its cancelled call left
// pending is withdrawn, as an awake session's would be.
func TestARestingSessionIdlesOutUnprompted(t *testing.T) {
	api, endpoint, post, awake, _ := restingServer(t, 400*time.Millisecond)
	id := openSession(t, post)
	go func() {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"ask_user","arguments":{"questions":[{"question":"Rotate the keys?","header":"Keys","multiSelect":false,"options":[{"label":"yes","description":"now"},{"label":"no","description":"later"}]}]}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if res, err := noKeepAlive.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
	}()
	q := api.WaitPending(t, 1)
	// The host gives up on the call: the question stays pending, the
	// session rests.
	post(id, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`)
	require.Eventually(t, func() bool { return awake() == 0 }, 3*time.Second, 10*time.Millisecond, "the session never rests")
	assert.Equal(t, domain.StatusPending, api.Question(q.ID).Status, "withdrawn before the session idled out")
	require.Eventually(t, func() bool { return api.Question(q.ID).Status == domain.StatusCancelled }, 5*time.Second, 20*time.Millisecond,
		"a resting session that idled out kept its question pending")
	code, _ := postStatus(t, endpoint, id, `{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	assert.Equal(t, http.StatusNotFound, code, "the session idled out still answers")
}
