package hook_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// envClaudeCode names the real Claude Code binary for TestRealClaudeCode;
// `make test-claude-code` installs it from npm and sets it.
const envClaudeCode = "ASKBRIDGE_CLAUDE_CODE"

// fakeMessagesAPI is Anthropic's Messages API as far as Claude Code needs
// it to run one turn offline: the main conversation's first request is
// answered with a tool_use (AskUserQuestion, Bash…), the next with text; side
// requests (titles, summaries) get a short text.
type fakeMessagesAPI struct {
	*httptest.Server
	toolUseID string
	tool      string
	input     map[string]any

	mu          sync.Mutex
	toolResults []string // the tool_result contents Claude Code sent back
	sawTool     bool     // AskUserQuestion was offered to the model
	log         []string
}

func newFakeMessagesAPI(t *testing.T, toolUseID, tool string, input map[string]any) *fakeMessagesAPI {
	f := &fakeMessagesAPI{toolUseID: toolUseID, tool: tool, input: input}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeMessagesAPI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.log = append(f.log, r.Method+" "+r.URL.Path)
	f.mu.Unlock()
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/v1/messages") {
		if strings.HasSuffix(r.URL.Path, "/count_tokens") {
			_, _ = io.WriteString(w, `{"input_tokens":100}`)
			return
		}
		http.NotFound(w, r)
		return
	}
	var req struct {
		Stream bool `json:"stream"`
		Tools  []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	offered := false
	for _, tl := range req.Tools {
		offered = offered || tl.Name == f.tool
	}
	var result *string
	for _, m := range req.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_result" && b.ToolUseID == f.toolUseID {
				s := string(b.Content)
				var text string
				if json.Unmarshal(b.Content, &text) == nil {
					s = text
				}
				result = &s
			}
		}
	}
	f.mu.Lock()
	f.sawTool = f.sawTool || offered
	if result != nil {
		f.toolResults = append(f.toolResults, *result)
	}
	f.mu.Unlock()
	switch {
	case result != nil:
		f.reply(w, req.Stream, textBlock("Thanks, noted."), "end_turn")
	case offered:
		f.reply(w, req.Stream, map[string]any{"type": "tool_use", "id": f.toolUseID, "name": f.tool, "input": f.input}, "tool_use")
	default:
		f.reply(w, req.Stream, textBlock("Setup questions"), "end_turn")
	}
}

func (f *fakeMessagesAPI) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

func textBlock(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

// reply answers with one content block, streamed as SSE when asked.
func (f *fakeMessagesAPI) reply(w http.ResponseWriter, stream bool, block map[string]any, stop string) {
	msg := map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 100, "output_tokens": 1}}
	if !stream {
		msg["content"] = []any{block}
		msg["stop_reason"] = stop
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(msg)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(event string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	}
	msg["content"] = []any{}
	send("message_start", map[string]any{"type": "message_start", "message": msg})
	start := map[string]any{"type": block["type"]}
	var delta map[string]any
	if block["type"] == "tool_use" {
		start["id"], start["name"], start["input"] = block["id"], block["name"], map[string]any{}
		in, _ := json.Marshal(block["input"])
		delta = map[string]any{"type": "input_json_delta", "partial_json": string(in)}
	} else {
		start["text"] = ""
		delta = map[string]any{"type": "text_delta", "text": block["text"]}
	}
	send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": start})
	send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta})
	send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 20}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

// TestRealClaudeCode runs the real Claude Code CLI (opt-in: make
// test-claude-code) offline against the fake Messages API, with the hook
// configured as in docs/agents.md. The model asks the captured two-question
// AskUserQuestion; a person answers through the bridge; the answer must
// reach the tool result Claude Code sends back to the model.
func TestRealClaudeCode(t *testing.T) {
	bin := os.Getenv(envClaudeCode)
	if bin == "" {
		t.Skip(envClaudeCode + " is not set: run make test-claude-code")
	}
	srv, c := serve(t)
	pre := fixture(t, "pretooluse-askuserquestion.json")

	for _, tc := range []struct {
		name  string
		hooks string
		sdk   bool
	}{
		// The settings of docs/agents.md: the PreToolUse hook answers.
		{"PreToolUse", `{"PreToolUse":[{"matcher":"AskUserQuestion","hooks":[{"type":"command","command":"BRIDGE --poll 1s","timeout":120}]}],
			"PermissionRequest":[{"matcher":"*","hooks":[{"type":"command","command":"BRIDGE --poll 1s","timeout":120}]}]}`, false},
		// Only the PermissionRequest hook: Claude Code raises one for
		// AskUserQuestion, and the hook answers it with the questions'
		// answers.
		{"PermissionRequest", `{"PermissionRequest":[{"matcher":"*","hooks":[{"type":"command","command":"BRIDGE --poll 1s","timeout":120}]}]}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newFakeMessagesAPI(t, "toolu_01RealCLI"+tc.name, "AskUserQuestion", pre.input())
			run := startClaude(t, bin, srv, api, tc.hooks, tc.sdk)
			stdout, stderr, done, ctx := run.stdout, run.stderr, run.done, run.ctx
			var err error
			// The person answers through the bridge (Slack, the web inbox…).
			var q *domain.Question
			for deadline := time.Now().Add(90 * time.Second); q == nil && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
				qs, err := c.List(t.Context(), domain.StatusPending)
				require.NoError(t, err)
				if len(qs) > 0 {
					q = qs[0]
				}
				select {
				case err := <-done:
					t.Fatalf("claude exited before asking: %v\nstdout: %s\nstderr: %s\napi: %v", err, tail(stdout.String()), tail(stderr.String()), api.requests())
				default:
				}
			}
			if q == nil {
				t.Fatalf("no question reached the bridge; stdout: %s\nstderr: %s\napi: %v", tail(stdout.String()), tail(stderr.String()), api.requests())
			}
			assert.Equal(t, domain.KindQuestion, q.Kind)
			_, err = c.Respond(t.Context(), q.ID, domain.RespondRequest{Answers: map[string]domain.StringList{
				"Which database should the service use?":  {"SQLite"},
				"Which checks should run before merging?": {"lint", "e2e"},
			}})
			require.NoError(t, err)

			select {
			case err := <-done:
				require.NoError(t, err, "stdout: %s\nstderr: %s", tail(stdout.String()), tail(stderr.String()))
			case <-ctx.Done():
				t.Fatalf("claude did not finish; stdout: %s\nstderr: %s", tail(stdout.String()), tail(stderr.String()))
			}
			api.mu.Lock()
			defer api.mu.Unlock()
			require.NotEmpty(t, api.toolResults, "no tool_result reached the model; api: %v\nstdout: %s", api.log, tail(stdout.String()))
			res := api.toolResults[len(api.toolResults)-1]
			assert.Contains(t, res, `"Which database should the service use?"="SQLite"`)
			assert.Contains(t, res, `"Which checks should run before merging?"="lint, e2e"`)
			sc := bufio.NewScanner(strings.NewReader(stdout.String()))
			sc.Buffer(nil, 4<<20)
			for sc.Scan() {
				if strings.Contains(sc.Text(), `"type":"result"`) {
					assert.Contains(t, sc.Text(), "Thanks, noted.")
				}
			}
		})
	}
}

// TestRealClaudeCodeHostDecidesFirst: the real CLI asks for permission to
// run `rm -rf build`; the PermissionRequest hook posts the approval, but
// the person answers Claude Code's own prompt first (here its SDK host).
// The approval must not stay live. In this mode Claude Code stops the hook
// (which withdraws on being stopped); in the interactive terminal it does
// not, which TestPermissionRequestWithdrawnWhenDecidedInTerminal covers
// through the transcript.
func TestRealClaudeCodeHostDecidesFirst(t *testing.T) {
	bin := os.Getenv(envClaudeCode)
	if bin == "" {
		t.Skip(envClaudeCode + " is not set: run make test-claude-code")
	}
	srv, c := serve(t)
	perm := fixture(t, "permissionrequest-bash.json")
	api := newFakeMessagesAPI(t, "toolu_01RealCLIBash", "Bash", perm.input())
	run := startClaude(t, bin, srv, api,
		`{"PermissionRequest":[{"matcher":"*","hooks":[{"type":"command","command":"BRIDGE --poll 1s --timeout 2m","timeout":180}]}]}`, true)

	q := pendingOn(t, c, 1)
	assert.Equal(t, "Allow Bash: rm -rf build?", q.Questions[0].Question)
	var requestID string
	for deadline := time.Now().Add(30 * time.Second); requestID == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for _, line := range strings.Split(run.stdout.String(), "\n") {
			var m struct {
				Type      string `json:"type"`
				RequestID string `json:"request_id"`
				Request   struct {
					Subtype string `json:"subtype"`
				} `json:"request"`
			}
			if json.Unmarshal([]byte(line), &m) == nil && m.Type == "control_request" && m.Request.Subtype == "can_use_tool" {
				requestID = m.RequestID
			}
		}
	}
	require.NotEmpty(t, requestID, "Claude Code asked its host too; stdout: %s", tail(run.stdout.String()))
	// The person says no in Claude Code itself.
	b, _ := json.Marshal(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success",
		"request_id": requestID, "response": map[string]any{"behavior": "deny", "message": "Not now."}}})
	_, err := run.stdin.Write(append(b, '\n'))
	require.NoError(t, err)

	var got *domain.Question
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		got, err = c.Get(t.Context(), q.ID)
		require.NoError(t, err)
		if got.Status.Final() {
			break
		}
	}
	assert.Equal(t, domain.StatusCancelled, got.Status, "the approval is withdrawn once Claude Code recorded the decision")
	assert.Equal(t, domain.CancelAgent, got.CancelReason)
	select {
	case <-run.done:
	case <-run.ctx.Done():
		t.Fatalf("claude did not finish; stdout: %s", tail(run.stdout.String()))
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	require.NotEmpty(t, api.toolResults)
	assert.Contains(t, api.toolResults[len(api.toolResults)-1], "Not now.")
}

type claudeRun struct {
	stdout, stderr *resultWatcher
	stdin          io.WriteCloser
	done           chan error
	ctx            context.Context
	work           string // the project directory Claude Code runs in
}

// startClaude runs the real CLI for one turn in a fresh home and project
// whose .claude/settings.json holds hooks (BRIDGE stands for the hook's
// command). sdk: stream-json in and out, permission prompts to this test
// over stdio (the SDK's way); else print mode.
func startClaude(t *testing.T, bin string, srv *bridgetest.Server, api *fakeMessagesAPI, hooks string, sdk bool) *claudeRun {
	t.Helper()
	bridge := bridgetest.Binary(t)
	home, work := t.TempDir(), t.TempDir()
	hooks = strings.ReplaceAll(hooks, "BRIDGE", bridge+" hook claude-code")
	require.NoError(t, os.MkdirAll(filepath.Join(work, ".claude"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(work, ".claude", "settings.json"), []byte(`{"hooks":`+hooks+`}`), 0o600))

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	t.Cleanup(cancel)
	const prompt = "Ask me how to set up the service."
	args := []string{"-p", "--output-format", "stream-json", "--verbose", "--model", "claude-sonnet-4-5",
		"--permission-mode", "default"}
	if sdk {
		args = append(args, "--input-format", "stream-json", "--permission-prompt-tool", "stdio")
	} else {
		// Print mode offers AskUserQuestion only with a permission prompt
		// tool: askbridge's own MCP tool serves as one (the hook answers
		// first, so it is never called).
		args = append(args, "--mcp-config", `{"mcpServers":{"askbridge":{"command":"`+bridge+`","args":["mcp"]}}}`,
			"--strict-mcp-config", "--permission-prompt-tool", "mcp__askbridge__ask_user", prompt)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = work
	cmd.Env = append(bridgetest.CleanEnv(), "HOME="+home, "ANTHROPIC_BASE_URL="+api.URL,
		"ANTHROPIC_API_KEY=sk-ant-fake", "BRIDGE_URL="+srv.URL, "BRIDGE_PROJECT=default",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	run := &claudeRun{stdin: stdin, done: make(chan error, 1), ctx: ctx, stderr: &resultWatcher{}, work: work}
	// In stream-json mode Claude Code waits for more input after its
	// result: end the input then.
	run.stdout = &resultWatcher{onResult: func() { stdin.Close() }}
	cmd.Stdout, cmd.Stderr = run.stdout, run.stderr
	if sdk {
		b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": prompt},
			"parent_tool_use_id": nil, "session_id": ""})
		_, err = stdin.Write(append(b, '\n'))
		require.NoError(t, err)
	} else {
		stdin.Close()
	}
	require.NoError(t, cmd.Start())
	go func() { run.done <- cmd.Wait() }()
	return run
}

// resultWatcher collects Claude Code's stream-json output and calls
// onResult once its result line arrived.
type resultWatcher struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	once     sync.Once
	onResult func()
}

func (w *resultWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(p)
	seen := w.onResult != nil && bytes.Contains(w.buf.Bytes(), []byte(`"type":"result"`))
	w.mu.Unlock()
	if seen {
		w.once.Do(w.onResult)
	}
	return len(p), nil
}

func (w *resultWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}
