package crosstest

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/discord"
	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/adapters/pagerduty"
	"github.com/askbridge/askbridge/adapters/pagerduty/fakepd"
	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/server/api"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	pdToken   = "y_NbAkKc66ryYTWUXYEu"
	pdKey     = "R0UT1NGKEY0000000000000000000001"
	pdSecret  = "pagerduty-webhook-secret"
	pdPrimary = "PSCHED1"
)

// paged is a whole bridge (app.New, running its deliverer) on Slack,
// Discord, the web inbox and a fake PagerDuty, whose route "oncall" pages
// and admits whoever is on call for the schedule Primary.
type paged struct {
	*onCall
	pd  *fakepd.Server
	url string // where the bridge listens (PagerDuty's webhook)
	s   app.Settings
}

// newPaged builds the bridge; with c its clock is c's, with redis its
// store is that Redis (else the embedded one).
func newPaged(t *testing.T, route domain.Route, c *clock, redis string) *paged {
	t.Helper()
	pd := fakepd.New(pdToken, pdKey)
	t.Cleanup(func() {
		pd.Close()
		assert.Empty(t, pd.Problems(), "requests and answers must match PagerDuty's OpenAPI documents")
	})
	pd.SetOnCalls(fakepd.OnCall{User: fakepd.User{ID: "PANA001", Name: "Ana", Email: "ana@example.com"},
		ScheduleID: pdPrimary, ScheduleName: "Primary", PolicyID: "P1", PolicyName: "Ops", Level: 1})
	fs := fakeslack.New("C1")
	t.Cleanup(fs.Close)
	fs.SetEmail("UANA", "ana@example.com")
	fd := fakediscord.New(t)
	pu, _ := url.Parse(pd.URL)
	s := app.Settings{RedisURL: redis,
		Routes: []domain.Route{route}, PostTimeout: 5 * time.Second, PublicURL: "https://bridge.example",
		WebhookAllow: []string{pu.Host}, // the egress rules apply to PagerDuty: admit the fake on loopback
		Slack:        slack.Config{BotToken: fs.BotToken, SigningSecret: slackSecret, APIURL: fs.APIURL()},
		Discord: discord.Config{BotToken: fd.BotToken, ApplicationID: fd.AppID,
			PublicKey: fd.PublicKey(), APIURL: fd.APIURL(), AckAfter: time.Second, RetryBackoff: 10 * time.Millisecond},
		Operators: []api.Operator{{ID: "alice", Projects: []string{"ops"}, Token: aliceToken}},
		PagerDuty: &app.PagerDutySettings{EventsURL: pd.URL, APIURL: pd.URL, APIToken: pdToken, WebhookSecrets: []string{pdSecret},
			Profiles: map[string]pagerduty.Profile{"route oncall": {RoutingKey: pdKey, Severity: "critical"}},
			People:   map[string][]string{"ana@example.com": {"discord:4455"}}},
	}
	if c != nil {
		s.Clock = c
		fd.Now = c.Now
	}
	b := &paged{pd: pd, s: s}
	srv := b.replica(t)
	fd.Target = srv.srv.URL + "/discord/interactions"
	b.onCall = &onCall{t: t, store: srv.app.Store(), router: srv.app.Router(), clock: c, slack: fs, discord: fd, srv: srv.srv}
	b.url = srv.srv.URL
	return b
}

// replica starts one more bridge with the same settings (on Redis: a
// second replica of the first).
func (b *paged) replica(t *testing.T) served {
	t.Helper()
	srv := newApp(t, b.s)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { _ = srv.app.Run(ctx); close(ran) }() // the deliverer sends the pages
	t.Cleanup(func() { cancel(); <-ran })
	return srv
}

func pagingRoute() domain.Route {
	return domain.Route{Name: "oncall", Timeout: time.Hour,
		Targets:    []domain.Target{{Platform: "slack", Channel: "C1"}, {Platform: "discord", Channel: "1000"}},
		Responders: domain.Responders{Groups: map[string][]string{pagerduty.KindSchedules: {pdPrimary}}},
		Page:       &domain.Page{Pager: pagerduty.Pager, Profile: "route oncall"}}
}

// events lists what PagerDuty received for the question: "trigger: <summary>".
func (b *paged) events(t *testing.T, q *domain.Question, n int) []string {
	t.Helper()
	var out []string
	require.Eventually(t, func() bool {
		out = nil
		for _, e := range b.pd.Events() {
			if e.DedupKey == q.ID {
				out = append(out, e.EventAction+": "+e.Summary())
			}
		}
		return len(out) >= n
	}, 15*time.Second, 20*time.Millisecond, "PagerDuty received %v", out)
	return out
}

// webhook is PagerDuty telling the bridge that by did eventType
// (incident.acknowledged, incident.resolved) on q's incident at at.
func (b *paged) webhook(t *testing.T, q *domain.Question, eventType, by string, at time.Time) {
	t.Helper()
	res, err := fakepd.PostSigned(b.url+pagerduty.WebhookPath, []string{pdSecret}, fakepd.WebhookBody(eventType, q.ID, by, at))
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusNoContent, res.StatusCode)
}

// One question's whole path with PagerDuty: asked (Slack, Discord, the web
// inbox) → paged → whoever is on call mentioned in the Slack thread →
// acknowledged in PagerDuty, which every copy shows →
// the incident resolved by a person in PagerDuty, which every copy shows
// while the question stays open → answered on Slack by whoever is on call →
// the page resolved. The name PagerDuty gives is shown escaped everywhere.
func TestPagerNewsOnEveryCopy(t *testing.T) {
	b := newPaged(t, pagingRoute(), nil, "")
	q := b.ask(domain.AskRequest{RunID: "run-1", Question: "Roll back api 1.4?", Route: "oncall",
		Options: []domain.Option{{Label: "Roll back"}, {Label: "Keep"}}})
	ts, msg := b.copyOn(q, "slack", "C1"), b.copyOn(q, "discord", "1000")
	assert.Equal(t, []string{"trigger: Deploy bot asks: Roll back api 1.4?"}, b.events(t, q, 1))
	require.Eventually(t, func() bool {
		for _, m := range b.slack.Messages("C1") {
			if m.ThreadTS == ts && m.Text == "<@UANA> — you are on call for schedule Primary: this question is waiting for you." {
				return true
			}
		}
		return false
	}, 5*time.Second, 10*time.Millisecond, "whoever is on call is mentioned in the Slack copy's thread")

	const who = "Ana <!channel> *Boss*"
	ackAt := time.Date(2026, 3, 1, 3, 14, 20, 0, time.UTC)
	b.webhook(t, q, "incident.acknowledged", who, ackAt)
	at := "03:14"
	ack := "Acknowledged by " + who + " in PagerDuty at " + at + " UTC"
	b.slackSays("C1", ts, "Acknowledged by Ana &lt;!channel&gt; *Boss* in PagerDuty at "+at+" UTC")
	m, _ := b.slack.Message("C1", ts)
	assert.NotContains(t, m.Texts(), "<!channel>", "no mention from a name PagerDuty gives")
	b.discordSays(msg, `Acknowledged by Ana \<!channel\> \*Boss\* in PagerDuty at `+at+" UTC")
	assert.Empty(t, b.discord.Message(msg).Pings, "the edit pings nobody")
	br := b.signIn(aliceToken)
	for _, page := range []string{"/questions/" + q.ID, "/"} {
		code, body := br.get(page)
		require.Equal(t, http.StatusOK, code)
		assert.Contains(t, body, html.EscapeString(ack), "the web inbox's %s", page)
		assert.NotContains(t, body, "<!channel>", page)
	}
	got := b.get(q)
	assert.Equal(t, domain.StatusPending, got.Status)
	require.Len(t, got.Remarks, 1)
	assert.Equal(t, who, got.Remarks[0].By)

	// PagerDuty retries the webhook: the copies are not edited again.
	b.settle()
	m, _ = b.slack.Message("C1", ts)
	edits := m.Edits
	b.webhook(t, q, "incident.acknowledged", who, ackAt)
	b.settle()
	m, _ = b.slack.Message("C1", ts)
	assert.Equal(t, edits, m.Edits, "a repeated webhook changes nothing")

	b.webhook(t, q, "incident.resolved", "Ana", ackAt.Add(6*time.Minute))
	resolved := "The page was resolved in PagerDuty by Ana at 03:20 UTC"
	b.slackSays("C1", ts, resolved, "the question is still open", "Acknowledged by Ana")
	b.discordSays(msg, resolved, "the question is still open")
	_, body := br.get("/questions/" + q.ID)
	assert.Contains(t, body, resolved)
	got = b.get(q)
	assert.Equal(t, domain.StatusPending, got.Status, "resolving the incident does not answer the question")

	// Still answerable, by whoever is on call.
	b.slackClick("UANA", "C1", ts, "Roll back")
	final := b.final(q)
	assert.Equal(t, domain.StatusAnswered, final.Status)
	assert.Equal(t, []string{"trigger: Deploy bot asks: Roll back api 1.4?", "resolve: Answered by uana on Slack: Roll back"},
		b.events(t, q, 2))
	b.slackSays("C1", ts, "Roll back")
	m, _ = b.slack.Message("C1", ts)
	assert.NotContains(t, m.Texts(), "Acknowledged by", "a final copy shows the outcome, not the pager's news")
	t.Logf("the requests PagerDuty received:\n%s", strings.Join(b.pd.Requests(), "\n"))
}

// Whoever is on call is mentioned under the copies (a reply in the Slack
// copy's thread, found on Slack by their email; a reply to the Discord
// copy, through the configured people) when the question is asked, and at
// each escalation step whoever is on call then: once per step, whatever a
// re-ask or a second replica does. When PagerDuty cannot be read, the
// reply says who is on call could not be determined.
func TestOnCallMentionedUnderTheCopies(t *testing.T) {
	rd := storetest.Redis(t)
	c := &clock{now: time.Now().UTC().Truncate(time.Second)}
	route := pagingRoute()
	route.Page = nil
	route.Escalation = []domain.EscalationStep{{After: domain.Duration(10 * time.Minute), Remind: true},
		{After: domain.Duration(20 * time.Minute), Remind: true}}
	b := newPaged(t, route, c, rd.URL)
	other := b.replica(t).app.Router()
	ask := domain.AskRequest{RunID: "run-m", Question: "Restart the queue?", Route: "oncall",
		Options: []domain.Option{{Label: "Restart"}, {Label: "Wait"}}}
	q := b.ask(ask)
	ts, msg := b.copyOn(q, "slack", "C1"), b.copyOn(q, "discord", "1000")

	onCallLines := func() []string {
		var out []string
		for _, m := range b.slack.Messages("C1") {
			if m.ThreadTS == ts && strings.Contains(m.Text, "on call") {
				out = append(out, m.Text)
			}
		}
		return out
	}
	waitLines := func(n int) []string {
		t.Helper()
		require.Eventually(t, func() bool { return len(onCallLines()) >= n }, 5*time.Second, 10*time.Millisecond,
			"the Slack thread holds %q", onCallLines())
		b.settle()
		require.NoError(t, other.Flush(context.Background()))
		return onCallLines()
	}
	ana := "<@UANA> — you are on call for schedule Primary: this question is waiting for you."
	assert.Equal(t, []string{ana}, waitLines(1))
	var reply *fakediscord.Message
	require.Eventually(t, func() bool {
		for _, m := range b.discord.Messages("1000") {
			if m.ReplyTo == msg {
				reply = &m
				return true
			}
		}
		return false
	}, 5*time.Second, 10*time.Millisecond, "no reply to the Discord copy")
	assert.Equal(t, "<@4455> — you are on call for schedule Primary: this question is waiting for you.", reply.Content)
	assert.Equal(t, []string{"user:4455"}, reply.Pings, "Ana, and only her, is notified on Discord")

	again := b.ask(ask)
	require.Equal(t, q.ID, again.ID, "the re-ask re-attaches")
	assert.Equal(t, []string{ana}, waitLines(1), "a re-ask mentions nobody again")

	// A hand-off to Bruno, whose chat identity is unknown: he is named.
	b.pd.SetOnCalls(fakepd.OnCall{User: fakepd.User{ID: "PBRU001", Name: "Bruno <!here>", Email: "bruno@example.com"},
		ScheduleID: pdPrimary, ScheduleName: "Primary", PolicyID: "P1", PolicyName: "Ops", Level: 1})
	c.add(10 * time.Minute)
	var wg sync.WaitGroup
	for _, r := range []*lifecycle.Router{b.router, other} { // both replicas sweep at once
		wg.Go(func() {
			_, err := r.EscalateDue(context.Background())
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	bruno := "Bruno &lt;!here&gt; (not found on Slack) — you are on call for schedule Primary: this question is waiting for you."
	assert.Equal(t, []string{ana, bruno}, waitLines(2), "step 1 mentions whoever is on call now, once")

	// PagerDuty cannot be read at step 2.
	b.pd.Fail(503, 503, 503, 503, 503, 503)
	c.add(10 * time.Minute)
	_, err := b.router.EscalateDue(context.Background())
	require.NoError(t, err)
	got := waitLines(3)
	assert.Equal(t, "Who is on call for schedule "+pdPrimary+" could not be determined: nobody is admitted through it until it can be read again.", got[2])
	for _, m := range b.slack.Calls("chat.postMessage") {
		assert.Empty(t, m.Error, "every reply is one Slack accepts: %v", m.Params)
	}
}
