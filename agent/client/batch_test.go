package client_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAskBatchWaitBatch: three calls asked in one request are one batch;
// WaitBatch returns once every call is decided, each with its own
// decision, and a WaitBatch whose context ends leaves them pending.
func TestAskBatchWaitBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the bridge")
	}
	srv := bridgetest.Serve(t)
	c := client.New(srv.URL, "", "demo", client.WithPollTimeout(time.Second))
	ctx := t.Context()
	calls := make([]domain.BatchCall, 3)
	for i := range calls {
		calls[i].Action = &domain.Action{Tool: "deploy", Input: json.RawMessage(`{"env":"e` + string(rune('1'+i)) + `"}`), CallID: "call-" + string(rune('1'+i))}
	}
	asked, err := c.AskBatch(ctx, &domain.BatchRequest{RunID: "turn-1", Approvals: calls})
	require.NoError(t, err)
	require.Len(t, asked.Calls, 3)
	assert.Equal(t, 3, asked.Pending)
	for _, q := range asked.Calls {
		assert.Equal(t, asked.ID, q.BatchID, "one batch")
	}

	short, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	b, err := c.WaitBatch(short, asked.ID)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotNil(t, b, "the last batch seen comes back with the error")
	assert.Equal(t, 3, b.Pending, "the calls stay pending")

	reason := "not e2"
	_, err = c.Respond(ctx, asked.Calls[1].ID, domain.RespondRequest{Reason: &reason})
	require.NoError(t, err)
	done := make(chan *domain.Batch, 1)
	go func() {
		b, err := c.WaitBatch(ctx, asked.ID)
		assert.NoError(t, err)
		done <- b
	}()
	time.Sleep(300 * time.Millisecond)
	_, err = c.DecideBatch(ctx, asked.ID, domain.BatchRespondRequest{Decision: domain.DecideAllow})
	require.NoError(t, err)
	b = <-done
	assert.Equal(t, domain.BatchDecided, b.Status)
	var got []string
	for _, q := range b.Questions {
		got = append(got, q.Action.CallID+":"+q.Decision.Behavior)
	}
	assert.Equal(t, []string{"call-1:allow", "call-2:deny", "call-3:allow"}, got)
}
