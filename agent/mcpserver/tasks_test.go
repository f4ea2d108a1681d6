package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/askbridge/askbridge/agent/mcpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stdioHost speaks raw JSON-RPC lines to Server.Serve, as a host speaks to
// askbridge mcp over stdin and stdout.
type stdioHost struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Scanner
	next int
	done chan struct{} // closed when Serve returned
}

func serveStdio(t *testing.T, api *fakeapi.Server) *stdioHost {
	t.Helper()
	srv := mcpserver.New(mcpserver.Config{Client: client.New(api.URL, api.Token, "ops")})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &stdioHost{t: t, in: inW, out: bufio.NewScanner(outR), done: make(chan struct{})}
	h.out.Buffer(make([]byte, 1<<20), 1<<20)
	go func() {
		defer close(h.done)
		assert.NoError(t, srv.Serve(context.Background(), inR, outW))
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		select {
		case <-h.done:
		case <-time.After(10 * time.Second):
		}
		_ = outR.Close()
	})
	res, _ := h.call("initialize", map[string]any{"protocolVersion": "2025-11-25",
		"capabilities": map[string]any{"extensions": map[string]any{mcpserver.TasksExtension: map[string]any{}}},
		"clientInfo":   map[string]any{"name": "stdio-host", "version": "1"}})
	require.NotNil(t, res)
	h.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return h
}

func (h *stdioHost) write(msg map[string]any) {
	b, _ := json.Marshal(msg)
	_, err := h.in.Write(append(b, '\n'))
	require.NoError(h.t, err)
}

// call sends a request and returns its result or error.
func (h *stdioHost) call(method string, params map[string]any) (result map[string]any, rpcErr map[string]any) {
	h.t.Helper()
	h.next++
	h.write(map[string]any{"jsonrpc": "2.0", "id": h.next, "method": method, "params": params})
	for h.out.Scan() {
		var reply struct {
			ID     int            `json:"id"`
			Result map[string]any `json:"result"`
			Error  map[string]any `json:"error"`
		}
		if json.Unmarshal(h.out.Bytes(), &reply) == nil && reply.ID == h.next {
			return reply.Result, reply.Error
		}
	}
	h.t.Fatalf("no reply to %s", method)
	return nil, nil
}

// TestStdioTaskOutlivesTheProcess: askbridge mcp serves tasks too; a new
// askbridge mcp (another Server on the same bridge) reads the task of the
// previous one, whose end did not withdraw it.
func TestStdioTaskOutlivesTheProcess(t *testing.T) {
	api := fakeapi.New(t, "")
	h := serveStdio(t, api)
	created, rerr := h.call("tools/call", map[string]any{"name": "ask_user", "arguments": authArgs()})
	require.Nil(t, rerr)
	require.Equal(t, "task", created["resultType"], "%v", created)
	id := created["taskId"].(string)
	require.NoError(t, h.in.Close()) // the host quits
	select {
	case <-h.done:
	case <-time.After(10 * time.Second):
		t.Fatal("askbridge mcp did not end with its input")
	}
	assert.Equal(t, "pending", string(api.Question(id).Status), "a task is not withdrawn with its session")

	h = serveStdio(t, api)
	got, rerr := h.call("tasks/get", map[string]any{"taskId": id})
	require.Nil(t, rerr)
	assert.Equal(t, "working", got["status"])
	api.Answer(t, id, []string{"API key"})
	got, rerr = h.call("tasks/get", map[string]any{"taskId": id})
	require.Nil(t, rerr)
	require.Equal(t, "completed", got["status"])
	text := got["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
	assert.Equal(t, `User has answered your questions: "Which auth method?"="API key". You can now continue with the user's answers in mind.`, text)

	_, rerr = h.call("tasks/get", map[string]any{"taskId": "00000000-0000-8000-aa00-000000000000"})
	require.NotNil(t, rerr)
	assert.EqualValues(t, -32602, rerr["code"])
}
