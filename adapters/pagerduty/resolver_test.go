package pagerduty_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/pagerduty"
	"github.com/askbridge/askbridge/adapters/pagerduty/fakepd"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

var (
	ana   = fakepd.User{ID: "PANA001", Name: "Ana", Email: "Ana@Example.com"}
	bruno = fakepd.User{ID: "PBRU001", Name: "Bruno", Email: "bruno@example.com"}
	carla = fakepd.User{ID: "PCAR001", Name: "Carla", Email: "carla@example.com"}
)

func slackLookup(calls *int) func(context.Context, string) (string, error) {
	ids := map[string]string{"ana@example.com": "slack:UANA", "bruno@example.com": "slack:UBRUNO"}
	return func(_ context.Context, email string) (string, error) {
		*calls++
		return ids[email], nil
	}
}

func TestOnCallPersonIsAdmittedOthersAreNot(t *testing.T) {
	pd, c := newFake(t)
	pd.SetOnCalls(
		fakepd.OnCall{User: ana, ScheduleID: "PSCHED1", ScheduleName: "Primary", PolicyID: "PPOL001", PolicyName: "Ops", Level: 1},
		fakepd.OnCall{User: bruno, ScheduleID: "PSCHED2", ScheduleName: "Secondary", PolicyID: "PPOL001", PolicyName: "Ops", Level: 2},
		fakepd.OnCall{User: carla, PolicyID: "PPOL001", PolicyName: "Ops", Level: 1},
	)
	lookups := 0
	clk := &clock{time.Date(2026, 11, 27, 3, 12, 0, 0, time.UTC)}
	r := pagerduty.NewResolver(pagerduty.ResolverConfig{Client: c, Lookup: slackLookup(&lookups), Clock: clk,
		People: map[string][]string{"carla@example.com": {"discord:4455"}}})
	ctx := context.Background()
	sched := map[string][]string{pagerduty.KindSchedules: {"PSCHED1"}}

	m, why, err := r.Member(ctx, domain.Person{Platform: "slack", ID: "UANA"}, sched)
	require.NoError(t, err)
	assert.Equal(t, []string{"pagerduty_schedules:PSCHED1"}, m, "Ana is on call for Primary (matched by email, any case)")
	assert.Empty(t, why)

	m, why, err = r.Member(ctx, domain.Person{Platform: "slack", ID: "UBRUNO"}, sched)
	require.NoError(t, err)
	assert.Empty(t, m)
	assert.Equal(t, "not on call for schedule Primary at 03:12 UTC", why)

	pol := map[string][]string{pagerduty.KindPolicies: {"PPOL001"}}
	m, _, _ = r.Member(ctx, domain.Person{Platform: "discord", ID: "4455"}, pol)
	assert.NotEmpty(t, m, "Carla, level 1 of the policy, mapped to Discord in the configuration")
	m, _, _ = r.Member(ctx, domain.Person{Platform: "slack", ID: "UBRUNO"}, pol)
	assert.Empty(t, m, "level 2 is not admitted by default")

	r2 := pagerduty.NewResolver(pagerduty.ResolverConfig{Client: c, Lookup: slackLookup(&lookups), Clock: clk, MaxLevel: 2})
	m, _, _ = r2.Member(ctx, domain.Person{Platform: "slack", ID: "UBRUNO"}, pol)
	assert.NotEmpty(t, m, "a setting admits level 2")
}

// The list is kept briefly; Refresh (each escalation step) reads it afresh
// so a hand-off counts at once.
func TestHandOffIsSeenAfterRefreshOrTTL(t *testing.T) {
	pd, c := newFake(t)
	pd.SetOnCalls(fakepd.OnCall{User: ana, ScheduleID: "PSCHED1", ScheduleName: "Primary", PolicyID: "P1", Level: 1})
	lookups := 0
	clk := &clock{time.Now()}
	r := pagerduty.NewResolver(pagerduty.ResolverConfig{Client: c, Lookup: slackLookup(&lookups), Clock: clk})
	ctx := context.Background()
	sched := map[string][]string{pagerduty.KindSchedules: {"PSCHED1"}}
	anaP, brunoP := domain.Person{Platform: "slack", ID: "UANA"}, domain.Person{Platform: "slack", ID: "UBRUNO"}

	for range 3 {
		m, _, err := r.Member(ctx, anaP, sched)
		require.NoError(t, err)
		assert.NotEmpty(t, m)
	}
	assert.Equal(t, 1, pd.OnCallRequests(), "cached between answers")
	assert.Equal(t, 1, lookups, "the email lookup is cached too")

	pd.SetOnCalls(fakepd.OnCall{User: bruno, ScheduleID: "PSCHED1", ScheduleName: "Primary", PolicyID: "P1", Level: 1})
	m, _, _ := r.Member(ctx, brunoP, sched)
	assert.Empty(t, m, "within the TTL the old list stands")
	r.Refresh(sched)
	m, _, _ = r.Member(ctx, brunoP, sched)
	assert.NotEmpty(t, m, "after a refresh Bruno is on call")
	m, _, _ = r.Member(ctx, anaP, sched)
	assert.Empty(t, m, "and Ana no longer")

	pd.SetOnCalls(fakepd.OnCall{User: ana, ScheduleID: "PSCHED1", ScheduleName: "Primary", PolicyID: "P1", Level: 1})
	clk.t = clk.t.Add(pagerduty.DefaultOnCallTTL)
	m, _, _ = r.Member(ctx, anaP, sched)
	assert.NotEmpty(t, m, "after the TTL the list is read again")
}

// PagerDuty down, or the token refused: nobody is admitted (fail closed),
// and the failure is counted.
func TestPagerDutyDownAdmitsNobody(t *testing.T) {
	pd, c := newFake(t)
	pd.SetOnCalls(fakepd.OnCall{User: ana, ScheduleID: "PSCHED1", ScheduleName: "Primary", PolicyID: "P1", Level: 1})
	lookups := 0
	failed := 0
	r := pagerduty.NewResolver(pagerduty.ResolverConfig{Client: c, Lookup: slackLookup(&lookups),
		Observe: func(op, outcome string) {
			if outcome == "failed" {
				failed++
			}
		}})
	pd.Fail(http.StatusServiceUnavailable)
	m, _, err := r.Member(context.Background(), domain.Person{Platform: "slack", ID: "UANA"},
		map[string][]string{pagerduty.KindSchedules: {"PSCHED1"}})
	require.Error(t, err)
	assert.Empty(t, m)
	assert.Equal(t, 1, failed)

	broken := pagerduty.NewResolver(pagerduty.ResolverConfig{Client: c, Lookup: func(context.Context, string) (string, error) {
		return "", errors.New("slack: ratelimited")
	}})
	_, _, err = broken.Member(context.Background(), domain.Person{Platform: "slack", ID: "UANA"},
		map[string][]string{pagerduty.KindSchedules: {"PSCHED1"}})
	assert.Error(t, err, "an unreadable email lookup admits nobody either")
}
