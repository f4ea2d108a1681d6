package slack

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// approvalOnTwoChannels asks for a deploy approval that needs two of the
// three on-call people, posted in C1 and C2.
func approvalOnTwoChannels(e *env) *domain.Question {
	two := 2
	return e.ask(domain.AskRequest{RunID: "deploy-1", AgentID: "deploy-bot", Kind: domain.KindApproval,
		Question: "Deploy api v2 to production?", ApprovalsRequired: &two,
		Options:    []domain.Option{{Label: "Approve"}, {Label: "Reject"}, {Label: "Block", Description: "stop the release", Veto: true}},
		Responders: &domain.Responders{Users: []string{"slack:U1", "slack:U2", "slack:U3"}},
		Targets:    []domain.Target{{Platform: "slack", Channel: "C1"}, {Platform: "slack", Channel: "C2"}}})
}

// says waits until the copy's blocks contain every want and returns them.
func (e *env) says(channel, ts string, want ...string) string {
	e.t.Helper()
	var texts string
	deadline := time.Now().Add(5 * time.Second)
	for {
		m, _ := e.fake.Message(channel, ts)
		texts = m.Texts()
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(texts, w)
		}
		if ok {
			return texts
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the copy on %s does not say %q:\n%s", channel, want, texts)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// hasButtons reports whether the copy still offers the option buttons.
func (e *env) hasButtons(channel, ts string) bool {
	m, _ := e.fake.Message(channel, ts)
	return strings.Contains(string(m.Blocks), `"action_id":"opt:0:0"`)
}

func TestTwoOfThreeApprovalsOnEveryCopy(t *testing.T) {
	e := newEnv(t)
	q := approvalOnTwoChannels(e)
	c1, c2 := e.copyOn(q, "C1").MessageTS, e.copyOn(q, "C2").MessageTS
	for _, c := range []struct{ ch, ts string }{{"C1", c1}, {"C2", c2}} {
		e.says(c.ch, c.ts, "Needs 2 approvals", "no votes yet")
	}

	// alice approves on C1: both copies show the tally, buttons still live.
	e.click(alice, "C1", c1, "Approve", nil)
	for _, c := range []struct{ ch, ts string }{{"C1", c1}, {"C2", c2}} {
		e.says(c.ch, c.ts, "Approve: 1 of 2 approvals — alice")
		assert.True(t, e.hasButtons(c.ch, c.ts), "the copy on %s still takes votes", c.ch)
	}
	assert.Equal(t, domain.StatusPending, e.get(q).Status)

	// bob approves on C2: decided; both copies show who approved.
	late := e.clickPayload(carol, "C1", c1, "Approve", nil) // carol's client still shows the buttons
	e.click(bob, "C2", c2, "Approve", nil)
	got := e.final(q)
	assert.Equal(t, domain.StatusAnswered, got.Status)
	assert.Equal(t, "Approve", got.Response)
	for _, c := range []struct{ ch, ts string }{{"C1", c1}, {"C2", c2}} {
		e.says(c.ch, c.ts, "Approved by alice, bob: Approve")
		assert.False(t, e.hasButtons(c.ch, c.ts), "the finished copy on %s keeps no buttons", c.ch)
		assert.NotContains(t, e.says(c.ch, c.ts), "1 of 2", "the finished copy shows the outcome, not the tally")
	}

	// carol, too late, is told how it ended.
	e.interact(late)
	e.wait("carol told", func() bool { return len(e.ephemeralsTo(carol)) == 1 })
	assert.Contains(t, e.ephemeralsTo(carol)[0], "This question was already answered by <@U1>, <@U2>: Approve.")
	assert.Len(t, e.final(q).Votes, 2)
}

func TestVetoDecidesAtTheFirstVote(t *testing.T) {
	e := newEnv(t)
	q := approvalOnTwoChannels(e)
	c1, c2 := e.copyOn(q, "C1").MessageTS, e.copyOn(q, "C2").MessageTS
	e.click(alice, "C1", c1, "Approve", nil)
	e.says("C2", c2, "Approve: 1 of 2 approvals — alice")

	e.click(carol, "C2", c2, "Block", nil)
	got := e.final(q)
	assert.Equal(t, "Block", got.Response, "one veto outweighs the missing approvals")
	assert.Equal(t, "carol", got.RespondedBy.Name)
	for _, c := range []struct{ ch, ts string }{{"C1", c1}, {"C2", c2}} {
		e.says(c.ch, c.ts, "by carol: Block")
		assert.False(t, e.hasButtons(c.ch, c.ts))
	}
}

func TestChangedVoteCountsOnce(t *testing.T) {
	e := newEnv(t)
	q := approvalOnTwoChannels(e)
	c1, c2 := e.copyOn(q, "C1").MessageTS, e.copyOn(q, "C2").MessageTS

	e.click(alice, "C1", c1, "Approve", nil)
	e.says("C2", c2, "Approve: 1 of 2 approvals — alice")
	// alice changes her mind on the other copy: her vote moves, not adds.
	e.click(alice, "C2", c2, "Reject", nil)
	text := e.says("C1", c1, "Reject: 1 of 2 approvals — alice")
	assert.NotContains(t, text, "Approve: 1 of 2")
	// Clicking Approve again as alice cannot make two approvals.
	e.click(alice, "C1", c1, "Approve", nil)
	require.Eventually(t, func() bool {
		vs := e.get(q).Votes
		return len(vs) == 1 && vs[0].Label == "Approve"
	}, 5*time.Second, 10*time.Millisecond, "alice's changed vote is recorded")
	e.says("C2", c2, "Approve: 1 of 2 approvals — alice")
	assert.NotContains(t, e.says("C2", c2), "Reject:")
	assert.Equal(t, domain.StatusPending, e.get(q).Status)
	require.Len(t, e.get(q).Votes, 1)

	e.click(bob, "C1", c1, "Approve", nil)
	got := e.final(q)
	assert.Equal(t, "Approve", got.Response)
	e.says("C2", c2, "Approved by alice, bob: Approve")
}

// TestReminderInTheRunsThread: a question posted inside the run's thread
// is reminded in that thread (Slack refuses thread_ts of a reply), with
// the responders mentioned and the time left on the injectable clock.
func TestReminderInTheRunsThread(t *testing.T) {
	e := newEnv(t, func(_ *Config, rc *lifecycle.RouterConfig) {
		rc.Routes = append(rc.Routes, domain.Route{Name: "gate", Thread: "per-run", Timeout: 30 * time.Minute,
			Targets:    []domain.Target{{Platform: "slack", Channel: "C1"}},
			Responders: domain.Responders{Users: []string{"slack:U1", "discord:4455", "slack:not-an-id"}, Groups: map[string][]string{"slack_usergroups": {"S0123", "<!here>"}}},
			Escalation: []domain.EscalationStep{{After: domain.Duration(10 * time.Minute), Remind: true}}})
	})
	ctx := context.Background()
	first := e.ask(domain.AskRequest{RunID: "run-9", AgentID: "bot", Route: "gate", Question: "Which region?"})
	root := e.copyOn(first, "C1").MessageTS
	if _, err := e.router.Answer(ctx, "ops", first.ID, domain.RespondRequest{Response: ptr("eu-west")},
		domain.Person{Platform: "slack", ID: "U1"}); err != nil {
		t.Fatal(err)
	}
	second := e.ask(domain.AskRequest{RunID: "run-9", AgentID: "bot", Route: "gate", Question: "Ship it now?"})
	c := e.copyOn(second, "C1")
	m, _ := e.fake.Message("C1", c.MessageTS)
	require.Equal(t, root, m.ThreadTS, "the run's second question is in its thread")

	e.clock.Add(10 * time.Minute)
	n, err := e.router.EscalateDue(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "only the pending question has a step to run")
	var reminders []string
	for _, msg := range e.fake.Messages("C1") {
		if strings.Contains(msg.Text, "Still waiting") {
			assert.Equal(t, root, msg.ThreadTS, "reminders go in the run's thread")
			reminders = append(reminders, msg.Text)
		}
	}
	// The first question was answered: only the second is reminded.
	assert.Equal(t, []string{"<@U1> <!subteam^S0123> Still waiting for an answer — expires in 20 min."}, reminders,
		"only Slack ids are mentioned; nothing else can turn into a mention")
	for _, call := range e.fake.Calls("chat.postMessage") {
		if call.Error != "" {
			t.Errorf("Slack refused a message: %s", call.Error)
		}
	}
}

func ptr(s string) *string { return &s }
