package hook_test

// Tests driven by hook events captured from the real Claude Code CLI
// (testdata/claude-code, from 2.1.197 and 2.1.330) through the hook's
// own code against a real `askbridge serve`.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/agent/hook"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// event is a captured hook event, editable before it is fed to the hook.
type event map[string]any

func fixture(t *testing.T, name string) event {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "claude-code", name))
	require.NoError(t, err)
	var e event
	require.NoError(t, json.Unmarshal(b, &e))
	return e
}

func (e event) json(t *testing.T) string {
	t.Helper()
	b, err := json.Marshal(e)
	require.NoError(t, err)
	return string(b)
}

func (e event) input() map[string]any { return e["tool_input"].(map[string]any) }

// asPermissionRequest is the PermissionRequest Claude Code raises for the
// same tool call: no tool_use_id, permission suggestions instead.
func (e event) asPermissionRequest() event {
	out := event{}
	for k, v := range e {
		out[k] = v
	}
	out["hook_event_name"] = "PermissionRequest"
	delete(out, "tool_use_id")
	out["permission_suggestions"] = []any{}
	return out
}

type result struct {
	code           int
	stdout, stderr string
}

// inProcess runs the hook's Run against srv and reports on the channel.
func inProcess(t *testing.T, srv *bridgetest.Server, input string, args ...string) <-chan result {
	ch := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		code := hook.Run(t.Context(), append([]string{"--poll", "1s"}, args...),
			hook.Env{URL: srv.URL, Project: "default"}, strings.NewReader(input), &out, &errb)
		ch <- result{code, out.String(), errb.String()}
	}()
	return ch
}

func finished(t *testing.T, ch <-chan result, within time.Duration) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(within):
		t.Fatalf("the hook did not finish within %s", within)
	}
	return result{}
}

func serve(t *testing.T) (*bridgetest.Server, *client.Client) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the bridge binary")
	}
	srv := bridgetest.Serve(t)
	return srv, client.New(srv.URL, "", "default")
}

// transcriptFile is a session transcript the test appends to as Claude
// Code would.
type transcriptFile struct{ path string }

func newTranscriptFile(t *testing.T) *transcriptFile {
	p := filepath.Join(t.TempDir(), "session.jsonl")
	require.NoError(t, os.WriteFile(p, []byte(`{"type":"user","message":{"role":"user","content":"clean up, then ask me about the setup"},"uuid":"u1"}`+"\n"), 0o600))
	return &transcriptFile{p}
}

func (f *transcriptFile) append(t *testing.T, lines ...string) {
	t.Helper()
	fh, err := os.OpenFile(f.path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	defer fh.Close()
	for _, l := range lines {
		_, err = fh.WriteString(l + "\n")
		require.NoError(t, err)
	}
}

func toolUseLine(t *testing.T, id, name string, input any) string {
	b, err := json.Marshal(map[string]any{"type": "assistant", "uuid": "a-" + id, "message": map[string]any{
		"role": "assistant", "content": []any{
			map[string]any{"type": "text", "text": "Let me do that."},
			map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}}}})
	require.NoError(t, err)
	return string(b)
}

func toolResultLine(id, content string, isError bool) string {
	return fmt.Sprintf(`{"type":"user","uuid":"r-%s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":%q,"is_error":%t}]}}`, id, id, content, isError)
}

// TestPermissionRequestAskUserQuestionAsksTheQuestions: when no PreToolUse
// hook answered, Claude Code raises a PermissionRequest for
// AskUserQuestion. The hook must ask the real questions and allow with
// the answers, not post "Allow AskUserQuestion?" (whose Allow left the
// model with "The user did not answer the questions").
func TestPermissionRequestAskUserQuestionAsksTheQuestions(t *testing.T) {
	srv, c := serve(t)
	pre := fixture(t, "pretooluse-askuserquestion.json")
	tr := newTranscriptFile(t)
	tr.append(t, toolUseLine(t, pre["tool_use_id"].(string), "AskUserQuestion", pre.input()))
	perm := pre.asPermissionRequest()
	perm["transcript_path"] = tr.path

	ch := inProcess(t, srv, perm.json(t))
	q := pendingOn(t, c, 1)
	assert.Equal(t, domain.KindQuestion, q.Kind, "a question, not an approval")
	require.Len(t, q.Questions, 2)
	assert.Equal(t, "Which database should the service use?", q.Questions[0].Question)
	assert.Equal(t, "Which checks should run before merging?", q.Questions[1].Question)
	assert.True(t, q.Questions[1].MultiSelect)
	assert.Equal(t, pre["tool_use_id"], q.IdempotencyKey, "the tool call's id, read from the transcript")

	_, err := c.Respond(t.Context(), q.ID, domain.RespondRequest{Answers: map[string]domain.StringList{
		"Which database should the service use?":  {"SQLite"},
		"Which checks should run before merging?": {"lint", "e2e"},
	}})
	require.NoError(t, err)
	r := finished(t, ch, 20*time.Second)
	require.Equal(t, hook.ExitOK, r.code, r.stderr)
	questions, _ := json.Marshal(pre.input()["questions"])
	assert.Equal(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"questions":`+
		string(questions)+`,"answers":{"Which database should the service use?":"SQLite","Which checks should run before merging?":"lint, e2e"}}}}}`+"\n", r.stdout)
}

// TestAskUserQuestionRelaysWhatClaudeCodeAccepts: a header over 12
// characters, question texts and labels differing only by case, a
// description over 1,000 characters and an empty label all pass Claude
// Code; the hook shows a shortened, distinct form and answers with the
// original strings, keyed by the exact (untrimmed) question texts, in
// question order.
func TestAskUserQuestionRelaysWhatClaudeCodeAccepts(t *testing.T) {
	srv, c := serve(t)
	long := strings.Repeat("Managed, replicated, backed up nightly. ", 40) // 1,640 characters
	pre := fixture(t, "pretooluse-askuserquestion.json")
	pre.input()["questions"] = []any{
		map[string]any{"question": "Which database? ", "header": "Authentication", "multiSelect": false, "options": []any{
			map[string]any{"label": "Postgres", "description": long},
			map[string]any{"label": "postgres", "description": "the lower-case one"}}},
		map[string]any{"question": "which database?", "header": "Checks", "multiSelect": true, "options": []any{
			map[string]any{"label": "lint", "description": "Static analysis"},
			map[string]any{"label": "", "description": "An unnamed check"},
			map[string]any{"label": "e2e", "description": "End-to-end tests"}}},
		map[string]any{"question": "Zebra or apple?", "header": "Pick", "multiSelect": false, "options": []any{
			map[string]any{"label": "Zebra", "description": "z"},
			map[string]any{"label": "Apple", "description": "a"}}},
	}

	ch := inProcess(t, srv, pre.json(t))
	q := pendingOn(t, c, 1)
	require.Len(t, q.Questions, 3, "the question reached people")
	assert.Equal(t, "Which database?", q.Questions[0].Question)
	assert.Equal(t, "Authenticat…", q.Questions[0].Header, "shortened to 12 characters for display")
	assert.Equal(t, []string{"Postgres", "postgres (2)"}, []string{q.Questions[0].Options[0].Label, q.Questions[0].Options[1].Label})
	assert.LessOrEqual(t, len([]rune(q.Questions[0].Options[0].Description)), domain.MaxDescriptionLen)
	assert.True(t, strings.HasPrefix(q.Questions[0].Options[0].Description, "Managed, replicated"))
	assert.Equal(t, "which database? (2)", q.Questions[1].Question)
	assert.Equal(t, "Option 2", q.Questions[1].Options[1].Label, "an empty label gets a name people can click")

	_, err := c.Respond(t.Context(), q.ID, domain.RespondRequest{Answers: map[string]domain.StringList{
		"Which database?":     {"postgres (2)"},
		"which database? (2)": {"lint", "Option 2"},
		"Zebra or apple?":     {"Apple"},
	}})
	require.NoError(t, err)
	r := finished(t, ch, 20*time.Second)
	require.Equal(t, hook.ExitOK, r.code, r.stderr)
	var out struct {
		HookSpecificOutput struct {
			PermissionDecision string
			UpdatedInput       struct {
				Questions json.RawMessage
				Answers   json.RawMessage
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	assert.Equal(t, "allow", out.HookSpecificOutput.PermissionDecision)
	assert.Equal(t, `{"Which database? ":"postgres","which database?":"lint, ","Zebra or apple?":"Apple"}`,
		string(out.HookSpecificOutput.UpdatedInput.Answers), "original strings, in question order")
	sent, _ := json.Marshal(pre.input()["questions"])
	assert.JSONEq(t, string(sent), string(out.HookSpecificOutput.UpdatedInput.Questions), "the questions are handed back as Claude Code sent them")
}

// TestAskUserQuestionAnswersInQuestionOrder: the captured two-question
// AskUserQuestion answered through the bridge; answers come back in the
// order Claude Code asked them, not alphabetically.
func TestAskUserQuestionAnswersInQuestionOrder(t *testing.T) {
	srv, c := serve(t)
	pre := fixture(t, "pretooluse-askuserquestion.json")
	ch := inProcess(t, srv, pre.json(t))
	q := pendingOn(t, c, 1)
	_, err := c.Respond(t.Context(), q.ID, domain.RespondRequest{Answers: map[string]domain.StringList{
		"Which database should the service use?":  {"Postgres"},
		"Which checks should run before merging?": {"test"},
	}})
	require.NoError(t, err)
	r := finished(t, ch, 20*time.Second)
	require.Equal(t, hook.ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"answers":{"Which database should the service use?":"Postgres","Which checks should run before merging?":"test"}`)
}

// TestPermissionRequestWithdrawnWhenDecidedInTerminal: the person answers
// the terminal dialog first; Claude Code neither stops nor tells the hook,
// but the transcript records the tool's result. The approval is withdrawn
// at once instead of staying live (and useless) until --timeout.
func TestPermissionRequestWithdrawnWhenDecidedInTerminal(t *testing.T) {
	srv, c := serve(t)
	for _, tc := range []struct {
		name string
		line func(id string) string
	}{
		{"rejected", func(id string) string {
			return toolResultLine(id, "The user doesn't want to proceed with this tool use. The tool use was rejected.", true)
		}},
		{"allowed and running", func(id string) string {
			return fmt.Sprintf(`{"type":"progress","data":{"type":"bash_progress","output":"removing"},"toolUseID":"bash-progress-0","parentToolUseID":%q,"uuid":"p1"}`, id)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			perm := fixture(t, "permissionrequest-bash.json")
			perm["session_id"] = "terminal-" + strings.ReplaceAll(tc.name, " ", "-")
			id := "toolu_term_" + strings.ReplaceAll(tc.name, " ", "_")
			tr := newTranscriptFile(t)
			tr.append(t, toolUseLine(t, "toolu_earlier", "Bash", map[string]any{"command": "ls"}),
				toolResultLine("toolu_earlier", "build\nsrc", false),
				toolUseLine(t, id, "Bash", perm.input()))
			perm["transcript_path"] = tr.path

			ch := inProcess(t, srv, perm.json(t), "--timeout", "5m")
			q := pendingOn(t, c, 1)
			assert.Equal(t, "Allow Bash: rm -rf build?", q.Questions[0].Question)
			// The hook's own progress line means nothing.
			tr.append(t, fmt.Sprintf(`{"type":"progress","data":{"type":"hook_progress","hookEvent":"PermissionRequest"},"parentToolUseID":%q}`, id))
			time.Sleep(600 * time.Millisecond)
			got, err := c.Get(t.Context(), q.ID)
			require.NoError(t, err)
			require.Equal(t, domain.StatusPending, got.Status)

			tr.append(t, tc.line(id))
			r := finished(t, ch, 10*time.Second)
			assert.Equal(t, hook.ExitOK, r.code, r.stderr)
			assert.Empty(t, r.stdout, "the terminal decided: nothing to print")
			assert.Contains(t, r.stderr, "decided in the terminal")
			got, err = c.Get(t.Context(), q.ID)
			require.NoError(t, err)
			assert.Equal(t, domain.StatusCancelled, got.Status)
			assert.Equal(t, domain.CancelAgent, got.CancelReason)
		})
	}
}

// TestPermissionRequestAfterPreToolUseApprovalPostsNoSecondApproval: a
// PreToolUse --approve approval that gets no answer in time answers "ask";
// Claude Code then raises a PermissionRequest for the same call. The hook
// must not post the identical approval a second time.
func TestPermissionRequestAfterPreToolUseApprovalPostsNoSecondApproval(t *testing.T) {
	srv, c := serve(t)
	pre := fixture(t, "pretooluse-bash.json")
	tr := newTranscriptFile(t)
	tr.append(t, toolUseLine(t, pre["tool_use_id"].(string), "Bash", pre.input()))
	pre["transcript_path"] = tr.path
	perm := fixture(t, "permissionrequest-bash.json")
	perm["transcript_path"] = tr.path

	r := finished(t, inProcess(t, srv, pre.json(t), "--approve", "Bash(rm *)", "--timeout", "1s"), 20*time.Second)
	require.Equal(t, hook.ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"permissionDecision":"ask"`)

	r = finished(t, inProcess(t, srv, perm.json(t), "--timeout", "3s"), 20*time.Second)
	assert.Equal(t, hook.ExitOK, r.code, r.stderr)
	assert.Empty(t, r.stdout, "the terminal dialog has it")
	qs, err := c.RunQuestions(t.Context(), pre["session_id"].(string))
	require.NoError(t, err)
	assert.Len(t, qs, 1, "one approval posted for one tool call")

	// Answered through askbridge in time, the same PermissionRequest (a
	// repeated delivery) gets that answer without a second post.
	pre["tool_use_id"] = "toolu_second"
	pre["session_id"] = "second-session"
	perm["session_id"] = "second-session"
	tr2 := newTranscriptFile(t)
	tr2.append(t, toolUseLine(t, "toolu_second", "Bash", pre.input()))
	pre["transcript_path"], perm["transcript_path"] = tr2.path, tr2.path
	ch := inProcess(t, srv, pre.json(t), "--approve", "Bash(rm *)")
	q := pendingOn(t, c, 1)
	_, err = c.RespondText(t.Context(), q.ID, "Allow")
	require.NoError(t, err)
	require.Contains(t, finished(t, ch, 20*time.Second).stdout, `"permissionDecision":"allow"`)
	r = finished(t, inProcess(t, srv, perm.json(t), "--timeout", "3s"), 20*time.Second)
	assert.Equal(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`+"\n", r.stdout)
	qs, err = c.RunQuestions(t.Context(), "second-session")
	require.NoError(t, err)
	assert.Len(t, qs, 1)
}

// TestApproveMatchesCompoundCommands: --approve 'Bash(rm *)' must catch rm
// wherever it runs in the command line, as the captured PreToolUse shows
// it, and let other commands through untouched.
func TestApproveMatchesCompoundCommands(t *testing.T) {
	srv, c := serve(t)
	for i, command := range []string{
		"cd . && rm -rf build", "/bin/rm -rf build", "sudo rm -rf build", "FOO=1 rm -rf build",
		"echo rm", "grep rm file", `echo "rm -rf build"`,
	} {
		pre := fixture(t, "pretooluse-bash.json")
		pre["session_id"] = fmt.Sprintf("compound-%d", i)
		pre["tool_use_id"] = fmt.Sprintf("toolu_compound_%d", i)
		pre.input()["command"] = command
		ch := inProcess(t, srv, pre.json(t), "--approve", "Bash(rm *)", "--timeout", "1m")
		if strings.HasPrefix(command, "echo") || strings.HasPrefix(command, "grep") {
			r := finished(t, ch, 20*time.Second)
			assert.Equal(t, hook.ExitOK, r.code, r.stderr)
			assert.Empty(t, r.stdout, "%s: not an rm, not asked", command)
			continue
		}
		q := pendingOn(t, c, 1)
		assert.Equal(t, "Allow Bash: "+command+"?", q.Questions[0].Question)
		_, err := c.RespondText(t.Context(), q.ID, "Deny")
		require.NoError(t, err)
		r := finished(t, ch, 20*time.Second)
		assert.Contains(t, r.stdout, `"permissionDecision":"deny"`, command)
	}
	qs, err := c.List(t.Context(), "")
	require.NoError(t, err)
	assert.Len(t, qs, 4, "only the four rm commands were asked")
}
