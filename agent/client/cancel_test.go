package client_test

import (
	"testing"

	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCancelWithNoReasonIsTheAgentWithdrawing: the client is the agent's,
// so a cancel that names no reason records the agent withdrawing the
// question, never a person dismissing it (which a bridge without tokens
// would otherwise assume).
func TestCancelWithNoReasonIsTheAgentWithdrawing(t *testing.T) {
	api := fakeapi.New(t, "")
	c := client.New(api.URL, "", "ops")
	ctx := t.Context()
	for _, tc := range []struct{ reason, want string }{
		{"", domain.CancelAgent},
		{domain.CancelAgent, domain.CancelAgent},
		{domain.CancelUser, domain.CancelUser},
	} {
		a, err := c.Ask(ctx, &domain.AskRequest{RunID: "run-" + tc.reason, Question: "Deploy?"})
		require.NoError(t, err)
		q, err := c.CancelWithNote(ctx, a.ID, tc.reason, "")
		require.NoError(t, err)
		assert.Equal(t, tc.want, q.CancelReason, "cancel with reason %q", tc.reason)
	}
}
