package cli

import (
	"encoding/json"
	"testing"

	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAskOnCallFlags: --approvals, --default and --requested-by reach the
// bridge as approvals_required, on_timeout and requested_by; the answer is
// read from --json as a deploy gate would.
func TestAskOnCallFlags(t *testing.T) {
	api := fakeapi.New(t, "tok")
	ch := runAsync(t.Context(), api, false, "ask", "--approvals", "2", "--default", "Deny",
		"--requested-by", "slack:U0123", "--json", "-q", "Deploy api v2 to production?", "-o", "Approve", "-o", "Deny")
	q := api.WaitPending(t, 1)
	assert.Equal(t, 2, q.ApprovalsRequired)
	require.NotNil(t, q.OnTimeout)
	assert.Equal(t, "Deny", q.OnTimeout.Answer)
	assert.Equal(t, "slack:U0123", q.RequestedBy)

	api.Answer(t, q.ID, []string{"Approve"})
	r := get(t, ch)
	require.Equal(t, ExitOK, r.code, r.stderr)
	var got domain.Question
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	assert.Equal(t, "Approve", got.Answers["Deploy api v2 to production?"])
	assert.Equal(t, 2, got.ApprovalsRequired)
}

func TestAskOnCallFlagErrors(t *testing.T) {
	api := fakeapi.New(t, "tok")
	for _, args := range [][]string{
		{"ask", "-q", "x?", "-o", "a", "-o", "b", "--approvals", "0"},
		{"ask", "-q", "x?", "-o", "a", "-o", "b", "--approvals", "two"},
		{"ask", "-q", "x?", "-o", "a", "-o", "b", "--requested-by", "U0123"},
		{"ask", "-q", "x?", "-o", "a", "-o", "b", "--requested-by", "slack:"},
	} {
		r := runCLI(t.Context(), api, false, args...)
		assert.Equal(t, ExitUsage, r.code, "%v: %s", args, r.stderr)
	}
	assert.Empty(t, api.Requests(), "usage errors never reach the bridge")

	// What only the bridge can check comes back with every problem named.
	r := runCLI(t.Context(), api, false, "ask", "-q", "x?", "-o", "Approve", "-o", "Deny",
		"--default", "Maybe", "--approvals", "99")
	assert.Equal(t, ExitError, r.code)
	assert.Contains(t, r.stderr, `on_timeout.answer: "Maybe" is not one of the options`)
	assert.Contains(t, r.stderr, "approvals_required: from 1 to")
}
