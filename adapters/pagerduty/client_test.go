package pagerduty_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/pagerduty"
	"github.com/askbridge/askbridge/adapters/pagerduty/fakepd"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	routingKey = "R0UT1NGKEY0000000000000000000001"
	apiToken   = "y_NbAkKc66ryYTWUXYEu"
)

func newFake(t *testing.T) (*fakepd.Server, *pagerduty.Client) {
	t.Helper()
	pd := fakepd.New(apiToken, routingKey)
	t.Cleanup(func() {
		pd.Close()
		assert.Empty(t, pd.Problems(), "requests and answers must match PagerDuty's OpenAPI documents")
	})
	c := pagerduty.NewClient(pagerduty.ClientConfig{EventsURL: pd.URL, APIURL: pd.URL, APIToken: apiToken})
	return pd, c
}

func trigger(dedup string) pagerduty.Event {
	return pagerduty.Event{RoutingKey: routingKey, EventAction: "trigger", DedupKey: dedup,
		Payload: &pagerduty.Payload{Summary: "Deploy bot asks: Deploy api 1.4?", Source: "askbridge", Severity: "critical",
			CustomDetails: map[string]any{"project": "ops"}},
		Links: []pagerduty.Link{{Href: "https://bridge.example/questions/q1", Text: "Answer"}}}
}

// A trigger and its resolve with the same dedup_key open and close one
// alert, and both match the Events API v2 document.
func TestTriggerThenResolveClosesTheAlert(t *testing.T) {
	pd, c := newFake(t)
	ctx := context.Background()
	require.NoError(t, c.Enqueue(ctx, trigger("q1")))
	require.NoError(t, c.Enqueue(ctx, trigger("q1")), "a repeated trigger is merged into the open alert")
	a, ok := pd.Alert(routingKey, "q1")
	require.True(t, ok)
	assert.Equal(t, "triggered", a.Status)
	assert.Equal(t, 2, a.Triggers)
	require.NoError(t, c.Enqueue(ctx, pagerduty.Event{RoutingKey: routingKey, EventAction: "resolve", DedupKey: "q1"}))
	a, _ = pd.Alert(routingKey, "q1")
	assert.Equal(t, "resolved", a.Status)
}

// PagerDuty's answers are classified as the retry logic needs: 400 and a
// wrong key are permanent, 429 waits, 5xx and network failures retry.
func TestEnqueueFailuresAreClassified(t *testing.T) {
	pd, c := newFake(t)
	ctx := context.Background()

	bad := trigger("q2")
	bad.Payload.Severity = "urgent"
	err := c.Enqueue(ctx, bad)
	var pe *pagerduty.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, http.StatusBadRequest, pe.Status)
	assert.True(t, lifecycle.IsPermanent(err), "400 is not retried")
	assert.Contains(t, err.Error(), "payload.severity", "the log says what PagerDuty refused")

	wrong := trigger("q2")
	wrong.RoutingKey = "SECRETKEY0000000000000000000009"
	err = c.Enqueue(ctx, wrong)
	assert.True(t, lifecycle.IsPermanent(err))
	assert.NotContains(t, err.Error(), "SECRETKEY", "a routing key never appears in an error")

	pd.Fail(http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusServiceUnavailable)
	err = c.Enqueue(ctx, trigger("q2"))
	require.ErrorAs(t, err, &pe)
	assert.False(t, pe.Permanent())
	assert.Positive(t, pe.RetryAfter(), "429 waits before the next try")
	for range 2 {
		err = c.Enqueue(ctx, trigger("q2"))
		assert.False(t, lifecycle.IsPermanent(err), "5xx is retried: %v", err)
	}
	require.NoError(t, c.Enqueue(ctx, trigger("q2")), "after the outage the event goes through")
	assert.Len(t, pd.Events(), 1)

	down := pagerduty.NewClient(pagerduty.ClientConfig{EventsURL: "http://127.0.0.1:1", HTTP: &http.Client{Timeout: time.Second}})
	err = down.Enqueue(ctx, trigger("q3"))
	require.Error(t, err)
	assert.False(t, lifecycle.IsPermanent(err), "a network failure is retried")
	assert.NotContains(t, err.Error(), routingKey)
}

// Events PagerDuty would refuse are refused before anything is sent.
func TestInvalidEventsAreNotSent(t *testing.T) {
	pd, c := newFake(t)
	ev := trigger(strings.Repeat("k", pagerduty.MaxDedupKey+1))
	assert.ErrorIs(t, c.Enqueue(context.Background(), ev), pagerduty.ErrInvalidEvent)
	ev = trigger("q")
	ev.RoutingKey = ""
	err := c.Enqueue(context.Background(), ev)
	assert.ErrorIs(t, err, pagerduty.ErrInvalidEvent)
	assert.Contains(t, err.Error(), "routing_key_file")
	assert.Empty(t, pd.Events())
}

// Past the integration's rate PagerDuty answers 429; the client says to
// wait.
func TestRateLimit(t *testing.T) {
	pd, c := newFake(t)
	var limited error
	for i := 0; i <= fakepd.RatePerMinute; i++ {
		if err := c.Enqueue(context.Background(), trigger("rate")); err != nil {
			limited = err
			break
		}
	}
	var pe *pagerduty.Error
	require.ErrorAs(t, limited, &pe)
	assert.Equal(t, http.StatusTooManyRequests, pe.Status)
	assert.Len(t, pd.Events(), fakepd.RatePerMinute)
}

// /oncalls is read with the token, include[]=users and every page.
func TestOnCallsReadsEveryPage(t *testing.T) {
	pd, c := newFake(t)
	var oc []fakepd.OnCall
	for i := range 230 {
		oc = append(oc, fakepd.OnCall{User: fakepd.User{ID: "PU" + string(rune('A'+i%26)) + strings.Repeat("0", i/26), Name: "n", Email: "n@example.com"},
			ScheduleID: "PSCHED1", ScheduleName: "Primary", PolicyID: "PPOL001", PolicyName: "Ops", Level: 1})
	}
	pd.SetOnCalls(oc...)
	got, err := c.OnCalls(context.Background(), pagerduty.OnCallFilter{Schedules: []string{"PSCHED1"}})
	require.NoError(t, err)
	assert.Len(t, got, 230)
	assert.Equal(t, "n@example.com", got[0].User.Email)
	assert.Equal(t, "Primary", got[0].Schedule.Summary)
	assert.Equal(t, 3, pd.OnCallRequests())

	wrong := pagerduty.NewClient(pagerduty.ClientConfig{APIURL: pd.URL, APIToken: "not-the-token"})
	_, err = wrong.OnCalls(context.Background(), pagerduty.OnCallFilter{Schedules: []string{"PSCHED1"}})
	var pe *pagerduty.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, http.StatusUnauthorized, pe.Status)
	assert.NotContains(t, err.Error(), "not-the-token")

	none := pagerduty.NewClient(pagerduty.ClientConfig{APIURL: pd.URL})
	_, err = none.OnCalls(context.Background(), pagerduty.OnCallFilter{Schedules: []string{"PSCHED1"}})
	assert.ErrorContains(t, err, "api_token_file")
	assert.False(t, errors.Is(err, context.Canceled))
}
