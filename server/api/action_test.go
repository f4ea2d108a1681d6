package api_test

import (
	"encoding/json"
	"testing"

	"github.com/askbridge/askbridge/domain"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestApprovalWithJSONArguments: an API agent asks to run a tool with a
// JSON argument object; the record shows it in full with its digest; a
// person edits one argument and approves; the agent reads the decision
// with the edited arguments. Every response is checked against the spec.
func TestApprovalWithJSONArguments(t *testing.T) {
	b := newBridge(t, opts{})
	args := map[string]any{"service": "api", "replicas": 3, "regions": []any{"eu-west-1", "us-east-1"},
		"env": map[string]any{"LOG_LEVEL": "debug", "FEATURE_X": true}}
	r := b.do("POST", "/api/projects/ops/agent-questions", "", map[string]any{
		"run_id": "run-1", "question": "Scale the api service?", "options": []map[string]any{{"label": "Allow"}, {"label": "Deny"}},
		"action": map[string]any{"tool": "deploy.scale", "input": args}})
	require.Equal(t, 201, r.status, string(r.raw))
	assert.Equal(t, "approval", r.body["kind"])
	action := r.body["action"].(map[string]any)
	assert.Equal(t, args["regions"], action["input"].(map[string]any)["regions"], "the whole argument object is kept")
	assert.Equal(t, map[string]any{"LOG_LEVEL": "debug", "FEATURE_X": true}, action["input"].(map[string]any)["env"])
	digest := action["digest"].(string)
	assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, digest)
	id := r.body["id"].(string)

	// A decision made on another action is a conflict.
	r = b.do("POST", "/api/projects/ops/agent-questions/"+id+"/respond", "", map[string]any{"response": "Allow", "digest": "sha256:00"})
	assert.Equal(t, 409, r.status, string(r.raw))
	assert.Equal(t, "conflict", r.code())
	assert.Equal(t, []string{"digest"}, r.fields())

	// An edit that is not an object is refused in plain words.
	r = b.do("POST", "/api/projects/ops/agent-questions/"+id+"/respond", "", map[string]any{"edited_input": "replicas=2"})
	assert.Equal(t, 400, r.status, string(r.raw))

	edited := map[string]any{"service": "api", "replicas": 2, "regions": []any{"eu-west-1"}, "env": map[string]any{"LOG_LEVEL": "info"}}
	r = b.do("POST", "/api/projects/ops/agent-questions/"+id+"/respond", "", map[string]any{"edited_input": edited, "digest": digest,
		"responded_by": "alice"})
	require.Equal(t, 202, r.status, string(r.raw))

	r = b.do("GET", "/api/projects/ops/agent-questions/"+id, "", nil)
	require.Equal(t, 200, r.status)
	d := r.body["decision"].(map[string]any)
	assert.Equal(t, "allow", d["behavior"])
	assert.Equal(t, true, d["edited"])
	assert.Equal(t, map[string]any{"service": "api", "replicas": float64(2), "regions": []any{"eu-west-1"}, "env": map[string]any{"LOG_LEVEL": "info"}}, d["input"])
	ea := r.body["edited_action"].(map[string]any)
	assert.Equal(t, d["digest"], ea["digest"])
	assert.NotEqual(t, digest, ea["digest"])
	assert.Equal(t, "alice", ea["by"].(map[string]any)["id"])
	assert.Equal(t, float64(3), r.body["action"].(map[string]any)["input"].(map[string]any)["replicas"], "the original stays")
}

// TestApprovalReasonAndBadAction: reject with a reason in one step; an
// ask with a bad action names the field.
func TestApprovalReasonAndBadAction(t *testing.T) {
	b := newBridge(t, opts{})
	r := b.do("POST", "/api/projects/ops/agent-questions", "", map[string]any{
		"run_id": "run-1", "question": "Run it?", "options": []map[string]any{{"label": "Allow"}, {"label": "Deny"}},
		"action": map[string]any{"tool": "Bash", "input": "rm -rf /"}})
	assert.Equal(t, 400, r.status)
	assert.Contains(t, r.fields(), "action.input")

	id := b.ask("ops", "", map[string]any{"run_id": "run-1", "question": "Run it?", "options": []map[string]any{{"label": "Allow"}, {"label": "Deny"}},
		"action": map[string]any{"tool": "Bash", "input": map[string]any{"command": "rm -rf build"}}})
	r = b.do("POST", "/api/projects/ops/agent-questions/"+id+"/respond", "", map[string]any{"reason": "use make clean"})
	require.Equal(t, 202, r.status, string(r.raw))
	r = b.do("GET", "/api/projects/ops/agent-questions/"+id, "", nil)
	assert.Equal(t, map[string]any{"behavior": "deny", "digest": r.body["action"].(map[string]any)["digest"], "message": "use make clean"}, r.body["decision"])
}

// TestActionWithMarkupCharactersKeepsItsDigest: arguments holding <, > and
// & (a shell redirection, a pipe chain) come back byte for byte as the
// digest was computed on them, so an agent can check the digest, and
// approving them unchanged through edited_input is no edit.
func TestActionWithMarkupCharactersKeepsItsDigest(t *testing.T) {
	b := newBridge(t, opts{})
	input := `{"command":"make test > out.log 2>&1 && grep '<fail>' ./build/out.log"}`
	id := b.ask("ops", "", map[string]any{"run_id": "run-1", "question": "Run it?", "options": []map[string]any{{"label": "Allow"}, {"label": "Deny"}},
		"action": map[string]any{"tool": "Bash", "input": json.RawMessage(input)}})
	r := b.do("GET", "/api/projects/ops/agent-questions/"+id, "", nil)
	require.Equal(t, 200, r.status)
	var rec struct {
		Action domain.Action `json:"action"`
	}
	require.NoError(t, json.Unmarshal(r.raw, &rec))
	assert.Equal(t, input, string(rec.Action.Input), "the arguments as asked, not HTML-escaped")
	assert.Equal(t, domain.ActionDigest("Bash", json.RawMessage(input)), rec.Action.Digest)

	r = b.do("POST", "/api/projects/ops/agent-questions/"+id+"/respond", "", map[string]any{"edited_input": json.RawMessage(input), "digest": rec.Action.Digest})
	require.Equal(t, 202, r.status, string(r.raw))
	r = b.do("GET", "/api/projects/ops/agent-questions/"+id, "", nil)
	d := r.body["decision"].(map[string]any)
	assert.Equal(t, "allow", d["behavior"])
	assert.Nil(t, d["edited"], "the same arguments sent back are no edit")
	assert.Nil(t, r.body["edited_action"])
}
