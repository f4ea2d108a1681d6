package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { os.Exit(bridgetest.Main(m)) }

// TestWaitCarriesOnThroughARestart: the bridge restarts (SIGTERM, 2 s
// without a listener, started again on its data directory) while Wait
// long-polls; Wait tells its caller once that it lost the bridge, keeps
// trying, and returns the answer given after the restart.
func TestWaitCarriesOnThroughARestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and restarts the bridge")
	}
	srv := bridgetest.Serve(t)
	var outages atomic.Int32
	c := client.New(srv.URL, "", "demo", client.WithPollTimeout(60*time.Second), client.WithRetryWait(100*time.Millisecond),
		client.WithOutageNotice(func(error, time.Duration) { outages.Add(1) }))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	a, err := c.Ask(ctx, authAsk())
	require.NoError(t, err)
	type result struct {
		q   *domain.Question
		err error
	}
	done := make(chan result, 1)
	go func() {
		q, err := c.Wait(ctx, a.ID)
		done <- result{q, err}
	}()
	time.Sleep(500 * time.Millisecond) // the long-poll is parked on the bridge
	srv.Restart(t, 2*time.Second)
	select {
	case r := <-done:
		t.Fatalf("Wait returned during the restart: %v %v", r.q, r.err)
	default:
	}
	_, err = c.RespondText(ctx, a.ID, "API key")
	require.NoError(t, err)
	r := <-done
	require.NoError(t, r.err)
	assert.Equal(t, domain.StatusAnswered, r.q.Status)
	assert.Equal(t, "API key", r.q.Answers["Which auth method?"])
	assert.Equal(t, int32(1), outages.Load(), "one outage, told once")
}

// TestWaitGivesUpWhenTheBridgeStaysAway: retrying is bounded: a bridge that
// does not come back ends the wait with the error after the unreachable
// limit, instead of hanging its caller for good.
func TestWaitGivesUpWhenTheBridgeStaysAway(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"q1","status":"pending"}`))
	}))
	c := client.New(srv.URL, "", "demo", client.WithPollTimeout(time.Second), client.WithRetryWait(50*time.Millisecond),
		client.WithUnreachableLimit(time.Second))
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	go func() { time.Sleep(200 * time.Millisecond); srv.Close() }()
	start := time.Now()
	q, err := c.Wait(ctx, "q1")
	require.Error(t, err)
	assert.NoError(t, ctx.Err(), "Wait gave up on its own, before its caller's deadline")
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Equal(t, domain.StatusPending, q.Status, "the last record seen")
}
