package lifecycle_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func toolApproval(run, tool, input string, suggestions ...string) *domain.AskRequest {
	a := &domain.Action{Tool: tool, Input: json.RawMessage(input)}
	for _, s := range suggestions {
		a.Suggestions = append(a.Suggestions, json.RawMessage(s))
	}
	return &domain.AskRequest{RunID: run, Question: "Allow " + tool + "?", Action: a,
		Options: []domain.Option{{Label: "Allow"}, {Label: "Deny"}}}
}

func detailOf(t *testing.T, err error, field string) string {
	t.Helper()
	var e *domain.Error
	require.ErrorAs(t, err, &e)
	for _, d := range e.Details {
		if d.Field == field {
			return d.Problem
		}
	}
	t.Fatalf("no problem named %s in %v", field, e.Details)
	return ""
}

// TestEditApprovalCarriesDigestAndFullDiff: an Edit of 300 changed lines
// is stored with its digest and a diff holding every changed line.
func TestEditApprovalCarriesDigestAndFullDiff(t *testing.T) {
	f := newFixture(t, "")
	var old, new strings.Builder
	for i := range 300 {
		fmt.Fprintf(&old, "\tlimit%d := %d\n", i, i)
		fmt.Fprintf(&new, "\tlimit%d := %d\n", i, i*2+1)
	}
	in, _ := json.Marshal(map[string]any{"file_path": "/home/dev/proj/limits.go", "old_string": old.String(), "new_string": new.String()})
	res, err := f.router.Ask(ctx, "p", toolApproval("r1", "Edit", string(in)), "")
	require.NoError(t, err)
	q, err := f.store.Get(ctx, "p", res.Question.ID)
	require.NoError(t, err)
	require.NotNil(t, q.Action)
	assert.Equal(t, domain.KindApproval, q.Kind, "an action makes the question an approval")
	canon, _ := domain.CanonicalInput(in)
	assert.Equal(t, domain.ActionDigest("Edit", canon), q.Action.Digest)
	assert.True(t, strings.HasPrefix(q.Action.Digest, "sha256:"))
	assert.True(t, strings.HasPrefix(q.Action.Diff, "--- a/home/dev/proj/limits.go\n+++ b/home/dev/proj/limits.go\n@@ -1,300 +1,300 @@\n"), q.Action.Diff[:120])
	assert.Equal(t, 300, strings.Count(q.Action.Diff, "\n-\tlimit"))
	assert.Equal(t, 300, strings.Count(q.Action.Diff, "\n+\tlimit"))
	assert.True(t, strings.Contains(q.Action.Diff, "\n-\tlimit299 := 299\n+\tlimit0 := 1\n"), "removed lines, then added ones")
	assert.True(t, strings.HasSuffix(q.Action.Diff, "\n+\tlimit299 := 599\n"))
}

func TestWriteAndMultiEditDiffs(t *testing.T) {
	d := domain.ActionDiff("Write", json.RawMessage(`{"file_path":"/tmp/new.txt","content":"one\ntwo\n"}`))
	assert.Equal(t, "--- /dev/null\n+++ b/tmp/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n", d)
	d = domain.ActionDiff("MultiEdit", json.RawMessage(`{"file_path":"a.go","edits":[{"old_string":"x := 1","new_string":"x := 2"},{"old_string":"y","new_string":"z"}]}`))
	assert.Equal(t, "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x := 1\n+x := 2\n@@ -1 +1 @@\n-y\n+z\n", d)
	assert.Empty(t, domain.ActionDiff("Bash", json.RawMessage(`{"command":"ls"}`)))
}

func TestAskRefusesBadActions(t *testing.T) {
	f := newFixture(t, "")
	req := toolApproval("r1", "Bash", `{"command":"ls"}`)
	req.Action.Digest = "sha256:0000"
	_, err := f.router.Ask(ctx, "p", req, "")
	assert.Contains(t, detailOf(t, err, "action.digest"), "does not match")

	_, err = f.router.Ask(ctx, "p", toolApproval("r1", "Bash", `["ls"]`), "")
	assert.Contains(t, detailOf(t, err, "action.input"), "must be a JSON object")

	big := `{"command":"` + strings.Repeat("x", domain.MaxActionInput) + `"}`
	_, err = f.router.Ask(ctx, "p", toolApproval("r1", "Bash", big), "")
	assert.Contains(t, detailOf(t, err, "action.input"), "at most 256 KiB")

	_, err = f.router.Ask(ctx, "p", toolApproval("r1", "", `{}`), "")
	assert.Contains(t, detailOf(t, err, "action.tool"), "required")

	req = toolApproval("r1", "Bash", `{"command":"ls"}`)
	req.Kind = domain.KindQuestion
	_, err = f.router.Ask(ctx, "p", req, "")
	assert.Contains(t, detailOf(t, err, "action"), "only an approval")
}

// TestSameTextOtherActionIsANewQuestion: two approvals reading alike but
// for different commands are not re-attached to each other.
func TestSameTextOtherActionIsANewQuestion(t *testing.T) {
	f := newFixture(t, "")
	a, err := f.router.Ask(ctx, "p", toolApproval("r1", "Bash", `{"command":"ls"}`), "")
	require.NoError(t, err)
	b, err := f.router.Ask(ctx, "p", toolApproval("r1", "Bash", `{"command":"rm -rf /"}`), "")
	require.NoError(t, err)
	assert.NotEqual(t, a.Question.ID, b.Question.ID)
}

// TestEditBeforeApprove: a person approves the action with other
// arguments; the agent's decision carries them, the record keeps both
// versions, and the audit trail says who edited what.
func TestEditBeforeApprove(t *testing.T) {
	f := newFixture(t, "")
	res, err := f.router.Ask(ctx, "p", toolApproval("r1", "Bash", `{"command": "rm -rf build", "description": "clean"}`), "")
	require.NoError(t, err)
	asked := res.Question.Action
	req := domain.RespondRequest{EditedInput: json.RawMessage(`{"command":"rm -rf build/tmp","description":"clean"}`), Digest: asked.Digest}
	q, err := f.router.Answer(ctx, "p", res.Question.ID, req, slackP("alice"))
	require.NoError(t, err)
	require.NotNil(t, q.Decision)
	assert.Equal(t, "allow", q.Decision.Behavior)
	assert.True(t, q.Decision.Edited)
	assert.JSONEq(t, `{"command":"rm -rf build/tmp","description":"clean"}`, string(q.Decision.Input))
	require.NotNil(t, q.EditedAction)
	assert.Equal(t, q.Decision.Digest, q.EditedAction.Digest)
	assert.NotEqual(t, asked.Digest, q.Decision.Digest)
	assert.Equal(t, "alice", q.EditedAction.By.ID)
	assert.JSONEq(t, `{"command":"rm -rf build","description":"clean"}`, string(q.Action.Input), "the asked action stays as asked")
	assert.Equal(t, "Allow", q.Answers["Allow Bash?"])

	trail, err := f.store.Audit(ctx, "p", q.ID, 0)
	require.NoError(t, err)
	var edited *domain.AuditEntry
	for i := range trail {
		if trail[i].Type == "edited" {
			edited = &trail[i]
		}
	}
	require.NotNil(t, edited, "an edited line in the audit trail")
	assert.Equal(t, "alice", edited.By.ID)
	assert.Contains(t, edited.Detail, `"original":{"tool":"Bash","input":{"command":"rm -rf build","description":"clean"}`)
	assert.Contains(t, edited.Detail, `"edited":{"tool":"Bash","input":{"command":"rm -rf build/tmp","description":"clean"}`)
}

func TestPlainAllowAndDenyDecisions(t *testing.T) {
	f := newFixture(t, "")
	res, err := f.router.Ask(ctx, "p", toolApproval("r1", "Bash", `{"command":"ls"}`), "")
	require.NoError(t, err)
	q, err := f.router.Answer(ctx, "p", res.Question.ID, pick("allow"), slackP("alice"))
	require.NoError(t, err)
	assert.Equal(t, &domain.Decision{Behavior: "allow", Digest: res.Question.Action.Digest, Input: json.RawMessage(`{"command":"ls"}`)}, q.Decision)
	assert.Nil(t, q.EditedAction)

	res, err = f.router.Ask(ctx, "p", toolApproval("r2", "Bash", `{"command":"ls"}`), "")
	require.NoError(t, err)
	q, err = f.router.Answer(ctx, "p", res.Question.ID, pick("Deny"), slackP("bob"))
	require.NoError(t, err)
	assert.Equal(t, "deny", q.Decision.Behavior)
	assert.Equal(t, "Denied by bob.", q.Decision.Message)
	assert.Empty(t, q.Decision.Input)
}

// TestReasonDeniesInOneStep: reason alone denies, and reaches the agent.
func TestReasonDeniesInOneStep(t *testing.T) {
	f := newFixture(t, "")
	res, err := f.router.Ask(ctx, "p", toolApproval("r1", "Bash", `{"command":"rm -rf build"}`), "")
	require.NoError(t, err)
	reason := "use make clean instead"
	q, err := f.router.Answer(ctx, "p", res.Question.ID, domain.RespondRequest{Reason: &reason}, slackP("alice"))
	require.NoError(t, err)
	assert.Equal(t, "deny", q.Decision.Behavior)
	assert.Equal(t, "use make clean instead", q.Decision.Message)
	assert.Equal(t, "Deny", q.Response, "the answer is the Deny option")
	assert.Equal(t, "use make clean instead", q.Reason)

	// A reason that reads like an option still denies, kept as typed.
	res, err = f.router.Ask(ctx, "p", toolApproval("r2", "Bash", `{"command":"ls"}`), "")
	require.NoError(t, err)
	allow := "Allow"
	q, err = f.router.Answer(ctx, "p", res.Question.ID, domain.RespondRequest{Reason: &allow}, slackP("alice"))
	require.NoError(t, err)
	assert.Equal(t, "deny", q.Decision.Behavior)
	assert.Equal(t, "Allow", q.Decision.Message)
	assert.Equal(t, "Allow", q.Reason)

	// Reason on a plain question is refused in plain words.
	res, err = f.router.Ask(ctx, "p", &domain.AskRequest{RunID: "r3", Question: "Which?", Options: []domain.Option{{Label: "A"}, {Label: "B"}}}, "")
	require.NoError(t, err)
	_, err = f.router.Answer(ctx, "p", res.Question.ID, domain.RespondRequest{Reason: &reason}, slackP("alice"))
	assert.Contains(t, detailOf(t, err, "reason"), "only an approval takes reason")
}

// TestDigestMismatchIsAConflict: a decision made on another action than
// the record's is refused, not applied.
func TestDigestMismatchIsAConflict(t *testing.T) {
	f := newFixture(t, "")
	res, err := f.router.Ask(ctx, "p", toolApproval("r1", "Bash", `{"command":"ls"}`), "")
	require.NoError(t, err)
	allow := "Allow"
	_, err = f.router.Answer(ctx, "p", res.Question.ID, domain.RespondRequest{Response: &allow, Digest: "sha256:beef"}, slackP("alice"))
	assert.Equal(t, domain.EConflict, domain.ErrorCode(err))
	assert.Contains(t, detailOf(t, err, "digest"), "reload the question")
	q, err := f.store.Get(ctx, "p", res.Question.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusPending, q.Status)
}

// TestChosenRuleAndNoEditRoute: a chosen suggestion is returned as the
// decision's rule; a route with allow_edit: false refuses edits.
func TestChosenRuleAndNoEditRoute(t *testing.T) {
	f := newFixture(t, "", domain.Route{Name: "strict", NoEdit: true})
	sugg := []string{`{"type":"addDirectories","directories":["/home/dev/proj/build"],"destination":"session"}`, `{"type":"setMode","mode":"acceptEdits","destination":"session"}`}
	res, err := f.router.Ask(ctx, "p", toolApproval("r1", "Bash", `{"command":"ls"}`, sugg...), "")
	require.NoError(t, err)
	_, err = f.router.Answer(ctx, "p", res.Question.ID, domain.RespondRequest{Rule: intp(2)}, slackP("alice"))
	assert.Contains(t, detailOf(t, err, "rule"), "0 to 1")
	q, err := f.router.Answer(ctx, "p", res.Question.ID, domain.RespondRequest{Rule: intp(1)}, slackP("alice"))
	require.NoError(t, err)
	assert.Equal(t, "allow", q.Decision.Behavior)
	require.Len(t, q.Decision.Rules, 1)
	assert.JSONEq(t, sugg[1], string(q.Decision.Rules[0]))
	assert.Equal(t, 1, *q.AppliedRule)

	req := toolApproval("r2", "Bash", `{"command":"ls"}`)
	req.Route = "strict"
	res, err = f.router.Ask(ctx, "p", req, "")
	require.NoError(t, err)
	_, err = f.router.Answer(ctx, "p", res.Question.ID, domain.RespondRequest{EditedInput: json.RawMessage(`{"command":"pwd"}`)}, slackP("alice"))
	assert.Contains(t, detailOf(t, err, "edited_input"), "allow_edit: false")
	deny := "Deny"
	_, err = f.router.Answer(ctx, "p", res.Question.ID, domain.RespondRequest{Response: &deny, Rule: intp(0)}, slackP("alice"))
	assert.Error(t, err)
}

func intp(v int) *int { return &v }

// TestDefaultOnTimeoutDecides: an approval answered by on_timeout carries
// the decision too, so agents reading decision never miss one.
func TestDefaultOnTimeoutDecides(t *testing.T) {
	f := newFixture(t, "")
	req := toolApproval("r1", "Bash", `{"command":"ls"}`)
	req.OnTimeout = &domain.OnTimeout{Answer: "Deny"}
	res, err := f.router.Ask(ctx, "p", req, "")
	require.NoError(t, err)
	f.clock.add(domain.DefaultTimeout + time.Second)
	_, err = f.router.ExpireDue(ctx)
	require.NoError(t, err)
	q, err := f.store.Get(ctx, "p", res.Question.ID)
	require.NoError(t, err)
	require.NotNil(t, q.Decision)
	assert.Equal(t, "deny", q.Decision.Behavior)
	assert.Equal(t, "No answer in time: denied by default (on_timeout).", q.Decision.Message)
}

// TestActionAllowEditFalse: an agent whose framework cannot run edited
// arguments sends action.allow_edit: false; edited_input is then refused
// naming the field, nothing is recorded, and Allow still works.
func TestActionAllowEditFalse(t *testing.T) {
	f := newFixture(t, "")
	req := toolApproval("r1", "deploy", `{"env":"prod"}`)
	no := false
	req.Action.AllowEdit = &no
	res, err := f.router.Ask(ctx, "p", req, "")
	require.NoError(t, err)
	require.NotNil(t, res.Question.Action.AllowEdit)
	assert.False(t, domain.EditAllowed(res.Question, false))
	_, err = f.router.Answer(ctx, "p", res.Question.ID, domain.RespondRequest{EditedInput: json.RawMessage(`{"env":"staging"}`)}, slackP("alice"))
	assert.Equal(t, domain.EInvalidAnswer, domain.ErrorCode(err))
	assert.Contains(t, detailOf(t, err, "edited_input"), "cannot run edited arguments")
	q, err := f.store.Get(ctx, "p", res.Question.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusPending, q.Status)
	allow := "Allow"
	q, err = f.router.Answer(ctx, "p", res.Question.ID, domain.RespondRequest{Response: &allow}, slackP("alice"))
	require.NoError(t, err)
	assert.Equal(t, "allow", q.Decision.Behavior)
	assert.JSONEq(t, `{"env":"prod"}`, string(q.Decision.Input))

	// Without the flag, editing follows the route (allowed here).
	res, err = f.router.Ask(ctx, "p", toolApproval("r2", "deploy", `{"env":"prod"}`), "")
	require.NoError(t, err)
	assert.Nil(t, res.Question.Action.AllowEdit)
	assert.True(t, domain.EditAllowed(res.Question, false))
	assert.False(t, domain.EditAllowed(res.Question, true))
}
