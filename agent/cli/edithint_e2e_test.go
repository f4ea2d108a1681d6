package cli_test

import (
	"testing"

	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestE2EShowOffersEditOnlyWhereAnEditIsTaken: `questions show` offers
// --edit only where the bridge would take an edited answer; an action
// that says allow_edit: false (the agent cannot run other arguments) and
// an approval decided by votes get only the deny hint.
func TestE2EShowOffersEditOnlyWhereAnEditIsTaken(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bridge binary")
	}
	srv := bridgetest.Serve(t)
	c := client.New(srv.URL, "", "default")
	no := false

	editable := toolAsk("run-e", "Bash", `{"command":"make deploy"}`)
	fixed := toolAsk("run-f", "Bash", `{"command":"make deploy"}`)
	fixed.Action.AllowEdit = &no
	voted := toolAsk("run-v", "Bash", `{"command":"make deploy"}`)
	two := 2
	voted.ApprovalsRequired = &two

	for _, tc := range []struct {
		name     string
		ask      *domain.AskRequest
		editHint bool
	}{
		{"an action that takes edits", editable, true},
		{"allow_edit false", fixed, false},
		{"two votes needed", voted, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := c.Ask(t.Context(), tc.ask)
			require.NoError(t, err)
			show := runBridge(t, srv, "questions", "show", q.ID)
			require.Equal(t, 0, show.code, show.stderr.String())
			out := show.stdout.String()
			assert.Contains(t, out, "to deny with a reason: askbridge questions answer "+q.ID+` --deny "why"`)
			if tc.editHint {
				assert.Contains(t, out, "to allow with other arguments: askbridge questions answer "+q.ID+" --edit")
				return
			}
			assert.NotContains(t, out, "--edit", "the bridge refuses an edited answer here")
			// What the hint would have led to: the bridge says no.
			r := runBridge(t, srv, "questions", "answer", q.ID, "--edit", "command=make test")
			assert.NotEqual(t, 0, r.code)
		})
	}
}
