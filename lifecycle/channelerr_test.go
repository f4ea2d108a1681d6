package lifecycle_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPermanentMarksAnErrorThroughWrapping(t *testing.T) {
	base := errors.New("message_not_found")
	assert.False(t, lifecycle.IsPermanent(base))
	assert.False(t, lifecycle.IsPermanent(nil))
	assert.NoError(t, lifecycle.Permanent(nil))
	p := lifecycle.Permanent(base)
	assert.True(t, lifecycle.IsPermanent(p))
	assert.True(t, lifecycle.IsPermanent(fmt.Errorf("finishing: %w", p)), "seen through wrapping")
	assert.ErrorIs(t, p, base, "the cause stays reachable")
	assert.Equal(t, "message_not_found", p.Error(), "the text is the cause's, unchanged")
	assert.True(t, lifecycle.IsPermanent(ownPermanent{true}), "an adapter's own error type can say so")
	assert.False(t, lifecycle.IsPermanent(ownPermanent{false}))
}

type ownPermanent struct{ p bool }

func (e ownPermanent) Error() string   { return "own" }
func (e ownPermanent) Permanent() bool { return e.p }

// gone fails every Finish as a platform does for a deleted message.
type gone struct {
	recorder
	attempts atomic.Int32
}

func (g *gone) Finish(context.Context, *domain.Question, domain.Target) error {
	g.attempts.Add(1)
	return lifecycle.Permanent(errors.New("slack chat.update: message_not_found"))
}

// TestFinishingADeletedCopyIsTriedOnce: a failure the channel marks
// permanent is not retried for CopyRetryFor (it cannot succeed) and is
// logged once.
func TestFinishingADeletedCopyIsTriedOnce(t *testing.T) {
	st, err := store.Open(ctx, store.Options{})
	require.NoError(t, err)
	defer st.Close()
	var logs bytes.Buffer
	ch := &gone{recorder: recorder{platform: "slack", clock: &clock{now: time.Now()}}}
	r := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st, Channels: []lifecycle.Channel{ch},
		CopyRetryBackoff: time.Millisecond, CopyRetryFor: 300 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	res, err := r.Ask(ctx, "ops", &domain.AskRequest{RunID: "r1", Question: "Go?", Targets: []domain.Target{{Platform: "slack", Channel: "C1"}}}, "")
	require.NoError(t, err)
	_, err = r.Answer(ctx, "ops", res.Question.ID, pick("yes"), slackP("alice"))
	require.NoError(t, err)
	require.NoError(t, r.Flush(ctx))
	assert.Equal(t, int32(1), ch.attempts.Load(), "a permanent failure is tried once")
	assert.Equal(t, 1, strings.Count(logs.String(), "message_not_found"), "and logged once:\n%s", logs.String())
}
