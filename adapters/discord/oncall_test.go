package discord

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/domain"
)

// shows is what a person reads on a copy: content, embed and footer.
func shows(m *fakediscord.Message) string {
	var b strings.Builder
	b.WriteString(m.Content)
	for _, e := range m.Embeds {
		b.WriteString("\n" + e.Title + "\n" + e.Description)
		for _, f := range e.Fields {
			b.WriteString("\n" + f.Name + ": " + f.Value)
		}
		if e.Footer != nil {
			b.WriteString("\n" + e.Footer.Text)
		}
	}
	return b.String()
}

func (e *env) shows(id string, want ...string) *fakediscord.Message {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		m := e.fake.Message(id)
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(shows(m), w)
		}
		if ok {
			return m
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("copy %s does not show %q:\n%s", id, want, shows(m))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func live(m *fakediscord.Message) int {
	n := 0
	for _, row := range m.Components {
		for _, c := range row.Components {
			if !c.Disabled {
				n++
			}
		}
	}
	return n
}

// TestVotesOnTwoCopies: a vote shows the tally on the clicked copy in the
// interaction's response and on the other copy by an edit; the deciding
// vote on the other copy finishes both, including the one whose last
// response was a tally.
func TestVotesOnTwoCopies(t *testing.T) {
	f := fakediscord.New(t)
	f.AddChannel("2000", "900")
	e := newEnv(t, f, newTestStore(t))
	two := 2
	q := e.ask(&domain.AskRequest{Kind: domain.KindApproval, Question: "Deploy api v2 to production?", ApprovalsRequired: &two,
		Options:    []domain.Option{{Label: "Approve"}, {Label: "Deny"}},
		Responders: &domain.Responders{Groups: map[string][]string{"discord_roles": {"667788"}}},
		Targets:    []domain.Target{{Platform: "discord", Channel: "1000"}, {Platform: "discord", Channel: "2000"}}})
	var m1, m2 string
	for _, tg := range q.Targets {
		if tg.Channel == "1000" {
			m1 = tg.MessageTS
		} else {
			m2 = tg.MessageTS
		}
	}
	e.shows(m1, "Needs 2 approvals", "No votes yet", "Who may answer: Discord role 667788")

	resp := f.Click(alice, m1, "Approve")
	if resp.Type != 7 || resp.Data == nil {
		t.Fatalf("the vote was answered with type %d, want 7 showing the tally", resp.Type)
	}
	if got := shows(f.Message(m1)); !strings.Contains(got, "Approve: 1 of 2 approvals — alice") {
		t.Fatalf("the clicked copy shows %q", got)
	}
	if live(f.Message(m1)) != 3 { // Approve, Deny, Dismiss: a vote takes no note
		t.Error("the clicked copy's controls must stay live while votes are missing")
	}
	e.shows(m2, "Approve: 1 of 2 approvals — alice")
	if e.pending(q) != domain.StatusPending {
		t.Fatal("one vote of two decided the question")
	}

	f.Click(carol, m2, "Approve")
	final := e.wait(q)
	if final.Response != "Approve" || len(final.Votes) != 2 {
		t.Fatalf("answered %q with %d votes", final.Response, len(final.Votes))
	}
	e.settle()
	e.assertFinished(m1, "Approved by alice, carol: Approve")
	e.assertFinished(m2, "Approved by alice, carol: Approve")
}

// TestReminderInTheRunsThread: a copy inside the run's thread is reminded
// there, replying to the copy and allowing exactly the responders'
// mentions; the agent's text cannot ping anyone.
func TestReminderInTheRunsThread(t *testing.T) {
	f := fakediscord.New(t)
	clock := &testClock{t: time.Now().UTC().Truncate(time.Second)}
	f.Now = clock.Now
	e := newEnv(t, f, newTestStore(t), withClock(clock), func(rc *lifecycle.RouterConfig, _ *Config) {
		rc.Routes = append(rc.Routes, domain.Route{Name: "gate", Thread: "per-run", Timeout: time.Hour,
			Targets: []domain.Target{{Platform: "discord", Channel: "1000"}},
			Responders: domain.Responders{Groups: map[string][]string{"discord_roles": {"667788", "@everyone"}},
				Users: []string{"discord:4455", "slack:U1", "discord:<@&1>"}},
			Escalation: []domain.EscalationStep{{After: domain.Duration(15 * time.Minute), Remind: true}}})
	})
	ctx := context.Background()
	first := e.ask(&domain.AskRequest{RunID: "run-5", Route: "gate", Questions: []domain.Item{authItem()}})
	f.Click(alice, e.copyOf(first), "OAuth 2.0")
	e.wait(first)
	second := e.ask(&domain.AskRequest{RunID: "run-5", Route: "gate",
		Questions: []domain.Item{{Question: "Ship it? @everyone @here", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}}}})
	copy2 := f.Message(e.copyOf(second))
	thread := f.Message(e.copyOf(first)).Thread
	if thread == "" || copy2.ChannelID != thread {
		t.Fatalf("the second question is in %s, want the run's thread %q", copy2.ChannelID, thread)
	}

	clock.Add(15 * time.Minute)
	if n, err := e.router.EscalateDue(ctx); err != nil || n != 1 {
		t.Fatalf("EscalateDue ran %d steps (%v), want the pending question's reminder", n, err)
	}
	msgs := f.Messages(thread)
	var reminder *fakediscord.Message
	for i := range msgs {
		if msgs[i].ReplyTo != "" {
			reminder = &msgs[i]
		}
	}
	if reminder == nil {
		t.Fatalf("no reminder in the run's thread: %+v", msgs)
	}
	if reminder.ReplyTo != copy2.ID {
		t.Errorf("the reminder replies to %s, want the copy %s", reminder.ReplyTo, copy2.ID)
	}
	if want := "<@&667788> <@4455> Still waiting for an answer — expires in 45 min."; reminder.Content != want {
		t.Errorf("reminder %q, want %q", reminder.Content, want)
	}
	if got := strings.Join(reminder.Pings, ","); got != "role:667788,user:4455" {
		t.Errorf("the reminder pinged %q; only the responders' role and user may be", got)
	}
	if strings.Join(reminder.AllowedRoles, ",") != "667788" || strings.Join(reminder.AllowedUsers, ",") != "4455" {
		t.Errorf("allowed_mentions roles %v users %v", reminder.AllowedRoles, reminder.AllowedUsers)
	}
	if got := f.Message(copy2.ID); got.Edits != 0 || len(got.Pings) != 0 {
		t.Errorf("the copy itself was edited (%d) or pinged %v", got.Edits, got.Pings)
	}
}
