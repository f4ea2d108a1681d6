package lifecycle_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// onCallKind is a directory group kind as a pager adapter registers it.
const onCallKind = "test_oncall_schedules"

func init() {
	domain.RegisterDirectoryGroup(domain.DirectoryGroup{Kind: onCallKind, Noun: "whoever is on call for schedule"})
}

// onCall is a directory: who is on call for each schedule, or down.
type onCall struct {
	mu        sync.Mutex
	people    map[string][]string // schedule → person keys
	down      bool
	refreshed int
}

func (o *onCall) GroupKinds() []string { return []string{onCallKind} }
func (o *onCall) Refresh(map[string][]string) {
	o.mu.Lock()
	o.refreshed++
	o.mu.Unlock()
}
func (o *onCall) Member(_ context.Context, p domain.Person, groups map[string][]string) ([]string, string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.down {
		return nil, "", errors.New("pager unreachable")
	}
	var in []string
	for _, s := range groups[onCallKind] {
		if slices.Contains(o.people[s], p.Key()) {
			in = append(in, domain.DirectoryMember(onCallKind, s))
		}
	}
	if len(in) == 0 {
		return nil, "not on call for schedule Primary at 03:12 UTC", nil
	}
	return in, "", nil
}

func onCallFixture(t *testing.T, routes ...domain.Route) (*fixture, *onCall) {
	f := newFixture(t, "", routes...)
	oc := &onCall{people: map[string][]string{"PSCHED1": {"slack:UANA"}}}
	f.router.AddGroupResolver(oc)
	return f, oc
}

func refusals(t *testing.T, f *fixture, id string) []string {
	trail, err := f.store.Audit(ctx, "ops", id, 0)
	require.NoError(t, err)
	var out []string
	for _, e := range trail {
		if e.Type == "refused" {
			out = append(out, e.Detail)
		}
	}
	return out
}

func TestWhoeverIsOnCallAnswers(t *testing.T) {
	f, oc := onCallFixture(t)
	ask := func(run string) string {
		req := approval(run)
		req.Responders = &domain.Responders{Users: []string{"slack:UBOSS"}, Groups: map[string][]string{onCallKind: {"PSCHED1"}}}
		res, err := f.router.Ask(ctx, "ops", req, "")
		require.NoError(t, err)
		return res.Question.ID
	}

	id := ask("r1")
	_, err := f.router.Answer(ctx, "ops", id, pick("Approve"), slackP("UBRUNO"))
	require.Equal(t, domain.ENotAllowed, domain.ErrorCode(err), "Bruno is not on call")
	assert.Contains(t, err.Error(), "whoever is on call for schedule PSCHED1", "the refusal says who may answer")
	assert.Equal(t, []string{"UBRUNO may not answer this question; who may answer: slack:UBOSS, whoever is on call for schedule PSCHED1 (not on call for schedule Primary at 03:12 UTC)"},
		refusals(t, f, id), "the audit trail says why")
	q, err := f.router.Answer(ctx, "ops", id, pick("Approve"), slackP("UANA"))
	require.NoError(t, err, "Ana is on call")
	assert.Equal(t, domain.StatusAnswered, q.Status)

	// The pager cannot be read: nobody is admitted through it, the other
	// responders still are.
	oc.mu.Lock()
	oc.down = true
	oc.mu.Unlock()
	id = ask("r2")
	_, err = f.router.Answer(ctx, "ops", id, pick("Approve"), slackP("UANA"))
	require.Equal(t, domain.ENotAllowed, domain.ErrorCode(err), "fail closed")
	require.Len(t, refusals(t, f, id), 1)
	assert.Contains(t, refusals(t, f, id)[0], "who is on call could not be determined (pager unreachable)")
	_, err = f.router.Answer(ctx, "ops", id, pick("Approve"), slackP("UBOSS"))
	require.NoError(t, err, "a responder named by id needs no pager")
}

// A page acknowledged in the pager holds the escalation ladder: further
// steps post no copies (and page nobody); reminders continue.
func TestAcknowledgedPageHoldsTheLadder(t *testing.T) {
	role := domain.Responders{Groups: map[string][]string{"discord_roles": {"R-managers"}}}
	route := domain.Route{Name: "oncall", Targets: []domain.Target{{Platform: "slack", Channel: "C-ops"}},
		Responders: domain.Responders{Groups: map[string][]string{onCallKind: {"PSCHED1"}}}, Timeout: time.Hour,
		Page: &domain.Page{Pager: "pagerduty", Profile: "route oncall"}, // only a question paged can be acknowledged
		Escalation: []domain.EscalationStep{
			{After: domain.Duration(10 * time.Minute), Remind: true},
			{After: domain.Duration(20 * time.Minute), Remind: true, Targets: []domain.Target{{Platform: "discord", Channel: "D-mgmt"}}, Responders: &role},
		}}
	f, oc := onCallFixture(t, route)
	res, err := f.router.Ask(ctx, "ops", &domain.AskRequest{RunID: "r1", Question: "Roll back?", Route: "oncall",
		Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}}, "")
	require.NoError(t, err)
	id := res.Question.ID

	ackAt := time.Date(2026, 3, 1, 3, 14, 30, 0, time.UTC)
	require.NoError(t, f.router.PageAcknowledged(ctx, id, "PagerDuty", "Ana", ackAt))
	require.NoError(t, f.router.PageAcknowledged(ctx, id, "PagerDuty", "Ana", ackAt), "a pager's retry changes nothing")
	require.Eventually(t, func() bool { return len(f.slack.get(func() []string { return f.slack.updated })) == 1 },
		3*time.Second, 10*time.Millisecond, "the copy is re-rendered once with the remark")
	q, _ := f.store.Get(ctx, "ops", id)
	require.Len(t, q.Remarks, 1)
	assert.Equal(t, "Acknowledged by Ana in PagerDuty at 03:14 UTC", q.Remarks[0].Text)
	step := func(d time.Duration) {
		f.clock.add(d)
		_, err := f.router.EscalateDue(ctx)
		require.NoError(t, err)
	}
	step(10 * time.Minute)
	step(10 * time.Minute)
	assert.Equal(t, []string{"C-ops at +10m0s", "C-ops at +20m0s"}, f.slack.get(func() []string { return f.slack.reminded }), "reminders continue")
	assert.Empty(t, f.discord.get(func() []string { return f.discord.posted2() }), "no copy for the managers")
	assert.Equal(t, 2, oc.refreshed, "who is on call is read afresh at each step")

	trail, _ := f.store.Audit(ctx, "ops", id, 0)
	var lines []string
	for _, e := range trail {
		if strings.HasPrefix(e.Type, "page.") || e.Type == "escalation.held" {
			lines = append(lines, e.Type+": "+e.Detail)
		}
	}
	assert.Equal(t, []string{
		"page.queued: pagerduty.resolve (step 0) when the question ends",
		"page.queued: pagerduty.trigger (step 0)",
		"page.acknowledged: acknowledged by Ana in PagerDuty; further escalation steps only remind",
		"escalation.held: step 2 (after 20 min: reminder, copy to Discord channel D-mgmt, responders added: Discord role R-managers) held: the page was acknowledged",
	}, lines)

	require.NoError(t, f.router.PageResolved(ctx, id, "PagerDuty", "Ana", ackAt.Add(6*time.Minute)))
	q, _ = f.store.Get(ctx, "ops", id)
	assert.Equal(t, domain.StatusPending, q.Status, "resolving the incident does not answer the question")
	require.Len(t, q.Remarks, 2)
	assert.Equal(t, "The page was resolved in PagerDuty by Ana at 03:20 UTC; the question is still open", q.Remarks[1].Text)
	require.Eventually(t, func() bool { return len(f.slack.get(func() []string { return f.slack.updated })) == 2 },
		3*time.Second, 10*time.Millisecond)
	assert.Equal(t, domain.ENotFound, domain.ErrorCode(f.router.PageAcknowledged(ctx, "no-such-question", "PagerDuty", "Ana", time.Time{})))
}
