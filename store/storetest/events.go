package storetest

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testEvents(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	q := newQ(p, "run-1")
	create(t, s, q)
	_, err := s.Transition(ctx, p, q.ID, answer("a"))
	require.NoError(t, err)
	evs, err := s.Events(ctx, p, "", 10)
	require.NoError(t, err)
	require.Len(t, evs, 2)
	assert.Equal(t, domain.EventCreated, evs[0].Type)
	assert.Equal(t, domain.EventAnswered, evs[1].Type)
	assert.Equal(t, q.ID, evs[1].QuestionID)
	assert.Equal(t, "run-1", evs[1].RunID)
	rest, err := s.Events(ctx, p, evs[0].ID, 10)
	require.NoError(t, err)
	require.Len(t, rest, 1)
	assert.Equal(t, evs[1].ID, rest[0].ID)
	none, err := s.Events(ctx, p, evs[1].ID, 10)
	require.NoError(t, err)
	assert.Empty(t, none)
	_, err = s.Events(ctx, p, "not-an-id", 10)
	assert.Equal(t, domain.EInvalid, domain.ErrorCode(err))
}

func testWatch(t *testing.T, open func() lifecycle.Store) {
	a, b := open(), open()
	p := project()
	q := newQ(p, "run-1")
	create(t, a, q)
	wake, stop := b.Watch(p, q.ID)
	defer stop()
	projWake, stopP := b.Watch(p, "")
	defer stopP()
	_, err := a.Transition(ctx, p, q.ID, answer("a"))
	require.NoError(t, err)
	for _, ch := range []<-chan struct{}{wake, projWake} {
		select {
		case <-ch:
		case <-time.After(3 * time.Second):
			t.Fatal("a watcher on another replica was not woken")
		}
	}
}
