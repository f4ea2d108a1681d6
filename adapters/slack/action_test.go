package slack

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/askbridge/askbridge/domain"
)

// bashApproval is the approval the Claude Code hook asks for the captured
// PermissionRequest (tool Bash, its input and permission_suggestions).
func bashApproval(t *testing.T, run string) domain.AskRequest {
	t.Helper()
	b, err := os.ReadFile("../../agent/hook/testdata/claude-code/permissionrequest-bash.json")
	require.NoError(t, err)
	var f struct {
		Tool        string            `json:"tool_name"`
		Input       json.RawMessage   `json:"tool_input"`
		Suggestions []json.RawMessage `json:"permission_suggestions"`
	}
	require.NoError(t, json.Unmarshal(b, &f))
	req := approvalRequest(run)
	req.Action = &domain.Action{Tool: f.Tool, Input: f.Input, Suggestions: f.Suggestions}
	return req
}

// editApproval is a Claude Code Edit whose diff changes 300 lines.
func editApproval(run string) domain.AskRequest {
	var old, nw strings.Builder
	for i := range 150 {
		fmt.Fprintf(&old, "\told := computeTheOldValueOfLine(%d) // a line of ordinary Go code\n", i)
		fmt.Fprintf(&nw, "\tnew := computeTheNewValueOfLine(%d) // a line of ordinary Go code\n", i)
	}
	in, _ := json.Marshal(map[string]any{"file_path": "/home/dev/proj/main.go", "old_string": old.String(), "new_string": nw.String()})
	req := approvalRequest(run)
	req.Questions[0].Question = "Allow Edit: main.go?"
	req.Action = &domain.Action{Tool: "Edit", Input: in}
	return req
}

// apiApproval is an agent's API approval with a JSON argument object.
func apiApproval(run string) domain.AskRequest {
	req := approvalRequest(run)
	req.Questions[0].Question = "Scale the api service?"
	req.Action = &domain.Action{Tool: "deploy.scale", Input: json.RawMessage(
		`{"service":"api","replicas":3,"regions":["eu-west-1","us-east-2"],"limits":{"cpu":"500m","memory":"1Gi"},"note":"a < b & c"}`)}
	return req
}

func withPublicURL(u string) envOpt {
	return func(c *Config, _ *lifecycle.RouterConfig) { c.PublicURL = u }
}

func noEdit(_ *Config, rc *lifecycle.RouterConfig) {
	for i := range rc.Routes {
		rc.Routes[i].NoEdit = true
	}
}

func (e *env) message(q *domain.Question) (string, string) {
	e.t.Helper()
	ts := e.copyOn(q, "C1").MessageTS
	m, ok := e.fake.Message("C1", ts)
	require.True(e.t, ok)
	return ts, m.Texts()
}

// submitEdit sends the edit modal (the last opened view) with text.
func (e *env) submitEdit(u user, text string) map[string]any {
	e.t.Helper()
	views := e.fake.Views()
	require.NotEmpty(e.t, views)
	var v map[string]any
	_ = json.Unmarshal(views[len(views)-1].View, &v)
	payload := map[string]any{"type": "view_submission",
		"user": map[string]any{"id": u.id, "username": u.name, "name": u.name},
		"view": map[string]any{"id": views[len(views)-1].ID, "callback_id": v["callback_id"],
			"private_metadata": v["private_metadata"],
			"state": map[string]any{"values": map[string]any{editBlock: map[string]any{
				editAction: map[string]any{"type": "plain_text_input", "value": text}}}}}}
	rec := e.interact(payload)
	var out map[string]any
	if rec.Body.Len() > 0 {
		require.NoError(e.t, json.Unmarshal(rec.Body.Bytes(), &out))
	}
	return out
}

// TestActionBashShowsCommandRulesAndEdit: the PermissionRequest's command
// is in a code block, each suggestion is a button described in words, and
// Edit… is offered.
func TestActionBashShowsCommandRulesAndEdit(t *testing.T) {
	e := newEnv(t)
	q := e.ask(bashApproval(t, "run-b1"))
	ts, texts := e.message(q)
	assert.Contains(t, texts, "*Tool:* `Bash`")
	assert.Contains(t, texts, "```rm -rf build```", "the command in full, in a code block")
	assert.NotContains(t, texts, "Not all shown")
	assert.Contains(t, texts, "Allow, and don't ask again this session for files in /home/dev/proj/build")
	assert.Contains(t, texts, "Allow, and don't ask again this session for file edits (acceptEdits mode)")
	_, rule := e.element("C1", ts, "rule:1")
	assert.Equal(t, "button", rule["type"])
	e.element("C1", ts, "Edit…")
	e.element("C1", ts, "Deny with note…")
}

// TestActionLongDiffSaysSoAndLinks: a 300-changed-line Edit is posted
// within the fake's limits; the message shows the diff's first lines and
// says how many are left out, linking to the question page.
func TestActionLongDiffSaysSoAndLinks(t *testing.T) {
	e := newEnv(t, withPublicURL("https://bridge.example.com/"))
	q := e.ask(editApproval("run-e1"))
	_, texts := e.message(q)
	assert.Contains(t, texts, "diff +150 −150")
	assert.Contains(t, texts, "```--- a/home/dev/proj/main.go\n+++ b/home/dev/proj/main.go\n@@")
	assert.Contains(t, texts, "-\told := computeTheOldValueOfLine(0)")
	assert.Contains(t, texts, "*Not all shown here* — diff: 303 lines, ")
	assert.Contains(t, texts, "full action: <https://bridge.example.com/questions/"+q.ID+"|open the question page>")
	// Every diff line shown is whole; none is missing in between.
	shown := 0
	for i := range 150 {
		if strings.Contains(texts, fmt.Sprintf("computeTheOldValueOfLine(%d) ", i)) {
			require.Equal(t, i, shown, "lines are shown from the start, in order")
			shown++
		}
	}
	assert.Greater(t, shown, 20)
	assert.Less(t, shown, 150)
}

// TestActionLongDiffWithoutURLPagesInModals: with no public URL the
// message offers "Show full action", whose modal pages reach every line.
func TestActionLongDiffWithoutURLPagesInModals(t *testing.T) {
	e := newEnv(t)
	q := e.ask(editApproval("run-e2"))
	ts, texts := e.message(q)
	assert.Contains(t, texts, "press *Show full action* to read all of it")
	e.click(alice, "C1", ts, "Show full action", nil)
	e.wait("modal", func() bool { return len(e.fake.Views()) == 1 })
	var all strings.Builder
	for page := 1; ; page++ {
		v := e.fake.Views()[0]
		var view map[string]any
		require.NoError(t, json.Unmarshal(v.View, &view))
		raw := string(v.View)
		all.WriteString(raw)
		if !strings.Contains(raw, "Next page") {
			break
		}
		require.Less(t, page, 10)
		// The "Next page" button inside the modal updates it.
		p := map[string]any{"type": "block_actions", "trigger_id": e.fake.Trigger(),
			"user":      map[string]any{"id": alice.id, "name": alice.name},
			"container": map[string]any{"type": "view", "view_id": v.ID},
			"view":      map[string]any{"id": v.ID},
			"actions":   []any{map[string]any{"action_id": fmt.Sprintf("%s:%d", actFullAction, page), "block_id": blockID(q.ID, "page"), "type": "button"}}}
		e.interact(p)
		e.wait("page", func() bool { return e.fake.Views()[0].Updates == page })
	}
	for i := range 150 {
		assert.Contains(t, all.String(), fmt.Sprintf("computeTheNewValueOfLine(%d) ", i))
	}
}

// TestActionAPIArgumentsInFull: an API approval's JSON arguments are shown
// whole, pretty-printed and escaped.
func TestActionAPIArgumentsInFull(t *testing.T) {
	e := newEnv(t)
	q := e.ask(apiApproval("run-j1"))
	_, texts := e.message(q)
	assert.Contains(t, texts, "*Tool:* `deploy.scale`")
	assert.Contains(t, texts, "```{\n  \"limits\": {\n    \"cpu\": \"500m\",\n    \"memory\": \"1Gi\"\n  },\n  \"note\": \"a &lt; b &amp; c\",\n  \"regions\": [\n    \"eu-west-1\",\n    \"us-east-2\"\n  ],\n  \"replicas\": 3,\n  \"service\": \"api\"\n}```")
}

// TestActionEditModalReachesDecision: Edit… opens a modal pre-filled with
// the JSON; bad JSON is a field error; good JSON is the decision's input,
// and every copy says what changed.
func TestActionEditModalReachesDecision(t *testing.T) {
	e := newEnv(t)
	q := e.ask(apiApproval("run-j2"))
	ts, _ := e.message(q)
	e.click(alice, "C1", ts, "Edit…", nil)
	e.wait("modal", func() bool { return len(e.fake.Views()) == 1 })
	var view map[string]any
	require.NoError(t, json.Unmarshal(e.fake.Views()[0].View, &view))
	assert.Equal(t, "askbridge_edit", view["callback_id"])
	assert.Contains(t, string(e.fake.Views()[0].View), `"initial_value":"{\n  \"limits\"`)

	resp := e.submitEdit(alice, `{"service": "api", "replicas": 5,`)
	require.Equal(t, "errors", resp["response_action"], "bad JSON keeps the modal open")
	assert.Contains(t, resp["errors"].(map[string]any)[editBlock], "Not valid JSON")
	assert.Equal(t, domain.StatusPending, e.get(q).Status)

	edited := `{"service": "api", "replicas": 5, "regions": ["eu-west-1"], "limits": {"cpu": "500m", "memory": "1Gi"}, "note": "a < b & c"}`
	assert.Nil(t, e.submitEdit(alice, edited))
	got := e.final(q)
	require.NotNil(t, got.Decision)
	assert.Equal(t, domain.BehaviorAllow, got.Decision.Behavior)
	assert.True(t, got.Decision.Edited)
	assert.JSONEq(t, edited, string(got.Decision.Input))
	require.NotNil(t, got.EditedAction)
	assert.Equal(t, "slack", got.EditedAction.By.Platform)
	for _, m := range e.edited(q) {
		assert.Contains(t, m.Texts(), "Allowed with edits by <@U1>: regions: [\"eu-west-1\",\"us-east-2\"] → [\"eu-west-1\"]; replicas: 3 → 5")
	}
}

// TestActionEditBashCommand: the Bash edit modal holds the command alone.
func TestActionEditBashCommand(t *testing.T) {
	e := newEnv(t)
	q := e.ask(bashApproval(t, "run-b2"))
	ts, _ := e.message(q)
	e.click(alice, "C1", ts, "Edit…", nil)
	e.wait("modal", func() bool { return len(e.fake.Views()) == 1 })
	assert.Contains(t, string(e.fake.Views()[0].View), `"initial_value":"rm -rf build"`)
	e.submitEdit(alice, "rm -rf build/cache")
	got := e.final(q)
	assert.JSONEq(t, `{"command":"rm -rf build/cache","description":"Remove the build directory"}`, string(got.Decision.Input))
	for _, m := range e.edited(q) {
		assert.Contains(t, m.Texts(), "Allowed with edits by <@U1>: command: `rm -rf build` → `rm -rf build/cache`")
	}
}

// TestActionNoEditButtonWhenRouteForbids: allow_edit: false hides Edit….
func TestActionNoEditButtonWhenRouteForbids(t *testing.T) {
	e := newEnv(t, noEdit)
	q := e.ask(bashApproval(t, "run-b3"))
	_, texts := e.message(q)
	m, _ := e.fake.Message("C1", e.copyOn(q, "C1").MessageTS)
	assert.NotContains(t, string(m.Blocks), `"action_id":"edit"`)
	assert.Contains(t, texts, "Allow, and don't ask again", "the rules stay")
}

// TestActionRuleButtonAllowsWithRule: an "always allow" button answers
// with that suggestion, and the copy names the rule.
func TestActionRuleButtonAllowsWithRule(t *testing.T) {
	e := newEnv(t)
	req := bashApproval(t, "run-b4")
	q := e.ask(req)
	ts, _ := e.message(q)
	e.click(alice, "C1", ts, "rule:0", nil)
	got := e.final(q)
	require.NotNil(t, got.Decision)
	assert.Equal(t, domain.BehaviorAllow, got.Decision.Behavior)
	require.Len(t, got.Decision.Rules, 1)
	assert.JSONEq(t, string(req.Action.Suggestions[0]), string(got.Decision.Rules[0]))
	require.NotNil(t, got.AppliedRule)
	assert.Equal(t, 0, *got.AppliedRule)
	for _, m := range e.edited(q) {
		assert.Contains(t, m.Texts(), "Allowed by <@U1>, and not asked again this session for files in /home/dev/proj/build")
		assert.Contains(t, m.Texts(), "```rm -rf build```", "the finished copy still shows what was allowed")
		assert.NotContains(t, string(m.Blocks), `"type":"actions"`, "no controls left")
	}
}

// TestActionDenyWithReason: "Deny with note…" denies in one step with the
// note as the agent's reason.
func TestActionDenyWithReason(t *testing.T) {
	e := newEnv(t)
	q := e.ask(bashApproval(t, "run-b5"))
	ts, _ := e.message(q)
	e.click(alice, "C1", ts, "Deny with note…", nil)
	e.wait("modal", func() bool { return len(e.fake.Views()) == 1 })
	e.submitView(alice, "use make clean instead")
	got := e.final(q)
	require.NotNil(t, got.Decision)
	assert.Equal(t, domain.BehaviorDeny, got.Decision.Behavior)
	assert.Equal(t, "use make clean instead", got.Decision.Message)
	for _, m := range e.edited(q) {
		assert.Contains(t, m.Texts(), "Denied with a note by <@U1>: use make clean instead")
	}
}

// TestActionAllowAsAsked: the plain Allow button says so on the copy.
func TestActionAllowAsAsked(t *testing.T) {
	e := newEnv(t)
	q := e.ask(apiApproval("run-j3"))
	ts, _ := e.message(q)
	e.click(alice, "C1", ts, "Allow", nil)
	got := e.final(q)
	assert.Equal(t, domain.BehaviorAllow, got.Decision.Behavior)
	assert.False(t, got.Decision.Edited)
	for _, m := range e.edited(q) {
		assert.Contains(t, m.Texts(), "Allowed as asked by <@U1>")
	}
}

// TestActionTooLongToEditHere: arguments beyond Slack's 3,000-character
// input are not editable in a modal; the person is pointed to the page.
func TestActionTooLongToEditHere(t *testing.T) {
	e := newEnv(t, withPublicURL("https://bridge.example.com"))
	req := approvalRequest("run-l1")
	big, _ := json.Marshal(map[string]string{"command": strings.Repeat("echo hello; ", 400)})
	req.Action = &domain.Action{Tool: "Bash", Input: big}
	q := e.ask(req)
	ts, texts := e.message(q)
	assert.NotContains(t, texts, "Not all shown", "4,800 characters fit the message")
	e.click(alice, "C1", ts, "Edit…", nil)
	e.wait("explanation", func() bool { return len(e.ephemeralsTo(alice)) == 1 })
	assert.Contains(t, e.ephemeralsTo(alice)[0], "too long to edit in Slack")
	assert.Contains(t, e.ephemeralsTo(alice)[0], "https://bridge.example.com/questions/"+q.ID)
	assert.Empty(t, e.fake.Views())
}

// TestActionHugeStaysWithinLimits: the largest action the API takes, with
// a long question and context, still posts and finishes within the fake's
// limits, and says what it left out.
func TestActionHugeStaysWithinLimits(t *testing.T) {
	e := newEnv(t)
	req := approvalRequest("run-h1")
	req.Questions[0].Question = strings.Repeat("Should this <run> & go? ", 80)
	req.Context = strings.Repeat("Some context line with `code` and *stars*.\n", 180)
	var lines strings.Builder
	for i := range 3500 {
		fmt.Fprintf(&lines, "line %d of a long file with <tags> & ampersands\n", i)
	}
	in, _ := json.Marshal(map[string]any{"file_path": "/big.txt", "content": lines.String()})
	req.Action = &domain.Action{Tool: "Write", Input: in}
	q := e.ask(req)
	ts, texts := e.message(q)
	assert.Contains(t, texts, "*Not all shown here* — diff: 3,503 lines, ")
	e.click(alice, "C1", ts, "Allow", nil)
	e.final(q)
	for _, m := range e.edited(q) {
		assert.Contains(t, m.Texts(), "Allowed as asked by <@U1>")
		assert.Contains(t, m.Texts(), "diff: 3,503 lines, ")
	}
}
