package channeltest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// The inbound suite: what happens when people act on a posted question,
// the same on every surface (Slack, Discord, the web inbox). Each surface's
// tests call RunInbound with a factory that builds the surface on the
// suite's Router config and a Driver that acts as a suite person there.
// Each case asserts what a person would notice — what they were told
// privately, what the copy shows, what the agent gets — never how the
// surface got there.
//
// Behaviour every surface shares (decided here, asserted by RunInbound):
//   - The first answer wins: a second person who answers (on a copy that
//     still showed the controls) is told, in the words of domain.Words, who
//     answered and with what, and the record does not change.
//   - Someone who may not answer (the responders name others, or they asked
//     for it and the route excludes the requester) is told privately who
//     may answer; the question stays pending, with no vote.
//   - On an approval that needs two, a person's repeated vote counts once;
//     a second person decides it.
//   - A click after the question was answered, withdrawn, dismissed or
//     expired elsewhere is told how it ended.
//   - A dismissal asks first where the surface can (Slack's confirmation
//     dialog, the web inbox's Dismiss… form, in the table's words), then
//     cancels with reason "user", and the copy names who dismissed. A
//     surface that cannot ask (Discord) says so with ConfirmsDismissal
//     false; its documented alternative is asserted instead: one action
//     dismisses at once and every copy says who did.
//   - A webhook-mode answer waits for the run's pause (RouterConfig.
//     PauseWait): recorded once the run pauses; with no pause the person is
//     told the run has not paused and nothing is recorded.

// Suite people: who a Driver acts as. Each surface maps them to its own
// users (Slack user ids, Discord users, web operators).
const (
	Alice   = "alice"
	Bob     = "bob"
	Mallory = "mallory"
)

// Driver acts as a suite person on one surface. Every action returns once
// the surface has handled it (its background work is done), and acts on
// the controls of q as it was posted — as a person whose client still shows
// them, even when the copy has changed since. A person who is refused at a
// step (a modal that does not open) stops there, as a person would.
type Driver interface {
	// Person is who name is on the surface: the platform user a click
	// comes from, the operator a web session signs in as. DenyWithNote
	// denies an approval through "Deny with note…" (RunDenyWithNote).
	NoteDriver
	// Words is how the surface formats the table's sentences.
	Words() domain.Words

	// Click presses the button of the option labelled label, on q's first
	// item (a single-select question or an approval).
	Click(name string, q *domain.Question, label string)
	// Other answers q's first item with free text: "Other…" on an item
	// with options, the text box of an open-ended one.
	Other(name string, q *domain.Question, text string)
	// Submit answers every item of q at once: for each item (by its
	// question), the labels of the options chosen — several on a
	// multi-select item — and any free text ("Other", open-ended); then
	// sends them (Submit).
	Submit(name string, q *domain.Question, answers map[string][]string)
	// Dismiss dismisses q, going through the surface's confirmation when
	// it has one, and returns the words of that confirmation ("" without
	// one, or when the person's page no longer offers it).
	Dismiss(name string, q *domain.Question) (asked string)

	// Told is everything name was told privately so far, oldest first:
	// ephemeral messages, the alert or notice of the page a form led to.
	Told(name string) []string
	// Copy is the text of q's copy as a person reads it now (the message,
	// the question's page); Live reports whether it still shows controls
	// to answer with.
	Copy(q *domain.Question) string
	Live(q *domain.Question) bool
}

// InboundEnv is one surface under the inbound suite.
type InboundEnv struct {
	// Router has the surface added (a Channel, or the web inbox reading
	// it) and uses the suite's RouterConfig.
	Router *lifecycle.Router
	// Targets are where questions are posted; nil for a surface that
	// shows every question of its projects (the web inbox). The suite asks
	// in project "ops".
	Targets []domain.Target
	Driver  Driver
	// ConfirmsDismissal: the surface asks before a dismissal. False only
	// where the platform cannot (documented in the surface's guide).
	ConfirmsDismissal bool
}

// InboundFactory builds an InboundEnv; it passes rc (Clock, Logger,
// PauseWait set by the suite) to lifecycle.NewRouter after adding its
// Store.
type InboundFactory func(t *testing.T, rc lifecycle.RouterConfig) *InboundEnv

// SuitePauseWait is how long the suite's Router waits for a webhook-mode
// run to pause (RouterConfig.PauseWait).
const SuitePauseWait = 1500 * time.Millisecond

// RunInbound runs every inbound case against surfaces newEnv builds, one
// env per case.
func RunInbound(t *testing.T, newEnv InboundFactory) {
	t.Run("FirstAnswerWins", func(t *testing.T) { firstAnswerWins(t, newEnv) })
	t.Run("NotAllowed", func(t *testing.T) { notAllowed(t, newEnv) })
	t.Run("VotesCountOnce", func(t *testing.T) { votesCountOnce(t, newEnv) })
	t.Run("LateClick", func(t *testing.T) { lateClick(t, newEnv) })
	t.Run("Dismissal", func(t *testing.T) { dismissal(t, newEnv) })
	t.Run("WebhookWaitsForPause", func(t *testing.T) { webhookWaitsForPause(t, newEnv) })
	t.Run("Adaptive", func(t *testing.T) { adaptive(t, newEnv) })
	t.Run("DenyWithNote", func(t *testing.T) {
		RunDenyWithNote(t, func(t *testing.T, rc lifecycle.RouterConfig) *NoteEnv {
			env := newEnv(t, rc)
			return &NoteEnv{Router: env.Router, Targets: env.Targets, Driver: env.Driver}
		})
	})
}

// in is one inbound case's surface.
type in struct {
	t     *testing.T
	env   *InboundEnv
	d     Driver
	w     domain.Words
	clock *Clock
}

func startInbound(t *testing.T, newEnv InboundFactory) *in {
	t.Helper()
	clock := &Clock{now: time.Now().UTC()}
	logs := &logBuffer{}
	rc := lifecycle.RouterConfig{Clock: clock, Logger: logs.logger(), PauseWait: SuitePauseWait,
		CopyRetryBackoff: 5 * time.Millisecond, CopyRetryFor: time.Second,
		HasWebhookSecret: func(string) bool { return true }}
	env := newEnv(t, rc)
	return &in{t: t, env: env, d: env.Driver, w: env.Driver.Words(), clock: clock}
}

// ask asks req in project "ops" on the env's targets.
func (s *in) ask(req domain.AskRequest) *domain.Question {
	s.t.Helper()
	if req.AgentID == "" {
		req.AgentID, req.AgentName = "deploy-bot", "Deploy bot"
	}
	if req.RunID == "" {
		req.RunID = "run-1"
	}
	req.Targets = s.env.Targets
	res, err := s.env.Router.Ask(context.Background(), "ops", &req, "")
	if err != nil {
		s.t.Fatalf("ask: %v", err)
	}
	for _, tg := range res.Question.Targets {
		if tg.Error != "" || tg.MessageTS == "" {
			s.t.Fatalf("posting to %s failed: %q", tg.Channel, tg.Error)
		}
	}
	return res.Question
}

// get reads q's record as it is now.
func (s *in) get(q *domain.Question) *domain.Question {
	s.t.Helper()
	got, err := s.env.Router.Question(context.Background(), q.ProjectID, q.ID)
	if err != nil {
		s.t.Fatal(err)
	}
	return got
}

// settle waits for the Router's background copy updates.
func (s *in) settle() {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.env.Router.Flush(ctx); err != nil {
		s.t.Fatalf("flush: %v", err)
	}
}

// told runs act and returns what name was told privately meanwhile.
func (s *in) told(name string, act func()) []string {
	before := len(s.d.Told(name))
	act()
	return s.d.Told(name)[before:]
}

// refused runs act, which the surface must refuse, and returns the last
// thing name was told meanwhile (the test fails when nothing was).
func (s *in) refused(name, what string, act func()) string {
	s.t.Helper()
	msgs := s.told(name, act)
	if len(msgs) == 0 {
		s.t.Fatalf("%s: %s was told nothing", what, name)
	}
	return msgs[len(msgs)-1]
}

// says checks that a message (or copy) holds every one of want.
func (s *in) says(what, got string, want ...string) {
	s.t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			s.t.Errorf("%s does not say %q:\n%s", what, w, got)
		}
	}
}

// sameRecord checks that what a refused action left is the record before.
func (s *in) sameRecord(what string, before, after *domain.Question) {
	s.t.Helper()
	if after.Status != before.Status || after.Response != before.Response || after.CancelReason != before.CancelReason ||
		len(after.Votes) != len(before.Votes) || keyOf(after.RespondedBy) != keyOf(before.RespondedBy) {
		s.t.Errorf("%s changed the record: %s %q by %v (%d votes), was %s %q by %v (%d votes)", what,
			after.Status, after.Response, after.RespondedBy, len(after.Votes), before.Status, before.Response, before.RespondedBy, len(before.Votes))
	}
}

func (s *in) person(name string) *domain.Person { p := s.d.Person(name); return &p }

// keyOf is the person's "<platform>:<id>", "" for nobody.
func keyOf(p *domain.Person) string {
	if p == nil {
		return ""
	}
	return p.Key()
}

// is reports whether p is the suite person name.
func (s *in) is(p *domain.Person, name string) bool { return keyOf(p) == s.d.Person(name).Key() }

func lower(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strings.ToLower(x)
	}
	return out
}

func authAsk() domain.AskRequest {
	return domain.AskRequest{Questions: []domain.Item{{Question: "Which auth method?", Header: "Auth", Options: []domain.Option{
		opt("OAuth 2.0", "Standard"), opt("API key", "Simple")}}}}
}

// severalAsk has three items: single-select, multi-select, open-ended.
func severalAsk() domain.AskRequest {
	return domain.AskRequest{Questions: []domain.Item{
		{Question: "Which auth method?", Header: "Auth", Options: []domain.Option{opt("OAuth 2.0", ""), opt("API key", "")}},
		{Question: "Which regions?", Header: "Regions", MultiSelect: true, Options: []domain.Option{opt("eu-west", ""), opt("us-east", ""), opt("ap-south", "")}},
		{Question: "Anything else?", Header: "Notes"},
	}}
}

func gateAsk(approvals int) domain.AskRequest {
	return domain.AskRequest{Kind: domain.KindApproval, Question: "Deploy api v2.14 to production?",
		Options: []domain.Option{opt("Approve", ""), opt("Deny", "")}, ApprovalsRequired: &approvals}
}

// firstAnswerWins: alice answers, then bob answers the same way on a copy
// that still showed the controls: alice's answer is recorded, bob is told
// who answered and with what, and nothing changes.
func firstAnswerWins(t *testing.T, newEnv InboundFactory) {
	cases := []struct {
		name       string
		ask        domain.AskRequest
		alice, bob func(d Driver, q *domain.Question)
		want       map[string]string // the answers recorded
	}{
		{"click", authAsk(),
			func(d Driver, q *domain.Question) { d.Click(Alice, q, "API key") },
			func(d Driver, q *domain.Question) { d.Click(Bob, q, "OAuth 2.0") },
			map[string]string{"Which auth method?": "API key"}},
		{"other", authAsk(),
			func(d Driver, q *domain.Question) { d.Other(Alice, q, "Mutual TLS") },
			func(d Driver, q *domain.Question) { d.Other(Bob, q, "SAML via Okta") },
			map[string]string{"Which auth method?": "Mutual TLS"}},
		{"submit several items", severalAsk(),
			func(d Driver, q *domain.Question) {
				d.Submit(Alice, q, map[string][]string{"Which auth method?": {"API key"},
					"Which regions?": {"eu-west", "ap-south", "us-central"}, "Anything else?": {"Ship it on Friday"}})
			},
			func(d Driver, q *domain.Question) {
				d.Submit(Bob, q, map[string][]string{"Which auth method?": {"OAuth 2.0"},
					"Which regions?": {"us-east"}, "Anything else?": {"Hold it"}})
			},
			map[string]string{"Which auth method?": "API key", "Which regions?": "eu-west, ap-south, us-central", "Anything else?": "Ship it on Friday"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startInbound(t, newEnv)
			q := s.ask(c.ask)
			c.alice(s.d, q)
			first := s.get(q)
			if first.Status != domain.StatusAnswered || !s.is(first.RespondedBy, Alice) {
				t.Fatalf("alice's answer: %s by %v", first.Status, first.RespondedBy)
			}
			for item, want := range c.want {
				if got := first.Answers[item]; got != want {
					t.Errorf("alice's answer to %q: %q, want %q", item, got, want)
				}
			}
			s.settle()
			msg := s.refused(Bob, "a second answer", func() { c.bob(s.d, q) })
			s.says("what bob was told", msg, s.w.AlreadyAnswered(first).Text, s.w.Who(s.person(Alice)))
			s.says("what bob was told", msg, first.Answers[c.ask.Items()[0].Question])
			s.sameRecord("bob's answer", first, s.get(q))
			s.settle()
			if s.d.Live(q) {
				t.Error("the answered copy still shows controls")
			}
			s.says("the copy", s.d.Copy(q), s.w.Who(s.person(Alice)))
		})
	}
}

// notAllowed: someone the responders do not name, or the requester the
// route excludes, is told privately who may answer, and nothing changes.
func notAllowed(t *testing.T, newEnv InboundFactory) {
	only := func(s *in, req domain.AskRequest) domain.AskRequest {
		req.Responders = &domain.Responders{Users: []string{s.d.Person(Alice).Key(), s.d.Person(Bob).Key()}}
		return req
	}
	cases := []struct {
		name string
		ask  func(s *in) domain.AskRequest
		act  func(d Driver, q *domain.Question) // mallory's
		ok   func(d Driver, q *domain.Question) // then alice's, who may answer
	}{
		{"vote on a gate", func(s *in) domain.AskRequest { return only(s, gateAsk(2)) },
			func(d Driver, q *domain.Question) { d.Click(Mallory, q, "Approve") },
			func(d Driver, q *domain.Question) { d.Click(Alice, q, "Approve") }},
		{"click", func(s *in) domain.AskRequest { return only(s, authAsk()) },
			func(d Driver, q *domain.Question) { d.Click(Mallory, q, "API key") }, func(d Driver, q *domain.Question) { d.Click(Alice, q, "OAuth 2.0") }},
		{"other", func(s *in) domain.AskRequest { return only(s, authAsk()) },
			func(d Driver, q *domain.Question) { d.Other(Mallory, q, "Let me in") }, func(d Driver, q *domain.Question) { d.Click(Alice, q, "OAuth 2.0") }},
		{"submit", func(s *in) domain.AskRequest { return only(s, severalAsk()) },
			func(d Driver, q *domain.Question) {
				d.Submit(Mallory, q, map[string][]string{"Which auth method?": {"API key"}, "Which regions?": {"eu-west"}, "Anything else?": {"no"}})
			}, func(d Driver, q *domain.Question) {
				d.Submit(Alice, q, map[string][]string{"Which auth method?": {"OAuth 2.0"}, "Which regions?": {"us-east"}, "Anything else?": {"yes"}})
			}},
		{"dismiss", func(s *in) domain.AskRequest { return only(s, authAsk()) },
			func(d Driver, q *domain.Question) { d.Dismiss(Mallory, q) }, func(d Driver, q *domain.Question) { d.Click(Alice, q, "OAuth 2.0") }},
		{"the requester", func(s *in) domain.AskRequest {
			req := authAsk()
			req.RequestedBy = s.d.Person(Mallory).Key()
			req.Responders = &domain.Responders{Users: []string{s.d.Person(Alice).Key(), s.d.Person(Mallory).Key()}, ExcludeRequester: true}
			return req
		}, func(d Driver, q *domain.Question) { d.Click(Mallory, q, "API key") }, func(d Driver, q *domain.Question) { d.Click(Alice, q, "OAuth 2.0") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startInbound(t, newEnv)
			q := s.ask(c.ask(s))
			before := s.get(q)
			msg := s.refused(Mallory, "someone not allowed", func() { c.act(s.d, q) })
			s.says("what mallory was told", msg, s.w.NotAllowed(before, s.d.Person(Mallory)).Text, s.d.Person(Alice).Key())
			if c.name == "the requester" {
				s.says("what the requester was told", msg, "You asked for this")
			}
			after := s.get(q)
			s.sameRecord("a refused action", before, after)
			if after.Status != domain.StatusPending || len(after.Votes) != 0 {
				t.Errorf("after mallory: %s with %d votes, want pending with none", after.Status, len(after.Votes))
			}
			s.settle()
			if !s.d.Live(q) {
				t.Error("the copy no longer takes answers after a refused action")
			}
			// Those named may still answer.
			c.ok(s.d, q)
			if got := s.get(q); got.Status == domain.StatusPending && (len(got.Votes) != 1 || !s.is(&got.Votes[0].By, Alice)) ||
				got.Status == domain.StatusAnswered && !s.is(got.RespondedBy, Alice) || got.Status.Final() && got.Status != domain.StatusAnswered {
				t.Errorf("alice, who may answer, was not recorded after the refusal: %s by %v, votes %+v", got.Status, got.RespondedBy, got.Votes)
			}
		})
	}
}

// votesCountOnce: on an approval that needs two, alice voting twice leaves
// it pending with her one vote; bob's vote decides it.
func votesCountOnce(t *testing.T, newEnv InboundFactory) {
	s := startInbound(t, newEnv)
	q := s.ask(gateAsk(2))
	s.d.Click(Alice, q, "Approve")
	s.d.Click(Alice, q, "Approve")
	got := s.get(q)
	if got.Status != domain.StatusPending || len(got.Votes) != 1 || !s.is(&got.Votes[0].By, Alice) {
		t.Fatalf("after alice voted twice: %s with votes %+v, want pending with alice's one vote", got.Status, got.Votes)
	}
	s.settle()
	if !s.d.Live(q) {
		t.Error("the copy stopped taking votes after one of two")
	}
	s.says("the copy after one vote", s.d.Copy(q), "1 of 2")
	s.d.Click(Bob, q, "Approve")
	got = s.get(q)
	if got.Status != domain.StatusAnswered || got.Response != "Approve" || len(got.Votes) != 2 {
		t.Fatalf("after bob's vote: %s %q with %d votes, want answered Approve with 2", got.Status, got.Response, len(got.Votes))
	}
	s.settle()
	if s.d.Live(q) {
		t.Error("the decided copy still shows controls")
	}
	s.says("the decided copy", s.d.Copy(q), "Approve", s.d.Person(Alice).Name, s.d.Person(Bob).Name)
}

// lateClick: a click after the question ended elsewhere is told how it
// ended, and changes nothing.
func lateClick(t *testing.T, newEnv InboundFactory) {
	carol := domain.Person{Platform: "api", ID: "carol", Name: "carol"}
	cases := []struct {
		name string
		end  func(s *in, q *domain.Question)
		want func(s *in) []string // besides the table's sentence
	}{
		{"answered", func(s *in, q *domain.Question) {
			key := "API key"
			if _, err := s.env.Router.Answer(context.Background(), "ops", q.ID, domain.RespondRequest{Response: &key}, carol); err != nil {
				s.t.Fatal(err)
			}
		}, func(*in) []string { return []string{"carol", "API key"} }},
		{"withdrawn", func(s *in, q *domain.Question) {
			if _, err := s.env.Router.CancelWithNote(context.Background(), "ops", q.ID, domain.CancelAgent, "run 7 took over", nil); err != nil {
				s.t.Fatal(err)
			}
		}, func(*in) []string { return []string{"withdrawn", "run 7 took over"} }},
		{"expired", func(s *in, q *domain.Question) {
			s.clock.Add(domain.MaxTimeout + time.Hour)
			if n, err := s.env.Router.ExpireDue(context.Background()); err != nil || n != 1 {
				s.t.Fatalf("expiring: %d, %v", n, err)
			}
		}, func(*in) []string { return []string{"expired"} }},
		{"dismissed", func(s *in, q *domain.Question) { s.d.Dismiss(Bob, q) },
			func(s *in) []string { return []string{"dismissed", s.w.Who(s.person(Bob))} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startInbound(t, newEnv)
			q := s.ask(authAsk())
			c.end(s, q)
			s.settle()
			final := s.get(q)
			if !final.Status.Final() {
				t.Fatalf("the question is still %s", final.Status)
			}
			msg := s.refused(Alice, "a late click", func() { s.d.Click(Alice, q, "OAuth 2.0") })
			want := c.want(s)
			s.says("what the late clicker was told", msg, s.w.Late(final).Text)
			s.says("what the late clicker was told", strings.ToLower(msg), lower(want)...)
			s.sameRecord("a late click", final, s.get(q))
			s.settle()
			if s.d.Live(q) {
				t.Error("the finished copy still shows controls")
			}
			s.says("the finished copy", strings.ToLower(s.d.Copy(q)), lower(want)...)
		})
	}
}

// dismissal: a dismissal asks first where the surface can, then cancels
// with reason user, and the copy names who dismissed; a second dismissal
// is told it already was.
func dismissal(t *testing.T, newEnv InboundFactory) {
	s := startInbound(t, newEnv)
	q := s.ask(authAsk())
	asked := s.d.Dismiss(Alice, q)
	if s.env.ConfirmsDismissal {
		ask := s.w.DismissConfirm()
		s.says("the confirmation before a dismissal", asked, ask.Text)
	} else if asked != "" {
		t.Errorf("the surface says it cannot ask before a dismissal, yet asked %q", asked)
	}
	// Without a confirmation step (the documented alternative), the one
	// action dismissed it at once: the assertions below hold right after
	// it, on every copy.
	got := s.get(q)
	if got.Status != domain.StatusCancelled || got.CancelReason != domain.CancelUser || !s.is(got.RespondedBy, Alice) {
		t.Fatalf("after alice's dismissal: %s (%s) by %v, want cancelled (user) by alice", got.Status, got.CancelReason, got.RespondedBy)
	}
	s.settle()
	if s.d.Live(q) {
		t.Error("the dismissed copy still shows controls")
	}
	s.says("the dismissed copy", s.d.Copy(q), "Dismissed by "+s.w.Who(s.person(Alice)))
	msg := s.refused(Bob, "a dismissal of a dismissed question", func() { s.d.Dismiss(Bob, q) })
	s.says("what bob was told", msg, s.w.Late(got).Text)
	s.sameRecord("a second dismissal", got, s.get(q))
}

// webhookWaitsForPause: an answer to a webhook-mode question whose run has
// not paused is recorded once the run pauses; with no pause, the person is
// told the run has not paused, and nothing is recorded.
func webhookWaitsForPause(t *testing.T, newEnv InboundFactory) {
	ask := func(s *in) *domain.Question {
		req := authAsk()
		req.RunID = "run-wh"
		req.Resume = &domain.ResumeRequest{URL: "https://runtime.example/resume"}
		return s.ask(req)
	}
	t.Run("paused in time", func(t *testing.T) {
		s := startInbound(t, newEnv)
		q := ask(s)
		paused := make(chan struct{})
		go func() {
			defer close(paused)
			time.Sleep(300 * time.Millisecond)
			if _, err := s.env.Router.Store().PauseRun(context.Background(), "ops", q.RunID, q.AgentID, time.Now()); err != nil {
				t.Error(err)
			}
		}()
		start := time.Now()
		msgs := s.told(Alice, func() { s.d.Click(Alice, q, "API key") })
		<-paused
		got := s.get(q)
		if got.Status != domain.StatusAnswered || got.Response != "API key" || !s.is(got.RespondedBy, Alice) {
			t.Fatalf("a click before the pause: %s %q by %v, want answered once the run paused", got.Status, got.Response, got.RespondedBy)
		}
		if got.ResumedRunID == "" {
			t.Error("the answer did not resume the run")
		}
		if took := time.Since(start); took < 250*time.Millisecond {
			t.Errorf("recorded after %s, before the run paused", took)
		}
		for _, m := range msgs {
			if strings.Contains(m, s.w.RunNotPaused().Text) {
				t.Errorf("alice was told the run had not paused, though her answer was recorded: %q", m)
			}
		}
		s.settle()
		s.says("the copy", s.d.Copy(q), "API key")
	})
	t.Run("never paused", func(t *testing.T) {
		s := startInbound(t, newEnv)
		q := ask(s)
		start := time.Now()
		msg := s.refused(Alice, "a click with no pause", func() { s.d.Click(Alice, q, "API key") })
		if took := time.Since(start); took < SuitePauseWait-100*time.Millisecond {
			t.Errorf("told after %s, without waiting %s for the pause", took, SuitePauseWait)
		}
		s.says("what alice was told", msg, s.w.RunNotPaused().Text, "not paused")
		got := s.get(q)
		if got.Status != domain.StatusPending || len(got.Answers) != 0 || got.RespondedBy != nil {
			t.Errorf("with no pause: %s %v by %v, want pending with nothing recorded", got.Status, got.Answers, got.RespondedBy)
		}
		s.settle()
		if !s.d.Live(q) {
			t.Error("the copy stopped taking answers")
		}
	})
}
