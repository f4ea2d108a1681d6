package slack

import (
	"context"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFinishingADeletedCopyIsNotRetried: a person deleted the question's
// message; when the question ends, chat.update answers message_not_found,
// which no retry can fix, so the router tries it once instead of for
// CopyRetryFor.
func TestFinishingADeletedCopyIsNotRetried(t *testing.T) {
	e := newEnv(t, func(_ *Config, rc *lifecycle.RouterConfig) {
		rc.CopyRetryBackoff, rc.CopyRetryFor = time.Millisecond, 500*time.Millisecond
	})
	req := authQuestion()
	req.Targets = req.Targets[:1]
	q := e.ask(req)
	c := e.copyOn(q, "C1")
	require.True(t, e.fake.Delete("C1", c.MessageTS))

	err := e.a.Finish(context.Background(), q, c)
	require.Error(t, err)
	assert.True(t, lifecycle.IsPermanent(err), "message_not_found is permanent: %v", err)

	_, err = e.router.Cancel(context.Background(), "ops", q.ID, "", nil)
	require.NoError(t, err)
	require.NoError(t, e.router.Flush(context.Background()))
	assert.Equal(t, 2, len(e.fake.Calls("chat.update")), "one by hand, one by the router: no retries")
}

func TestTransientSlackFailuresAreNotPermanent(t *testing.T) {
	assert.False(t, lifecycle.IsPermanent(&Error{Method: "chat.update", Code: "ratelimited"}))
	assert.False(t, lifecycle.IsPermanent(&Error{Method: "chat.update", Code: "internal_error"}))
	assert.False(t, lifecycle.IsPermanent(&Error{Method: "chat.update", Err: context.DeadlineExceeded}))
	for _, code := range []string{"message_not_found", "channel_not_found", "is_archived", "not_in_channel",
		"invalid_auth", "account_inactive", "msg_too_long", "invalid_blocks"} {
		assert.True(t, lifecycle.IsPermanent(&Error{Method: "chat.update", Code: code}), code)
	}
}
