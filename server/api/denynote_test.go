package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/channeltest"
	"github.com/askbridge/askbridge/domain"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReasonDeniesWithTheNoteAsTyped: respond {"reason": NOTE} records the
// Deny option with NOTE as the record's reason (and decision.message),
// exactly as typed, whatever NOTE says — the table every surface passes
// (adapters/channeltest) — on approvals with and without an action.
func TestReasonDeniesWithTheNoteAsTyped(t *testing.T) {
	b := newBridge(t, opts{})
	local := domain.Person{Platform: "api", ID: "local"}
	for _, withAction := range []bool{false, true} {
		for i, note := range channeltest.DenyNotes(domain.MaxAnswerLen) {
			req := channeltest.NoteApproval(withAction)
			req.RunID = fmt.Sprintf("note-%t-%d", withAction, i)
			var body map[string]any
			raw, _ := json.Marshal(req)
			require.NoError(t, json.Unmarshal(raw, &body))
			id := b.ask("ops", "", body)
			r := b.do("POST", "/api/projects/ops/agent-questions/"+id+"/respond", "", map[string]any{"reason": note})
			require.Equal(t, 202, r.status, string(r.raw))
			r = b.do("GET", "/api/projects/ops/agent-questions/"+id, "", nil)
			var got domain.Question
			require.NoError(t, json.Unmarshal(r.raw, &got))
			for _, p := range channeltest.DeniedWithNote(&got, note, local) {
				t.Errorf("action %t, reason %q: %s", withAction, domain.Shorten(note, 24), p)
			}
		}
	}
}

// TestReasonThatCannotDenyIsRefused: a blank reason, one too long, one
// sent with an answer, one on an approval decided by votes or with no
// option that denies is refused naming reason, and nothing is decided.
func TestReasonThatCannotDenyIsRefused(t *testing.T) {
	b := newBridge(t, opts{})
	two := 2
	cases := []struct {
		name   string
		ask    map[string]any
		body   map[string]any
		saying string
	}{
		{"blank", nil, map[string]any{"reason": "  "}, "say why"},
		{"too long", nil, map[string]any{"reason": strings.Repeat("x", domain.MaxAnswerLen+1)}, "at most 4000 characters"},
		{"with an answer", nil, map[string]any{"reason": "no", "response": "Deny"}, "leave out response"},
		{"votes", map[string]any{"approvals_required": two}, map[string]any{"reason": "no"}, "vote with response"},
		{"no deny option", map[string]any{"options": []map[string]any{{"label": "Ship"}, {"label": "Wait"}, {"label": "Ask Bob"}}},
			map[string]any{"reason": "no"}, "no option of this approval denies"},
	}
	for i, c := range cases {
		ask := map[string]any{"run_id": fmt.Sprintf("r-%d", i), "kind": "approval", "question": "Run it?",
			"options": []map[string]any{{"label": "Allow"}, {"label": "Deny"}}}
		for k, v := range c.ask {
			ask[k] = v
		}
		id := b.ask("ops", "", ask)
		r := b.do("POST", "/api/projects/ops/agent-questions/"+id+"/respond", "", c.body)
		assert.Equal(t, 400, r.status, "%s: %s", c.name, r.raw)
		assert.Contains(t, r.fields(), "reason", c.name)
		assert.Contains(t, string(r.raw), c.saying, c.name)
		r = b.do("GET", "/api/projects/ops/agent-questions/"+id, "", nil)
		assert.Equal(t, "pending", r.body["status"], c.name)
	}
}

// TestAskCannotMakeItsApprovalAllowAtTheDeadline: an ask whose approval
// would be allowed when nobody answers — its own on_timeout naming the
// allow option, or use_defaults with the allow option the default — is
// refused with 400 invalid naming the field and the route setting that
// would do it; nothing is asked.
func TestAskCannotMakeItsApprovalAllowAtTheDeadline(t *testing.T) {
	b := newBridge(t, opts{})
	action := map[string]any{"tool": "Bash", "input": map[string]any{"command": "rm -rf build"}}
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"options": []map[string]any{{"label": "Allow"}, {"label": "Deny"}}, "on_timeout": map[string]any{"answer": "Allow"}}, "on_timeout"},
		{map[string]any{"options": []map[string]any{{"label": "Allow", "default": true}, {"label": "Deny"}}, "on_timeout": map[string]any{"use_defaults": true}},
			"questions[0].options[0].default"},
	} {
		for _, withAction := range []bool{false, true} {
			body := map[string]any{"run_id": "run-1", "kind": "approval", "question": "Run rm -rf build?"}
			for k, v := range c.body {
				body[k] = v
			}
			if withAction {
				body["action"] = action
			}
			r := b.do("POST", "/api/projects/ops/agent-questions", "", body)
			assert.Equal(t, 400, r.status, string(r.raw))
			assert.Equal(t, "invalid", r.code(), string(r.raw))
			assert.Equal(t, []string{c.field}, r.fields(), string(r.raw))
			assert.Contains(t, string(r.raw), `routes[].on_timeout`, "names the route setting")
		}
	}
	r := b.do("GET", "/api/projects/ops/agent-questions?status=pending", "", nil)
	assert.Empty(t, r.body["questions"], "nothing was asked")
}
