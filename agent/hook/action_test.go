package hook_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/hook"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// permissionRequest is the captured Bash PermissionRequest in a session
// of its own, with a transcript holding its tool call.
func permissionRequest(t *testing.T, session string) event {
	perm := fixture(t, "permissionrequest-bash.json")
	perm["session_id"] = session
	tr := newTranscriptFile(t)
	tr.append(t, toolUseLine(t, "toolu_"+session, "Bash", perm.input()))
	perm["transcript_path"] = tr.path
	return perm
}

// TestBashPermissionRequestAlwaysAllow: the captured Bash
// PermissionRequest is asked with its whole action and both suggestions;
// the person allows with the second one, and Claude Code gets it back as
// updatedPermissions, in the format PermissionRequest accepts.
func TestBashPermissionRequestAlwaysAllow(t *testing.T) {
	srv, c := serve(t)
	perm := permissionRequest(t, "always-allow")
	ch := inProcess(t, srv, perm.json(t))
	q := pendingOn(t, c, 1)
	require.NotNil(t, q.Action, "the approval carries the tool call")
	assert.Equal(t, "Bash", q.Action.Tool)
	assert.JSONEq(t, `{"command":"rm -rf build","description":"Remove the build directory"}`, string(q.Action.Input))
	require.Len(t, q.Action.Suggestions, 2)
	assert.JSONEq(t, `{"type":"setMode","mode":"acceptEdits","destination":"session"}`, string(q.Action.Suggestions[1]))

	rule := 1
	_, err := c.Respond(t.Context(), q.ID, domain.RespondRequest{Rule: &rule, Digest: q.Action.Digest})
	require.NoError(t, err)
	r := finished(t, ch, 20*time.Second)
	require.Equal(t, hook.ExitOK, r.code, r.stderr)
	assert.JSONEq(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow",`+
		`"updatedPermissions":[{"type":"setMode","mode":"acceptEdits","destination":"session"}]}}}`, r.stdout)
}

// TestBashPermissionRequestEdited: a person fixes the command before
// approving; Claude Code runs the edited one (updatedInput).
func TestBashPermissionRequestEdited(t *testing.T) {
	srv, c := serve(t)
	ch := inProcess(t, srv, permissionRequest(t, "edited").json(t))
	q := pendingOn(t, c, 1)
	_, err := c.Respond(t.Context(), q.ID, domain.RespondRequest{
		EditedInput: json.RawMessage(`{"command":"rm -rf build/tmp","description":"Remove the build directory"}`)})
	require.NoError(t, err)
	r := finished(t, ch, 20*time.Second)
	require.Equal(t, hook.ExitOK, r.code, r.stderr)
	assert.JSONEq(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow",`+
		`"updatedInput":{"command":"rm -rf build/tmp","description":"Remove the build directory"}}}}`, r.stdout)

	trail, err := c.Audit(t.Context(), q.ID)
	require.NoError(t, err)
	var types []string
	for _, e := range trail {
		types = append(types, e.Type)
	}
	assert.Contains(t, types, "edited")
}

// TestPreToolUseEditedAndReason: PreToolUse approvals take the edit as
// updatedInput, and a one-step reason as permissionDecisionReason.
func TestPreToolUseEditedAndReason(t *testing.T) {
	srv, c := serve(t)
	pre := fixture(t, "pretooluse-bash.json")
	pre["session_id"], pre["tool_use_id"] = "pre-edit", "toolu_pre_edit"
	ch := inProcess(t, srv, pre.json(t), "--approve", "Bash(rm *)")
	q := pendingOn(t, c, 1)
	_, err := c.Respond(t.Context(), q.ID, domain.RespondRequest{EditedInput: json.RawMessage(`{"command":"rm -rf build/cache"}`)})
	require.NoError(t, err)
	r := finished(t, ch, 20*time.Second)
	var out struct {
		H hook.PreToolUseOutput `json:"hookSpecificOutput"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	assert.Equal(t, "allow", out.H.PermissionDecision)
	assert.Equal(t, map[string]any{"command": "rm -rf build/cache"}, out.H.UpdatedInput)

	pre["session_id"], pre["tool_use_id"] = "pre-reason", "toolu_pre_reason"
	ch = inProcess(t, srv, pre.json(t), "--approve", "Bash(rm *)")
	q = pendingOn(t, c, 1)
	reason := "run make clean instead"
	_, err = c.Respond(t.Context(), q.ID, domain.RespondRequest{Reason: &reason})
	require.NoError(t, err)
	r = finished(t, ch, 20*time.Second)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	assert.Equal(t, "deny", out.H.PermissionDecision)
	assert.Contains(t, out.H.PermissionDecisionReason, `who said: "run make clean instead"`)
}
