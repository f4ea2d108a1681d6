package lifecycle_test

import (
	"context"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestATargetOnAnUnservedPlatformIsRefusedNamingTheServedOnes: nothing is
// stored or posted, and the refusal says which platforms this bridge has.
func TestATargetOnAnUnservedPlatformIsRefusedNamingTheServedOnes(t *testing.T) {
	st, err := store.Open(context.Background(), store.Options{})
	require.NoError(t, err)
	defer st.Close()
	slack := &recorder{platform: "slack", clock: &clock{now: time.Now()}}
	r := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st, Channels: []lifecycle.Channel{slack}})
	_, err = r.Ask(context.Background(), "p", &domain.AskRequest{Question: "Go?",
		Targets: []domain.Target{{Platform: "slack", Channel: "C1"}, {Platform: "discord", Channel: "1"}}}, "")
	var e *domain.Error
	require.ErrorAs(t, err, &e)
	require.Len(t, e.Details, 1)
	assert.Equal(t, "targets[1].platform", e.Details[0].Field)
	assert.Contains(t, e.Details[0].Problem, "slack")
	qs, err := st.List(context.Background(), "p", "", 10)
	require.NoError(t, err)
	assert.Empty(t, qs, "nothing stored")
	assert.Empty(t, slack.get(func() []string { return slack.posted2() }), "nothing posted")
}
