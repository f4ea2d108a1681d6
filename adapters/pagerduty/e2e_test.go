package pagerduty_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/pagerduty"
	"github.com/askbridge/askbridge/adapters/pagerduty/fakepd"
	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bridge is a whole bridge (app.New, as `askbridge serve` builds it) whose
// routes page through a fake PagerDuty.
type bridge struct {
	app    *app.App
	pd     *fakepd.Server
	url    string
	cancel context.CancelFunc
}

const badKey = "UNKNOWNKEY0000000000000000000002"

func newBridge(t *testing.T) *bridge {
	t.Helper()
	pd, _ := newFake(t)
	b := buildBridge(t, pd)
	b.start(t)
	return b
}

// buildBridge builds a bridge on pd without starting its background work
// (the deliverer, the sweeper); mods change its settings.
func buildBridge(t *testing.T, pd *fakepd.Server, mods ...func(*app.Settings)) *bridge {
	t.Helper()
	pu, _ := url.Parse(pd.URL)
	sched := domain.Responders{Groups: map[string][]string{pagerduty.KindSchedules: {"PSCHED1"}}}
	s := app.Settings{Addr: "127.0.0.1:0", PublicURL: "https://bridge.example",
		WebhookAllow: []string{pu.Host}, // the egress rules apply to PagerDuty: admit the fake on loopback
		Routes: []domain.Route{
			{Name: "oncall", Responders: sched, Page: &domain.Page{Pager: pagerduty.Pager, Profile: "route oncall"}, Timeout: time.Hour},
			{Name: "broken", Page: &domain.Page{Pager: pagerduty.Pager, Profile: "route broken"}, Timeout: time.Hour},
		},
		PagerDuty: &app.PagerDutySettings{EventsURL: pd.URL, APIURL: pd.URL, APIToken: apiToken, WebhookSecrets: []string{secret},
			Profiles: map[string]pagerduty.Profile{"route oncall": {RoutingKey: routingKey, Severity: "critical"},
				"route broken": {RoutingKey: badKey}},
			People: map[string][]string{"ana@example.com": {"slack:UANA"}}},
	}
	for _, m := range mods {
		m(&s)
	}
	a, err := app.New(context.Background(), s)
	require.NoError(t, err)
	addr, err := a.Listen()
	require.NoError(t, err)
	b := &bridge{app: a, pd: pd, url: "http://" + addr.String()}
	t.Cleanup(func() {
		if b.cancel != nil {
			b.cancel()
		}
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		_ = a.Close(cctx)
	})
	pd.SetOnCalls(fakepd.OnCall{User: ana, ScheduleID: "PSCHED1", ScheduleName: "Primary", PolicyID: "P1", PolicyName: "Ops", Level: 1})
	return b
}

// start runs the bridge's background work (the deliverer, the sweeper).
func (b *bridge) start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	go b.app.Run(ctx)
}

func (b *bridge) ask(t *testing.T, route, run, text string) *domain.Question {
	t.Helper()
	res, err := b.app.Router().Ask(context.Background(), "ops", &domain.AskRequest{RunID: run, AgentID: "deploy-bot", AgentName: "Deploy bot",
		Question: text, Options: []domain.Option{{Label: "Allow"}, {Label: "Deny"}}, Route: route}, "")
	require.NoError(t, err)
	return res.Question
}

// events lists what PagerDuty received for a dedup key: "trigger: <summary>".
func (b *bridge) events(dedup string) []string {
	var out []string
	for _, e := range b.pd.Events() {
		if e.DedupKey == dedup {
			out = append(out, e.EventAction+": "+e.Summary())
		}
	}
	return out
}

func (b *bridge) waitEvents(t *testing.T, dedup string, n int) []string {
	t.Helper()
	require.Eventually(t, func() bool { return len(b.events(dedup)) >= n }, 15*time.Second, 20*time.Millisecond,
		"PagerDuty received %v", b.events(dedup))
	time.Sleep(100 * time.Millisecond) // nothing more arrives
	return b.events(dedup)
}

func (b *bridge) audit(t *testing.T, id string) []string {
	trail, err := b.app.Store().Audit(context.Background(), "ops", id, 0)
	require.NoError(t, err)
	var out []string
	for _, e := range trail {
		out = append(out, e.Type+": "+e.Detail)
	}
	return out
}

// One question's whole path: ask → page → the on-call person answers on
// Slack → the page is resolved saying how it ended; someone not on call is
// refused with the reason in the audit trail.
func TestPageAnsweredByWhoeverIsOnCall(t *testing.T) {
	b := newBridge(t)
	q := b.ask(t, "oncall", "run-1", "Deploy api 1.4\nto production?")
	got := b.waitEvents(t, q.ID, 1)
	assert.Equal(t, []string{"trigger: Deploy bot asks: Deploy api 1.4 to production?"}, got)
	ev := b.pd.Events()[0]
	require.Len(t, ev.Links, 1)
	assert.Equal(t, "https://bridge.example/questions/"+q.ID, ev.Links[0].Href)
	assert.Contains(t, string(ev.Payload), `"project":"ops"`)

	again := b.ask(t, "oncall", "run-1", "Deploy api 1.4\nto production?")
	assert.Equal(t, q.ID, again.ID, "a repeated ask re-attaches")

	r := b.app.Router()
	_, err := r.Answer(context.Background(), "ops", q.ID, pick("Allow"), domain.Person{Platform: "slack", ID: "UBRUNO", Name: "bruno"})
	assert.Equal(t, domain.ENotAllowed, domain.ErrorCode(err), "Bruno is not on call")
	final, err := r.Answer(context.Background(), "ops", q.ID, pick("Allow"), domain.Person{Platform: "slack", ID: "UANA", Name: "ana"})
	require.NoError(t, err, "Ana is on call for Primary")
	assert.Equal(t, domain.StatusAnswered, final.Status)

	got = b.waitEvents(t, q.ID, 2)
	assert.Equal(t, []string{"trigger: Deploy bot asks: Deploy api 1.4 to production?", "resolve: Answered by ana on Slack: Allow"}, got,
		"one trigger despite the re-ask, then the resolve")
	a, _ := b.pd.Alert(routingKey, q.ID)
	assert.Equal(t, "resolved", a.Status)
	trail := strings.Join(b.audit(t, q.ID), "\n")
	assert.Contains(t, trail, "not on call for schedule Primary at")
	assert.Contains(t, trail, "delivery.sent: pagerduty.trigger")
	assert.Contains(t, trail, "delivery.sent: pagerduty.resolve")
	assert.NotContains(t, trail, routingKey, "the routing key is never written down")
}

func pick(label string) domain.RespondRequest { return domain.RespondRequest{Response: &label} }

// Dismissed and superseded questions resolve their page too.
func TestEveryEndResolvesThePage(t *testing.T) {
	b := newBridge(t)
	r := b.app.Router()
	q1 := b.ask(t, "oncall", "run-d", "Dismiss me?")
	b.waitEvents(t, q1.ID, 1)
	_, err := r.Cancel(context.Background(), "ops", q1.ID, domain.CancelUser, &domain.Person{Platform: "slack", ID: "UANA", Name: "ana"})
	require.NoError(t, err)
	assert.Equal(t, "resolve: Dismissed by ana on Slack", b.waitEvents(t, q1.ID, 2)[1])

	q2 := b.ask(t, "oncall", "run-s", "First?")
	b.waitEvents(t, q2.ID, 1)
	q3 := b.ask(t, "oncall", "run-s", "Second?")
	assert.Equal(t, "resolve: Cancelled (superseded)", b.waitEvents(t, q2.ID, 2)[1])
	assert.Equal(t, []string{"trigger: Deploy bot asks: Second?"}, b.waitEvents(t, q3.ID, 1))

	_, err = r.Cancel(context.Background(), "ops", q3.ID, domain.CancelAgent, nil)
	require.NoError(t, err)
	assert.Equal(t, "resolve: Cancelled (withdrawn by the agent)", b.waitEvents(t, q3.ID, 2)[1])
}

// PagerDuty down when the question is asked: the trigger is retried; if
// the question ends first, the trigger still queued is dropped, not sent.
func TestQueuedTriggerIsDroppedWhenTheQuestionEnds(t *testing.T) {
	b := newBridge(t)
	b.pd.Fail(http.StatusServiceUnavailable)
	q := b.ask(t, "oncall", "run-o", "Outage?")
	require.Eventually(t, func() bool { return b.pd.Failing() == 0 }, 10*time.Second, 10*time.Millisecond, "the first attempt meets the outage")
	_, err := b.app.Router().Answer(context.Background(), "ops", q.ID, pick("Deny"), domain.Person{Platform: "slack", ID: "UANA", Name: "ana"})
	require.NoError(t, err)
	got := b.waitEvents(t, q.ID, 1)
	time.Sleep(1500 * time.Millisecond) // the trigger's retry is due
	assert.Equal(t, []string{"resolve: Answered by ana on Slack: Deny"}, b.events(q.ID), "no trigger after the end: %v", got)
}

// PagerDuty refuses the event (400, an unknown routing key): given up at
// once, written to the audit trail with PagerDuty's reason, never the key.
func TestRefusedPageIsAuditedNotSilent(t *testing.T) {
	b := newBridge(t)
	q := b.ask(t, "broken", "run-b", "Broken key?")
	var trail string
	require.Eventually(t, func() bool {
		trail = strings.Join(b.audit(t, q.ID), "\n")
		return strings.Contains(trail, "delivery.failed")
	}, 10*time.Second, 20*time.Millisecond)
	assert.Contains(t, trail, "Invalid routing key")
	assert.NotContains(t, trail, badKey)
	assert.Empty(t, b.events(q.ID))
}

// An acknowledgement in PagerDuty reaches the question through the signed
// webhook; a forged one is refused.
func TestAcknowledgedInPagerDuty(t *testing.T) {
	b := newBridge(t)
	q := b.ask(t, "oncall", "run-a", "Ack?")
	resp, err := fakepd.Webhook(b.url+pagerduty.WebhookPath, []string{"forged"}, "incident.acknowledged", q.ID, "Ana")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	resp, err = fakepd.Webhook(b.url+pagerduty.WebhookPath, []string{secret}, "incident.acknowledged", q.ID, "Ana")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.Contains(t, b.audit(t, q.ID), "page.acknowledged: acknowledged by Ana in PagerDuty; further escalation steps only remind")
}

// TestWebhookActsOnlyOnQuestionsThePagerPaged: a correctly signed
// PagerDuty webhook about a question the bridge never paged (its route
// has no page, or its escalation step with a page was not reached) is
// answered 204 and records nothing: no remark on its copies, no audit
// entry, its escalation untouched.
func TestWebhookActsOnlyOnQuestionsThePagerPaged(t *testing.T) {
	pd, _ := newFake(t)
	b := buildBridge(t, pd, func(s *app.Settings) {
		s.Routes = append(s.Routes,
			domain.Route{Name: "quiet", Timeout: time.Hour},
			domain.Route{Name: "later", Timeout: 2 * time.Hour, Escalation: []domain.EscalationStep{
				{After: domain.Duration(time.Hour), Page: &domain.Page{Pager: pagerduty.Pager, Profile: "route later step 1"}}}})
		s.PagerDuty.Profiles["route later step 1"] = pagerduty.Profile{RoutingKey: routingKey}
	})
	b.start(t)
	for _, c := range []struct {
		name, route, event string
		acted              bool
	}{
		{"acknowledged, paged on its route", "oncall", "incident.acknowledged", true},
		{"resolved, paged on its route", "oncall", "incident.resolved", true},
		{"acknowledged, never paged (no page on its route)", "quiet", "incident.acknowledged", false},
		{"resolved, never paged (no page on its route)", "quiet", "incident.resolved", false},
		{"acknowledged, its escalation step that pages not reached", "later", "incident.acknowledged", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := b.ask(t, c.route, "run-"+uuid.NewString(), "Deploy "+c.name+"?")
			resp, err := fakepd.Webhook(b.url+pagerduty.WebhookPath, []string{secret}, c.event, q.ID, "Ana")
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusNoContent, resp.StatusCode)
			got, err := b.app.Store().Get(context.Background(), "ops", q.ID)
			require.NoError(t, err)
			var pageAudit []string
			for _, line := range b.audit(t, q.ID) {
				if strings.HasPrefix(line, "page.acknowledged") || strings.HasPrefix(line, "page.resolved") {
					pageAudit = append(pageAudit, line)
				}
			}
			if c.acted {
				assert.Len(t, got.Remarks, 1, "the copies say what happened in PagerDuty")
				assert.Len(t, pageAudit, 1)
				return
			}
			assert.Empty(t, got.Remarks, "no remark on a question never paged")
			assert.Empty(t, pageAudit, "no audit entry for a question never paged")
			assert.Equal(t, domain.StatusPending, got.Status)
		})
	}
}
