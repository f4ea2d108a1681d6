package lifecycle_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/server/egress"
	"github.com/askbridge/askbridge/server/resume"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// localReceivers admits the tests' httptest receivers on loopback, as the
// local default (no tokens, loopback address) does.
var localReceivers = egress.MustNew(egress.Config{AllowLoopback: true})

var ctx = context.Background()

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// recorder is a chat channel that records what the Router asks of it.
type recorder struct {
	platform string
	mu       sync.Mutex
	posted   []domain.Target
	finished []string
	updated  []string
	reminded []string
	clock    *clock
	n        int
}

func (r *recorder) Platform() string { return r.platform }
func (r *recorder) Post(_ context.Context, q *domain.Question, t domain.Target) (domain.Target, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	t.MessageTS = fmt.Sprintf("%s-%d", t.Channel, r.n)
	r.posted = append(r.posted, t)
	return t, nil
}
func (r *recorder) Finish(_ context.Context, q *domain.Question, t domain.Target) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.finished = append(r.finished, t.Channel+": "+domain.OutcomeLine(q))
	return nil
}
func (r *recorder) Update(_ context.Context, q *domain.Question, t domain.Target) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updated = append(r.updated, t.Channel+": "+domain.TallyLine(q))
	return nil
}
func (r *recorder) Remind(_ context.Context, q *domain.Question, t domain.Target) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reminded = append(r.reminded, fmt.Sprintf("%s at +%s", t.Channel, r.clock.Now().Sub(q.CreatedAt)))
	return nil
}
func (r *recorder) get(f func() []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), f()...)
}

type fixture struct {
	router  *lifecycle.Router
	store   *store.Store
	clock   *clock
	slack   *recorder
	discord *recorder
}

func newFixture(t *testing.T, url string, routes ...domain.Route) *fixture {
	st, err := store.Open(ctx, store.Options{URL: url})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	c := &clock{now: time.Now().UTC().Truncate(time.Second)}
	f := &fixture{store: st, clock: c, slack: &recorder{platform: "slack", clock: c}, discord: &recorder{platform: "discord", clock: c}}
	f.router = lifecycle.NewRouter(lifecycle.RouterConfig{Store: st, Clock: c, Routes: routes,
		Channels: []lifecycle.Channel{f.slack, f.discord}, HasWebhookSecret: func(string) bool { return true }})
	t.Cleanup(func() { f.router.Close(ctx) })
	return f
}

func approval(run string) *domain.AskRequest {
	return &domain.AskRequest{RunID: run, Kind: domain.KindApproval, Question: "Deploy api v2 to production?",
		Options: []domain.Option{{Label: "Approve"}, {Label: "Reject"}, {Label: "Block", Veto: true}}}
}

func pick(label string) domain.RespondRequest { return domain.RespondRequest{Response: &label} }

func slackP(id string, groups ...string) domain.Person {
	return domain.Person{Platform: "slack", ID: id, Name: id, Groups: groups}
}

// TestPolicyMatrix: one responders policy on every surface. Chat adapters
// (clicks, modals, thread replies) fill the person's platform groups; the
// web inbox and the API pass their people; all go through Router.Answer.
func TestPolicyMatrix(t *testing.T) {
	f := newFixture(t, "")
	responders := &domain.Responders{Users: []string{"slack:U1", "discord:D1", "web:alice", "api:deploy-ci"},
		Groups: map[string][]string{"slack_usergroups": {"S-oncall"}, "discord_roles": {"R-oncall"}}, ExcludeRequester: true}
	cases := []struct {
		surface string
		who     domain.Person
		allowed bool
	}{
		{"slack user listed", slackP("U1"), true},
		{"slack user in group", slackP("U2", "S-oncall"), true},
		{"slack user outside", slackP("U3", "S-other"), false},
		{"slack requester in group", slackP("U9", "S-oncall"), false},
		{"slack id on discord", domain.Person{Platform: "discord", ID: "U1"}, false},
		{"discord user listed", domain.Person{Platform: "discord", ID: "D1"}, true},
		{"discord role", domain.Person{Platform: "discord", ID: "D2", Groups: []string{"R-oncall"}}, true},
		{"discord slack-group id as role", domain.Person{Platform: "discord", ID: "D3", Groups: []string{"S-oncall"}}, false},
		{"web operator listed", domain.Person{Platform: "web", ID: "alice"}, true},
		{"web operator not listed", domain.Person{Platform: "web", ID: "mallory"}, false},
		{"api named person", domain.Person{Platform: "api", ID: "deploy-ci"}, true},
		{"api anonymous", domain.Person{Platform: "api", ID: "local"}, false},
	}
	for i, c := range cases {
		t.Run(c.surface, func(t *testing.T) {
			req := approval(fmt.Sprint("run-", i))
			req.Responders, req.RequestedBy = responders, "slack:U9"
			res, err := f.router.Ask(ctx, "ops", req, "")
			require.NoError(t, err)
			q, err := f.router.Answer(ctx, "ops", res.Question.ID, pick("Approve"), c.who)
			if c.allowed {
				require.NoError(t, err)
				assert.Equal(t, domain.StatusAnswered, q.Status)
				return
			}
			require.Error(t, err)
			assert.Equal(t, domain.ENotAllowed, domain.ErrorCode(err))
			assert.Contains(t, err.Error(), "who may answer: slack:U1")
			got, _ := f.store.Get(ctx, "ops", res.Question.ID)
			assert.Equal(t, domain.StatusPending, got.Status, "a refused attempt changes nothing")
			// Dismissing is refused the same way.
			_, err = f.router.Cancel(ctx, "ops", res.Question.ID, domain.CancelUser, &c.who)
			assert.Equal(t, domain.ENotAllowed, domain.ErrorCode(err))
			trail, _ := f.store.Audit(ctx, "ops", res.Question.ID, 0)
			var refused int
			for _, e := range trail {
				if e.Type == "refused" && e.By != nil && e.By.ID == c.who.ID {
					refused++
				}
			}
			assert.Equal(t, 2, refused, "refused answer and dismissal are recorded")
		})
	}
}

func TestVetoAndChangedVote(t *testing.T) {
	f := newFixture(t, "")
	req := approval("r1")
	two := 2
	req.ApprovalsRequired = &two
	req.Targets = []domain.Target{{Platform: "slack", Channel: "C1"}}
	res, err := f.router.Ask(ctx, "ops", req, "")
	require.NoError(t, err)
	id := res.Question.ID

	q, err := f.router.Answer(ctx, "ops", id, pick("Approve"), slackP("alice"))
	require.NoError(t, err)
	assert.Equal(t, domain.StatusPending, q.Status)
	assert.Equal(t, "Approve: 1 of 2 approvals — alice", domain.TallyLine(q))
	q, err = f.router.Answer(ctx, "ops", id, pick("Reject"), slackP("alice"))
	require.NoError(t, err, "a second click changes the vote")
	assert.Equal(t, "Reject: 1 of 2 approvals — alice", domain.TallyLine(q))
	q, err = f.router.Answer(ctx, "ops", id, pick("Approve"), slackP("bob"))
	require.NoError(t, err)
	assert.Equal(t, domain.StatusPending, q.Status, "one Approve and one Reject: not yet")
	assert.Equal(t, "Reject: 1 of 2 approvals — alice; Approve: 1 of 2 approvals — bob", domain.TallyLine(q))
	require.Eventually(t, func() bool { return len(f.slack.get(func() []string { return f.slack.updated })) == 3 },
		2*time.Second, 10*time.Millisecond, "every vote re-renders the copy with the tally")
	q, err = f.router.Answer(ctx, "ops", id, pick("Approve"), slackP("carol"))
	require.NoError(t, err)
	assert.Equal(t, domain.StatusAnswered, q.Status)
	assert.Equal(t, "Approve", q.Answers["Deploy api v2 to production?"])
	assert.Equal(t, "carol", q.RespondedBy.ID)
	assert.Len(t, q.Votes, 3)
	assert.Equal(t, "Approved by bob, carol: Approve", domain.OutcomeLine(q))
	_, err = f.router.Answer(ctx, "ops", id, pick("Approve"), slackP("dave"))
	assert.Equal(t, domain.EAlreadyAnswered, domain.ErrorCode(err))

	// A veto option resolves at its first vote.
	res, err = f.router.Ask(ctx, "ops", func() *domain.AskRequest { r := approval("r2"); r.ApprovalsRequired = &two; return r }(), "")
	require.NoError(t, err)
	q, err = f.router.Answer(ctx, "ops", res.Question.ID, pick("Block"), slackP("erin"))
	require.NoError(t, err)
	assert.Equal(t, domain.StatusAnswered, q.Status)
	assert.Equal(t, "Block", q.Answers["Deploy api v2 to production?"])
	assert.Equal(t, "Vetoed by erin: Block", domain.OutcomeLine(q))

	// Free text cannot be tallied: a vote must pick an option.
	res, err = f.router.Ask(ctx, "ops", func() *domain.AskRequest { r := approval("r3"); r.ApprovalsRequired = &two; return r }(), "")
	require.NoError(t, err)
	_, err = f.router.Answer(ctx, "ops", res.Question.ID, pick("ship it anyway"), slackP("erin"))
	assert.Equal(t, domain.EInvalidAnswer, domain.ErrorCode(err))
	q, _ = f.store.Get(ctx, "ops", res.Question.ID)
	assert.Empty(t, q.Votes)
}

// TestConcurrentVotesOnTwoReplicas: 2-of-3 on real Redis, three people
// voting at once on two replicas, 30 rounds: exactly two votes count, the
// question resolves once, the third person is told it is already answered.
func TestConcurrentVotesOnTwoReplicas(t *testing.T) {
	srv := storetest.Redis(t)
	a, b := newFixture(t, srv.URL), newFixture(t, srv.URL)
	two := 2
	for round := 0; round < 30; round++ {
		req := approval(fmt.Sprint("run-", round))
		req.ApprovalsRequired = &two
		res, err := a.router.Ask(ctx, "ops", req, "")
		require.NoError(t, err)
		var counted, late atomic.Int32
		var wg sync.WaitGroup
		for i, who := range []string{"alice", "bob", "carol"} {
			r := []*lifecycle.Router{a.router, b.router}[i%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := r.Answer(ctx, "ops", res.Question.ID, pick("Approve"), slackP(who))
				switch {
				case err == nil:
					counted.Add(1)
				case domain.ErrorCode(err) == domain.EAlreadyAnswered:
					late.Add(1)
				default:
					t.Errorf("unexpected: %v", err)
				}
			}()
		}
		wg.Wait()
		require.Equal(t, int32(2), counted.Load(), "round %d: two votes counted", round)
		require.Equal(t, int32(1), late.Load(), "round %d: the third is told it is already answered", round)
		q, _ := a.store.Get(ctx, "ops", res.Question.ID)
		require.Equal(t, domain.StatusAnswered, q.Status)
		require.Len(t, q.Votes, 2, "round %d", round)
		trail, _ := a.store.Audit(ctx, "ops", res.Question.ID, 0)
		resolutions := 0
		for _, e := range trail {
			if e.Type == "answered" {
				resolutions++
			}
		}
		require.Equal(t, 1, resolutions, "round %d: resolved exactly once", round)
	}
}

func TestEscalationAndRemindersOnTheClock(t *testing.T) {
	role := domain.Responders{Groups: map[string][]string{"discord_roles": {"R-managers"}}}
	route := domain.Route{Name: "oncall", Targets: []domain.Target{{Platform: "slack", Channel: "C-ops"}},
		Responders: domain.Responders{Groups: map[string][]string{"slack_usergroups": {"S-oncall"}}}, Timeout: time.Hour,
		Escalation: []domain.EscalationStep{
			{After: domain.Duration(10 * time.Minute), Remind: true},
			{After: domain.Duration(20 * time.Minute), Targets: []domain.Target{{Platform: "discord", Channel: "D-mgmt"}}, Responders: &role},
		}}
	f := newFixture(t, "", route)
	res, err := f.router.Ask(ctx, "ops", &domain.AskRequest{RunID: "r1", Question: "Roll back?", Route: "oncall",
		Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}}, "")
	require.NoError(t, err)
	id := res.Question.ID
	manager := domain.Person{Platform: "discord", ID: "M1", Groups: []string{"R-managers"}}
	_, err = f.router.Answer(ctx, "ops", id, pick("Yes"), manager)
	assert.Equal(t, domain.ENotAllowed, domain.ErrorCode(err), "managers may not answer before the escalation")

	step := func(d time.Duration) int {
		f.clock.add(d)
		n, err := f.router.EscalateDue(ctx)
		require.NoError(t, err)
		return n
	}
	assert.Equal(t, 0, step(9*time.Minute+59*time.Second), "nothing before 10 min")
	assert.Equal(t, 1, step(time.Second))
	assert.Equal(t, []string{"C-ops at +10m0s"}, f.slack.get(func() []string { return f.slack.reminded }))
	assert.Equal(t, 0, step(time.Minute), "a step runs once")
	assert.Empty(t, f.discord.get(func() []string { return f.discord.posted2() }))
	assert.Equal(t, 1, step(9*time.Minute))
	posted := f.discord.get(func() []string { return f.discord.posted2() })
	assert.Equal(t, []string{"D-mgmt"}, posted, "a copy on the next targets at 20 min")
	q, _ := f.store.Get(ctx, "ops", id)
	assert.Equal(t, 2, q.EscalationLevel)
	assert.Contains(t, q.Responders.Group("discord_roles"), "R-managers", "their responders added")
	require.Len(t, q.Targets, 2)
	assert.Equal(t, 0, step(time.Hour), "no step after the last")

	_, err = f.router.Answer(ctx, "ops", id, pick("Yes"), manager)
	require.NoError(t, err, "the first answer anywhere wins")
	require.Eventually(t, func() bool {
		return len(f.slack.get(func() []string { return f.slack.finished })) == 1 &&
			len(f.discord.get(func() []string { return f.discord.finished })) == 1
	}, 2*time.Second, 10*time.Millisecond, "both copies finished")
	assert.Equal(t, []string{"C-ops: Answered by discord:M1: Yes"}, f.slack.get(func() []string { return f.slack.finished }))

	trail, _ := f.store.Audit(ctx, "ops", id, 0)
	var types []string
	for _, e := range trail {
		types = append(types, e.Type)
	}
	assert.Equal(t, []string{"asked", "posted", "refused", "escalated", "reminded", "escalated", "posted", "answered"}, types)
}

func (r *recorder) posted2() []string {
	var out []string
	for _, t := range r.posted {
		out = append(out, t.Channel)
	}
	return out
}

// TestDefaultOnTimeout reaches a waiter and a resume webhook as answered,
// by system:timeout, flagged defaulted.
func TestDefaultOnTimeout(t *testing.T) {
	f := newFixture(t, "")
	var body []byte
	got := make(chan struct{}, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		got <- struct{}{}
	}))
	defer receiver.Close()
	req := approval("r1")
	req.OnTimeout = &domain.OnTimeout{Answer: "Reject"}
	req.Timeout = func() *domain.Duration { d := domain.Duration(time.Minute); return &d }()
	req.Resume = &domain.ResumeRequest{URL: receiver.URL}
	res, err := f.router.Ask(ctx, "ops", req, "")
	require.NoError(t, err)
	_, err = f.store.PauseRun(ctx, "ops", "r1", "", f.clock.Now())
	require.NoError(t, err)

	waited := make(chan *domain.Question, 1)
	go func() {
		q, _ := f.router.Wait(ctx, "ops", res.Question.ID, 10*time.Second)
		waited <- q
	}()
	f.clock.add(59 * time.Second)
	n, _ := f.router.ExpireDue(ctx)
	assert.Equal(t, 0, n)
	f.clock.add(time.Second)
	n, _ = f.router.ExpireDue(ctx)
	assert.Equal(t, 1, n)
	q := <-waited
	assert.Equal(t, domain.StatusAnswered, q.Status)
	assert.True(t, q.Defaulted)
	assert.Equal(t, "system:timeout", q.RespondedBy.Platform+":"+q.RespondedBy.ID)
	assert.Equal(t, map[string]string{"Deploy api v2 to production?": "Reject"}, q.Answers)
	assert.Equal(t, "Reject", q.Response)

	d := resume.New(resume.Config{Store: f.store, Egress: localReceivers, Clock: f.clock, Secret: func(string) []byte { return []byte("s") }})
	d.Once(ctx)
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("no resume webhook")
	}
	var p struct {
		Event    string         `json:"event"`
		Question map[string]any `json:"question"`
		Run      map[string]any `json:"run"`
	}
	require.NoError(t, json.Unmarshal(body, &p))
	assert.Equal(t, "question.answered", p.Event)
	assert.Equal(t, true, p.Question["defaulted"])
	assert.Equal(t, "Reject", p.Question["response"])
	assert.Equal(t, "r1", p.Run["resumed_from"])
}

// TestAuditTrailOfACompleteFlow: asked, posted, refused click, votes,
// answered, resumed, webhook delivered — in order.
func TestAuditTrailOfACompleteFlow(t *testing.T) {
	f := newFixture(t, "")
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer receiver.Close()
	req := approval("r1")
	two := 2
	req.ApprovalsRequired = &two
	req.Targets = []domain.Target{{Platform: "slack", Channel: "C1"}}
	req.Responders = &domain.Responders{Groups: map[string][]string{"slack_usergroups": {"S1"}}}
	req.Resume = &domain.ResumeRequest{URL: receiver.URL}
	res, err := f.router.Ask(ctx, "ops", req, "")
	require.NoError(t, err)
	id := res.Question.ID
	_, err = f.router.Answer(ctx, "ops", id, pick("Approve"), slackP("intruder"))
	require.Error(t, err)
	_, err = f.store.PauseRun(ctx, "ops", "r1", "", f.clock.Now())
	require.NoError(t, err)
	_, err = f.router.Answer(ctx, "ops", id, pick("Approve"), slackP("alice", "S1"))
	require.NoError(t, err)
	_, err = f.router.Answer(ctx, "ops", id, pick("Approve"), slackP("bob", "S1"))
	require.NoError(t, err)
	resume.New(resume.Config{Store: f.store, Egress: localReceivers, Secret: func(string) []byte { return []byte("s") }}).Once(ctx)

	trail, err := f.store.Audit(ctx, "ops", id, 0)
	require.NoError(t, err)
	var lines []string
	for _, e := range trail {
		by := ""
		if e.By != nil {
			by = " by " + e.By.ID
		}
		lines = append(lines, e.Type+by)
	}
	assert.Equal(t, []string{"asked", "posted", "refused by intruder", "voted by alice", "voted by bob", "resumed",
		"answered by bob", "webhook.delivered"}, lines)
	assert.Contains(t, trail[1].Detail, "C1")
	assert.Contains(t, trail[3].Detail, "Approve (1 of 2)")
}

// flaky fails Finish a number of times first, as a platform in a storm.
type flaky struct {
	recorder
	fails atomic.Int32
}

func (f *flaky) Finish(ctx context.Context, q *domain.Question, t domain.Target) error {
	if f.fails.Add(-1) >= 0 {
		return fmt.Errorf("HTTP 503")
	}
	return f.recorder.Finish(ctx, q, t)
}

// TestFinishingACopyOutlastsAStorm: a copy whose update fails many times
// is still finished once the platform recovers, not given up after a few.
func TestFinishingACopyOutlastsAStorm(t *testing.T) {
	st, err := store.Open(ctx, store.Options{})
	require.NoError(t, err)
	defer st.Close()
	ch := &flaky{recorder: recorder{platform: "slack", clock: &clock{now: time.Now()}}}
	ch.fails.Store(12)
	r := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st, Channels: []lifecycle.Channel{ch}, CopyRetryBackoff: time.Millisecond})
	res, err := r.Ask(ctx, "ops", &domain.AskRequest{RunID: "r1", Question: "Go?", Targets: []domain.Target{{Platform: "slack", Channel: "C1"}}}, "")
	require.NoError(t, err)
	_, err = r.Answer(ctx, "ops", res.Question.ID, pick("yes"), slackP("alice"))
	require.NoError(t, err)
	require.NoError(t, r.Flush(ctx))
	assert.Equal(t, []string{"C1: Answered by alice: yes"}, ch.get(func() []string { return ch.finished }))
	assert.Equal(t, int32(-1), ch.fails.Load(), "12 failures, then the 13th attempt finished it")
}
