package api_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCancelKeepsTheNote: the reason code plus a free-text note, kept on
// the record every endpoint returns; free text in reason is refused with a
// pointer to note.
func TestCancelKeepsTheNote(t *testing.T) {
	b := newBridge(t, opts{})
	id := b.ask("ops", "", yesNo("run-1"))
	path := "/api/projects/ops/agent-questions/" + id

	r := b.do("POST", path+"/cancel", "", map[string]any{"reason": "no longer needed"})
	require.Equal(t, 400, r.status, string(r.raw))
	assert.Equal(t, []string{"reason"}, r.fields())
	assert.Contains(t, string(r.raw), "note")

	r = b.do("POST", path+"/cancel", "", map[string]any{"reason": "user", "note": strings.Repeat("x", 501)})
	require.Equal(t, 400, r.status, string(r.raw))
	assert.Equal(t, []string{"note"}, r.fields())

	r = b.do("POST", path+"/cancel", "", map[string]any{"reason": "user", "note": "  no longer needed:\n rolled back  "})
	require.Equal(t, 200, r.status, string(r.raw))
	assert.Equal(t, "cancelled", r.body["status"])
	assert.Equal(t, "user", r.body["cancel_reason"])
	assert.Equal(t, "no longer needed: rolled back", r.body["cancel_note"], "one line, trimmed")

	r = b.do("GET", path, "", nil)
	assert.Equal(t, "no longer needed: rolled back", r.body["cancel_note"])
	r = b.do("GET", "/api/projects/ops/agent-questions?status=cancelled", "", nil)
	require.Len(t, r.body["questions"], 1)
	assert.Equal(t, "no longer needed: rolled back", r.body["questions"].([]any)[0].(map[string]any)["cancel_note"])

	// Without a note the record has none.
	id2 := b.ask("ops", "", yesNo("run-2"))
	r = b.do("POST", "/api/projects/ops/agent-questions/"+id2+"/cancel", "", map[string]any{"reason": "agent"})
	require.Equal(t, 200, r.status, string(r.raw))
	assert.NotContains(t, r.body, "cancel_note")
}
