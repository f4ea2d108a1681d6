package hook_test

// Issue 18 against the real Claude Code CLI (opt-in: make
// test-claude-code): an edit made through the bridge is what Claude Code
// runs, and an "always allow" suggestion chosen through the bridge is one
// Claude Code accepts, so it stops asking.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scriptedMessagesAPI is the Messages API playing a model that makes the
// given tool calls one after the other (each after the previous one's
// tool_result came back), then ends its turn with text.
type scriptedMessagesAPI struct {
	*fakeMessagesAPI
	tool  string
	calls []map[string]any // the inputs, in order; call i has id toolUseIDs[i]
	ids   []string

	results map[string]string // tool_use_id -> tool_result content
}

func newScriptedMessagesAPI(t *testing.T, tool string, ids []string, calls ...map[string]any) *scriptedMessagesAPI {
	s := &scriptedMessagesAPI{fakeMessagesAPI: &fakeMessagesAPI{tool: tool}, tool: tool, calls: calls, ids: ids,
		results: map[string]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *scriptedMessagesAPI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.log = append(s.log, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
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
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	offered := false
	for _, tl := range req.Tools {
		offered = offered || tl.Name == s.tool
	}
	answered := 0 // how many of the script's calls have a tool_result
	s.mu.Lock()
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
			if b.Type != "tool_result" {
				continue
			}
			for _, id := range s.ids {
				if b.ToolUseID == id {
					answered++
					c := string(b.Content)
					var text string
					if json.Unmarshal(b.Content, &text) == nil {
						c = text
					}
					s.results[id] = c
				}
			}
		}
	}
	s.mu.Unlock()
	switch {
	case !offered:
		s.reply(w, req.Stream, textBlock("Build tasks"), "end_turn")
	case answered < len(s.calls):
		s.reply(w, req.Stream, map[string]any{"type": "tool_use", "id": s.ids[answered], "name": s.tool,
			"input": s.calls[answered]}, "tool_use")
	default:
		s.reply(w, req.Stream, textBlock("Thanks, noted."), "end_turn")
	}
}

func (s *scriptedMessagesAPI) result(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.results[id]
	return r, ok
}

// finish waits for the CLI to end its turn and exit.
func (run *claudeRun) finish(t *testing.T) {
	t.Helper()
	select {
	case err := <-run.done:
		require.NoError(t, err, "stdout: %s\nstderr: %s", tail(run.stdout.String()), tail(run.stderr.String()))
	case <-run.ctx.Done():
		t.Fatalf("claude did not finish; stdout: %s\nstderr: %s", tail(run.stdout.String()), tail(run.stderr.String()))
	}
}

// pendingWithin is pendingOn with room for a slow CLI start: the first
// approval arrives once Claude Code has started, asked the fake model and
// run the hook.
func pendingWithin(t *testing.T, c *client.Client, run *claudeRun, within time.Duration) *domain.Question {
	t.Helper()
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		qs, err := c.List(t.Context(), domain.StatusPending)
		require.NoError(t, err)
		if len(qs) > 0 {
			return qs[0]
		}
		select {
		case err := <-run.done:
			t.Fatalf("claude exited before asking: %v\nstdout: %s\nstderr: %s", err, tail(run.stdout.String()), tail(run.stderr.String()))
		default:
		}
	}
	t.Fatalf("no approval reached the bridge within %s; stdout: %s\nstderr: %s", within, tail(run.stdout.String()), tail(run.stderr.String()))
	return nil
}

const permissionHook = `{"PermissionRequest":[{"matcher":"*","hooks":[{"type":"command","command":"BRIDGE --poll 1s --timeout 2m","timeout":180}]}]}`

// TestRealClaudeCodeRunsTheEditedCommand: the model asks to run
// `rm -rf build`; a person edits the command through the bridge and
// approves; Claude Code must run the edited command (updatedInput on the
// PermissionRequest answer), not the one the model asked for.
func TestRealClaudeCodeRunsTheEditedCommand(t *testing.T) {
	bin := os.Getenv(envClaudeCode)
	if bin == "" {
		t.Skip(envClaudeCode + " is not set: run make test-claude-code")
	}
	srv, c := serve(t)
	const id = "toolu_01RealCLIEdit"
	api := newScriptedMessagesAPI(t, "Bash", []string{id},
		map[string]any{"command": "rm -rf build", "description": "Remove the build directory"})
	run := startClaude(t, bin, srv, api.fakeMessagesAPI, permissionHook, true)

	start := time.Now()
	q := pendingWithin(t, c, run, 2*time.Minute)
	t.Logf("approval reached the bridge after %s", time.Since(start).Round(time.Millisecond))
	require.NotNil(t, q.Action, "the hook sends the tool call as the approval's action")
	assert.Equal(t, "Bash", q.Action.Tool)
	assert.JSONEq(t, `{"command":"rm -rf build","description":"Remove the build directory"}`, string(q.Action.Input))
	t.Logf("suggestions Claude Code offered for rm -rf build: %s", suggestions(q.Action))

	_, err := c.Respond(t.Context(), q.ID, domain.RespondRequest{
		EditedInput: json.RawMessage(`{"command":"echo edited-by-a-person"}`), Digest: q.Action.Digest})
	require.NoError(t, err)
	run.finish(t)
	t.Logf("claude finished %s after the approval arrived", time.Since(start).Round(time.Millisecond))

	res, ok := api.result(id)
	require.True(t, ok, "no tool_result reached the model; api: %v\nstdout: %s", api.requests(), tail(run.stdout.String()))
	assert.Contains(t, res, "edited-by-a-person", "the edited command ran and its output reached the model")

	got, err := c.Get(t.Context(), q.ID)
	require.NoError(t, err)
	require.NotNil(t, got.Decision)
	assert.Equal(t, domain.BehaviorAllow, got.Decision.Behavior)
	assert.True(t, got.Decision.Edited, "the record says the action was edited")
	assert.JSONEq(t, `{"command":"echo edited-by-a-person"}`, string(got.Decision.Input))
	require.NotNil(t, got.EditedAction)
	assert.JSONEq(t, `{"command":"rm -rf build","description":"Remove the build directory"}`, string(got.Action.Input),
		"the record keeps the asked action too")
}

// TestRealClaudeCodeAlwaysAllowStopsAsking: the model runs the same
// command twice; the person approves the first with the "always allow"
// rule Claude Code suggested; Claude Code must accept that rule
// (updatedPermissions) and run the second call without asking again.
func TestRealClaudeCodeAlwaysAllowStopsAsking(t *testing.T) {
	bin := os.Getenv(envClaudeCode)
	if bin == "" {
		t.Skip(envClaudeCode + " is not set: run make test-claude-code")
	}
	srv, c := serve(t)
	ids := []string{"toolu_01RealCLIRule1", "toolu_01RealCLIRule2"}
	call := map[string]any{"command": "npm run build-docs", "description": "Build the docs"}
	api := newScriptedMessagesAPI(t, "Bash", ids, call, call)
	run := startClaude(t, bin, srv, api.fakeMessagesAPI, permissionHook, true)

	start := time.Now()
	q := pendingWithin(t, c, run, 2*time.Minute)
	t.Logf("approval reached the bridge after %s", time.Since(start).Round(time.Millisecond))
	require.NotNil(t, q.Action)
	t.Logf("suggestions Claude Code offered: %s", suggestions(q.Action))
	rule := -1
	for i, s := range q.Action.Suggestions {
		var sg struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(s, &sg) == nil && sg.Type == "addRules" && rule < 0 {
			rule = i
		}
	}
	require.GreaterOrEqual(t, rule, 0, "Claude Code offered no addRules suggestion: %s", suggestions(q.Action))
	_, err := c.Respond(t.Context(), q.ID, domain.RespondRequest{Rule: &rule, Digest: q.Action.Digest})
	require.NoError(t, err)
	answered := time.Now()
	// Wait for the turn to end. Had Claude Code not taken the rule, it would
	// raise a second PermissionRequest: the bridge answers that one itself
	// (its own "always allow" for the rest of the run), which the record
	// count below catches; one left pending is allowed here so the run ends
	// at once instead of waiting out the hook.
	var second *domain.Question
	for done := false; !done; {
		select {
		case err := <-run.done:
			require.NoError(t, err, "stdout: %s\nstderr: %s", tail(run.stdout.String()), tail(run.stderr.String()))
			done = true
		case <-run.ctx.Done():
			t.Fatalf("claude did not finish; stdout: %s\nstderr: %s", tail(run.stdout.String()), tail(run.stderr.String()))
		case <-time.After(500 * time.Millisecond):
			qs, err := c.List(t.Context(), domain.StatusPending)
			require.NoError(t, err)
			if len(qs) > 0 && second == nil {
				second = qs[0]
				_, err = c.Respond(t.Context(), second.ID, domain.RespondRequest{Response: ptr("Allow")})
				require.NoError(t, err)
			}
		}
	}
	t.Logf("claude finished %s after the approval was answered", time.Since(answered).Round(time.Millisecond))
	if second != nil {
		t.Errorf("Claude Code asked again for the same command after the rule was chosen: %q", second.Questions[0].Question)
	}

	for _, id := range ids {
		_, ok := api.result(id)
		assert.True(t, ok, "the tool_result of %s reached the model; api: %v", id, api.requests())
	}
	all, err := c.List(t.Context(), "")
	require.NoError(t, err)
	var asked []string
	for _, q := range all {
		how := ""
		if q.Decision != nil && q.Decision.AutoRule != "" {
			how = ", by the bridge's rule " + q.Decision.AutoRule
		}
		asked = append(asked, fmt.Sprintf("%s %s %q%s", q.ID, q.Status, q.Questions[0].Question, how))
	}
	assert.Len(t, all, 1, "the second, identical call was not asked; asked: %s", strings.Join(asked, "; "))
	got, err := c.Get(t.Context(), q.ID)
	require.NoError(t, err)
	require.NotNil(t, got.Decision)
	assert.Equal(t, domain.BehaviorAllow, got.Decision.Behavior)
	require.Len(t, got.Decision.Rules, 1)
	assert.JSONEq(t, string(q.Action.Suggestions[rule]), string(got.Decision.Rules[0]))

	// The suggestion's destination was localSettings: Claude Code keeps the
	// rule in the project's .claude/settings.local.json, so it holds beyond
	// this session (the adapters word it "don't ask again this project").
	local, err := os.ReadFile(filepath.Join(run.work, ".claude", "settings.local.json"))
	require.NoError(t, err, "Claude Code saved the chosen rule")
	t.Logf(".claude/settings.local.json: %s", local)
	assert.Contains(t, string(local), `"Bash(npm run *)"`)
}

func ptr[T any](v T) *T { return &v }

func suggestions(a *domain.Action) string {
	var b strings.Builder
	for _, s := range a.Suggestions {
		b.Write(s)
		b.WriteByte(' ')
	}
	return b.String()
}
