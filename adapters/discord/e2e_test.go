package discord

import (
	"context"
	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"strings"
	"sync"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// recordingChannel stands in for the Slack adapter, written in parallel:
// a core.Channel with Platform() "slack" that records posts and finishes.
type recordingChannel struct {
	mu       sync.Mutex
	posted   []core.Target
	finished []*core.Question
}

func (c *recordingChannel) Platform() string { return "slack" }

func (c *recordingChannel) Post(_ context.Context, q *core.Question, t core.Target) (core.Target, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t.MessageTS = "1700000000.000100"
	c.posted = append(c.posted, t)
	return t, nil
}

func (c *recordingChannel) Finish(_ context.Context, q *core.Question, t core.Target) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finished = append(c.finished, q)
	return nil
}

func TestFannedOutToSlackAndDiscordAnsweredOnDiscord(t *testing.T) {
	f := fakediscord.New(t)
	slack := &recordingChannel{}
	e := newEnv(t, f, newTestStore(t), func(rc *core.RouterConfig, _ *Config) { rc.Channels = []core.Channel{slack} })
	q := e.ask(&core.AskRequest{Questions: []core.Item{authItem()}, Targets: []core.Target{
		{Platform: "slack", Channel: "C0123"}, {Platform: "discord", Channel: "1000"}}})
	msg := e.copyOf(q)
	if len(slack.posted) != 1 {
		t.Fatalf("slack copies posted: %d", len(slack.posted))
	}
	f.Click(alice, msg, "OAuth 2.0")
	final := e.wait(q)
	if final.Response != "oauth" {
		t.Fatalf("response %q", final.Response)
	}
	e.settle()
	e.assertFinished(msg, "Answered by alice: OAuth 2.0")
	slack.mu.Lock()
	defer slack.mu.Unlock()
	if len(slack.finished) != 1 || slack.finished[0].Status != core.StatusAnswered || slack.finished[0].RespondedBy.Name != "alice" {
		t.Fatalf("slack copy not finished with the Discord answer: %+v", slack.finished)
	}
}

func TestSubmitTakenByAnotherReplica(t *testing.T) {
	f := fakediscord.New(t)
	st := redisReplicas(t, 2)
	r1 := newEnv(t, f, st[0])
	r1URL := f.Target
	r2 := newEnv(t, f, st[1])
	r2URL := f.Target

	q := r1.ask(&core.AskRequest{Questions: []core.Item{authItem(), featuresItem()}})
	msg := r1.copyOf(q)
	f.Target = r1URL // replica 1 sees the selections
	f.Choose(alice, msg, 0, "API key")
	f.Choose(alice, msg, 1, "Dashboard", "Login")
	f.Target = r2URL // replica 2 takes the Submit
	if resp := f.Click(alice, msg, "Submit"); resp.Type != 7 {
		t.Fatalf("Submit on the other replica: type %d %q", resp.Type, fakediscord.Deref(resp.Data.Content))
	}
	final := r2.wait(q)
	if final.Answers["Which auth method?"] != "API key" || final.Answers["Which features?"] != "Dashboard, Login" {
		t.Fatalf("answers %v", final.Answers)
	}
	r1.settle()
	r2.settle()
	r1.assertFinished(msg, "Answered by alice: Auth: API key; Features: Dashboard, Login")
	if late := f.ClickDisabledAnyway(carol, msg, "ab:u:"+q.ID); late.Type != 4 ||
		!strings.HasPrefix(fakediscord.Deref(late.Data.Content), "Already answered by alice") {
		t.Errorf("late Submit: %q", fakediscord.Deref(late.Data.Content))
	}
}
