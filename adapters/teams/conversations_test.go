package teams

import (
	"context"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// TestRouteNamesChannel: once the app is installed in a team and a channel
// is created, a target names the channel as "Team/Channel" (any case) or
// by its id, and posts reach the serviceUrl Teams gave for it, not the
// default one.
func TestRouteNamesChannel(t *testing.T) {
	e := newEnv(t, nil, func(c *Config) {
		c.ServiceURL = "http://127.0.0.1:1/" // unreachable: only learned references work
		c.ServiceURLAllow = append(c.ServiceURLAllow, "http://127.0.0.1:1")
		c.RetryAttempts = 1
	})
	req := func(channel string) domain.AskRequest {
		return domain.AskRequest{Question: "Ship it?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}},
			Targets: []domain.Target{{Platform: Platform, Channel: channel}}}
	}
	before, err := e.Router.Ask(context.Background(), "ops", withAgent(req("Platform/Deployments")), "")
	if err != nil {
		t.Fatal(err)
	}
	if msg := before.Question.Targets[0].Error; !strings.Contains(msg, `no channel "Platform/Deployments" is known`) {
		t.Errorf("a channel name nobody told the bot about: %q", msg)
	}
	e.F.Install(e.Endpoint, testTeam, "Platform", testChannel, "Deployments")
	for i, channel := range []string{"Platform/Deployments", "platform / deployments", testChannel, "Platform/General"} {
		r := withAgent(req(channel))
		r.RunID = "run-named-" + string(rune('a'+i))
		res, err := e.Router.Ask(context.Background(), "ops", r, "")
		if err != nil {
			t.Fatal(err)
		}
		c := res.Question.Targets[0]
		if c.Error != "" || c.MessageTS == "" {
			t.Fatalf("posting to %q: %q", channel, c.Error)
		}
		want := testChannel
		if channel == "Platform/General" {
			want = testTeam
		}
		if a := e.F.Activity(c.MessageTS); a == nil || a.Conversation != want || a.Thread != "" {
			t.Errorf("posting to %q: %+v, want a new thread in %s", channel, a, want)
		}
	}
}

func withAgent(r domain.AskRequest) *domain.AskRequest {
	r.AgentID, r.AgentName, r.RunID = "deploy-bot", "Deploy bot", "run-1"
	return &r
}

// TestPerRunThread: a route that keeps a run in one thread posts the run's
// later questions as replies in the thread its first question started.
func TestPerRunThread(t *testing.T) {
	rc := lifecycle.RouterConfig{HasWebhookSecret: func(string) bool { return true },
		Routes: []domain.Route{{Name: "oncall", Thread: "per-run", Targets: []domain.Target{{Platform: Platform, Channel: testChannel}}}}}
	e := newEnv(t, &rc)
	first := e.ask(t, domain.AskRequest{Route: "oncall", Targets: []domain.Target{}, Question: "First?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}})
	if _, err := e.Router.Cancel(context.Background(), "ops", first.ID, domain.CancelAgent, nil); err != nil {
		t.Fatal(err)
	}
	second := e.ask(t, domain.AskRequest{Route: "oncall", Targets: []domain.Target{}, Question: "Second?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}})
	a := e.F.Activity(second.Targets[0].MessageTS)
	if a.Thread != first.Targets[0].MessageTS {
		t.Errorf("the run's second question is in thread %q, want the first one's %q", a.Thread, first.Targets[0].MessageTS)
	}
}
