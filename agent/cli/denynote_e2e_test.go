package cli_test

import (
	"fmt"
	"testing"

	"github.com/askbridge/askbridge/adapters/channeltest"
	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestE2EDenyWithNoteOnTheCLI: `questions answer ID 2 -m NOTE` (2 being
// Deny) and `questions answer ID -m NOTE` deny with the note as the
// reason, exactly as typed, whatever it says — the table every surface
// passes (adapters/channeltest).
func TestE2EDenyWithNoteOnTheCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bridge binary")
	}
	srv := bridgetest.Serve(t)
	c := client.New(srv.URL, "", "default")
	local := domain.Person{Platform: "api", ID: "local"}
	for _, withAction := range []bool{false, true} {
		for i, note := range channeltest.DenyNotes(domain.MaxAnswerLen) {
			req := channeltest.NoteApproval(withAction)
			req.RunID, req.AgentID = fmt.Sprintf("cli-note-%t-%d", withAction, i), "bot"
			q, err := c.Ask(t.Context(), &req)
			require.NoError(t, err)
			args := []string{"questions", "answer", q.ID, "2", "-m", note}
			if i%2 == 1 {
				args = []string{"questions", "answer", q.ID, "-m", note}
			}
			r := runBridge(t, srv, args...)
			require.Equal(t, 0, r.code, "%q: %s", domain.Shorten(note, 30), r.stderr.String())
			assert.Equal(t, fmt.Sprintf("denied with a note %q: %s\n", q.Questions[0].Question, note), r.stdout.String())
			got, err := c.Get(t.Context(), q.ID)
			require.NoError(t, err)
			for _, p := range channeltest.DeniedWithNote(got, note, local) {
				t.Errorf("%v: %s", args[3:len(args)-1], p)
			}
		}
	}
	// A note goes with Deny only: option 1 (Allow) with a note is refused,
	// and nothing is decided.
	req := channeltest.NoteApproval(true)
	req.RunID, req.AgentID = "cli-note-allow", "bot"
	q, err := c.Ask(t.Context(), &req)
	require.NoError(t, err)
	r := runBridge(t, srv, "questions", "answer", q.ID, "1", "-m", "fine")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr.String(), "a note goes with Deny (it is the agent's reason), not with Allow")
	got, err := c.Get(t.Context(), q.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusPending, got.Status)
}
