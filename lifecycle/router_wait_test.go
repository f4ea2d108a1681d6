package lifecycle_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flakyStore reports the store unavailable while down is set, and lets the
// test wake watchers itself.
type flakyStore struct {
	lifecycle.Store
	down atomic.Bool
	wake chan struct{}
}

func (f *flakyStore) Get(ctx context.Context, project, id string) (*domain.Question, error) {
	if f.down.Load() {
		return nil, &domain.Error{Code: domain.EUnavailable, Message: "the store is unavailable: connection refused"}
	}
	return f.Store.Get(ctx, project, id)
}

func (f *flakyStore) Watch(string, string) (<-chan struct{}, func()) { return f.wake, func() {} }

// TestWaitRidesOutAStoreOutage: a waiter whose store goes away for a while
// keeps waiting instead of failing, and gets the answer once the store is
// back.
func TestWaitRidesOutAStoreOutage(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{})
	require.NoError(t, err)
	defer st.Close()
	fs := &flakyStore{Store: st, wake: make(chan struct{}, 1)}
	r := lifecycle.NewRouter(lifecycle.RouterConfig{Store: fs})
	res, err := r.Ask(ctx, "p", &domain.AskRequest{RunID: "r", Question: "Go?"}, "")
	require.NoError(t, err)
	id := res.Question.ID

	type out struct {
		q   *domain.Question
		err error
	}
	done := make(chan out, 1)
	go func() {
		q, err := r.Wait(ctx, "p", id, time.Minute)
		done <- out{q, err}
	}()
	time.Sleep(50 * time.Millisecond)
	fs.down.Store(true)
	fs.wake <- struct{}{} // woken while the store is down
	select {
	case o := <-done:
		t.Fatalf("Wait gave up during the outage: %v %v", o.q, o.err)
	case <-time.After(200 * time.Millisecond):
	}
	_, err = r.Answer(ctx, "p", id, domain.RespondRequest{Response: ptr("yes")}, domain.Person{Platform: "api", ID: "u"})
	require.Error(t, err, "answers fail loudly while the store is down")
	fs.down.Store(false)
	_, err = r.Answer(ctx, "p", id, domain.RespondRequest{Response: ptr("yes")}, domain.Person{Platform: "api", ID: "u"})
	require.NoError(t, err)
	fs.wake <- struct{}{} // the subscriber is back and wakes everyone
	select {
	case o := <-done:
		require.NoError(t, o.err)
		assert.Equal(t, domain.StatusAnswered, o.q.Status)
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter did not get the answer after the outage")
	}
}
func ptr(s string) *string { return &s }
