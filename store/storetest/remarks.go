package storetest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testRemarks: a remark on a pending question is kept with the record
// (replacing one of its kind, the newest MaxRemarks kept, a repeat
// changing nothing), wakes watchers on other replicas, survives copies
// attached and the transition, and is refused on a final question without
// touching it.
func testRemarks(t *testing.T, open func() lifecycle.Store) {
	a, b := open(), open()
	p := project()
	q := newQ(p, "run-1")
	q.Targets = []domain.Target{{Platform: "slack", Channel: "C1"}}
	create(t, a, q)
	require.NoError(t, a.AttachCopy(ctx, p, q.ID, domain.Target{Platform: "slack", Channel: "C1", MessageTS: "171.1"}))

	at := time.Date(2026, 3, 1, 3, 14, 5, 123456789, time.UTC)
	ack := domain.Remark{Kind: "page.acknowledged", Text: "Acknowledged by Ana <ana@x> in the pager at 03:14 UTC", By: "Ana <ana@x>", At: at}
	wake, stop := b.Watch(p, q.ID)
	defer stop()
	got, changed, err := a.Remark(ctx, p, q.ID, ack)
	require.NoError(t, err)
	assert.True(t, changed)
	require.Equal(t, []domain.Remark{ack}, got.Remarks)
	select {
	case <-wake:
	case <-time.After(3 * time.Second):
		t.Fatal("a watcher on another replica was not woken by a remark")
	}
	got, err = b.Get(ctx, p, q.ID)
	require.NoError(t, err)
	assert.Equal(t, []domain.Remark{ack}, got.Remarks, "another replica reads the remark")
	assert.Equal(t, domain.StatusPending, got.Status)
	assert.Equal(t, "171.1", got.Targets[0].MessageTS, "the copy is kept")

	// The pager repeats itself: nothing changes.
	got, changed, err = b.Remark(ctx, p, q.ID, ack)
	require.NoError(t, err)
	assert.False(t, changed)
	assert.Len(t, got.Remarks, 1)

	// A newer remark of the same kind replaces it; other kinds add up, the
	// oldest going beyond the bound; texts are cut to theirs.
	ack2 := ack
	ack2.By, ack2.Text, ack2.At = "Bob", "Acknowledged by Bob", at.Add(time.Minute)
	_, changed, err = a.Remark(ctx, p, q.ID, ack2)
	require.NoError(t, err)
	assert.True(t, changed)
	for i := range domain.MaxRemarks {
		_, _, err = a.Remark(ctx, p, q.ID, domain.Remark{Kind: fmt.Sprint("k", i), Text: strings.Repeat("é", 2*domain.MaxRemarkText), At: at})
		require.NoError(t, err)
	}
	got, err = a.Get(ctx, p, q.ID)
	require.NoError(t, err)
	require.Len(t, got.Remarks, domain.MaxRemarks)
	assert.Equal(t, "k0", got.Remarks[0].Kind, "the oldest went: %+v", got.Remarks)
	assert.Equal(t, fmt.Sprint("k", domain.MaxRemarks-1), got.Remarks[domain.MaxRemarks-1].Kind)
	assert.Equal(t, domain.MaxRemarkText, len([]rune(got.Remarks[0].Text)))

	// Remarks of two replicas at the same moment are both kept.
	for i := range 20 {
		q2 := newQ(p, fmt.Sprint("run-c", i))
		create(t, a, q2)
		var wg sync.WaitGroup
		for j, s := range []lifecycle.Store{a, b} {
			wg.Go(func() {
				_, _, err := s.Remark(ctx, p, q2.ID, domain.Remark{Kind: fmt.Sprint("kind", j), Text: "x", At: at})
				assert.NoError(t, err)
			})
		}
		wg.Wait()
		got, err := a.Get(ctx, p, q2.ID)
		require.NoError(t, err)
		require.Len(t, got.Remarks, 2, "round %d", i)
	}

	// A copy attached after the remarks, then the answer: both keep them.
	require.NoError(t, a.AttachCopy(ctx, p, q.ID, domain.Target{Platform: "slack", Channel: "C1", MessageTS: "171.9"}))
	final, err := b.Transition(ctx, p, q.ID, answer("a"))
	require.NoError(t, err)
	assert.Len(t, final.Remarks, domain.MaxRemarks)
	assert.Equal(t, "171.9", final.Targets[0].MessageTS)

	// On a final question a remark changes nothing and says why.
	got, changed, err = a.Remark(ctx, p, q.ID, domain.Remark{Kind: "late", Text: "too late", At: at})
	assert.Equal(t, domain.EAlreadyAnswered, domain.ErrorCode(err), "%v", err)
	assert.False(t, changed)
	require.NotNil(t, got)
	again, err := b.Get(ctx, p, q.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusAnswered, again.Status)
	assert.Equal(t, "yes", again.Response)
	assert.Equal(t, final.Remarks, again.Remarks)

	_, _, err = a.Remark(ctx, p, "no-such-question", ack)
	assert.Equal(t, domain.ENotFound, domain.ErrorCode(err))
}
