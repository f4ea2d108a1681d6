package hook_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestThreeConcurrentPermissionRequests: Claude Code runs the hooks of
// three parallel Bash calls at once, three `askbridge hook claude-code`
// processes with three PermissionRequests of one session. Every approval
// must reach a person and each hook get its own call's decision: none may
// be cancelled as superseded by its siblings.
func TestThreeConcurrentPermissionRequests(t *testing.T) {
	srv, c := serve(t)
	var hooks []*hookRun
	for i := 1; i <= 3; i++ {
		perm := fixture(t, "permissionrequest-bash.json")
		perm["session_id"] = "parallel-session"
		perm.input()["command"] = fmt.Sprintf("rm -rf build%d", i)
		hooks = append(hooks, startHook(t, srv, perm.json(t), "--timeout", "1m"))
	}
	pendingOn(t, c, 3)
	time.Sleep(300 * time.Millisecond) // any supersede would have happened by now
	qs, err := c.RunQuestions(t.Context(), "parallel-session")
	require.NoError(t, err)
	require.Len(t, qs, 3)
	byCommand := map[string]*domain.Question{}
	for _, q := range qs {
		assert.Equal(t, domain.StatusPending, q.Status, "%s: %s %s", q.Questions[0].Question, q.Status, q.CancelReason)
		byCommand[q.Questions[0].Question] = q
	}
	assert.Equal(t, qs[0].BatchID, qs[1].BatchID, "asked together: one batch")
	assert.Equal(t, qs[0].BatchID, qs[2].BatchID)

	for i, answer := range []string{"Allow", "Deny", "Allow"} {
		q := byCommand[fmt.Sprintf("Allow Bash: rm -rf build%d?", i+1)]
		require.NotNil(t, q, "approval %d reached people", i+1)
		_, err := c.RespondText(t.Context(), q.ID, answer)
		require.NoError(t, err)
	}
	for i, want := range []string{"allow", "deny", "allow"} {
		h := hooks[i].wait(t)
		assert.Equal(t, 0, h.code, h.errb.String())
		assert.Contains(t, h.output, `"behavior":"`+want+`"`, "hook %d: %s%s", i+1, h.output, h.errb.String())
		assert.NotContains(t, h.errb.String(), "superseded")
	}
}
