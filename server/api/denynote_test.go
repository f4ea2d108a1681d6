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
