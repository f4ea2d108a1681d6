package hook_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/channeltest"
	"github.com/askbridge/askbridge/agent/hook"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDenyWithNoteReachesClaudeCode: a permission prompt denied with a
// note — whatever the note says, the table every surface passes
// (adapters/channeltest) — reaches Claude Code as a denial whose message
// quotes the note as typed.
func TestDenyWithNoteReachesClaudeCode(t *testing.T) {
	srv, c := serve(t)
	for i, note := range channeltest.DenyNotes(domain.MaxAnswerLen) {
		ch := inProcess(t, srv, permissionRequest(t, fmt.Sprintf("deny-note-%d", i)).json(t))
		q := pendingOn(t, c, 1)
		_, err := c.Respond(t.Context(), q.ID, domain.RespondRequest{Reason: &note})
		require.NoError(t, err)
		r := finished(t, ch, 20*time.Second)
		require.Equal(t, hook.ExitOK, r.code, r.stderr)
		var out struct {
			H hook.PermissionRequestOutput `json:"hookSpecificOutput"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
		assert.Equal(t, "deny", out.H.Decision.Behavior, "note %q", note)
		assert.Equal(t, "Denied by api:local via askbridge, who said: "+strconv.Quote(note), out.H.Decision.Message, "note %q", note)
		got, err := c.Get(t.Context(), q.ID)
		require.NoError(t, err)
		assert.Equal(t, note, got.Reason, "the record's reason")
	}
}
