package teams

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/teams/faketeams"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// TestEndToEnd: a route posts, in one run's thread of a Teams channel it
// names as "Team/Channel" and in a group chat, a question with every shape
// and then, from the resumed run, an approval of a file edit with its
// diff; each is answered
// through signed adaptiveCard/action invokes by a person the responders
// name (someone else is refused, privately), every copy ends showing the
// outcome with no seenActions left, and the paused run is resumed each time.
func TestEndToEnd(t *testing.T) {
	const chat = "19:oncallchat@thread.v2"
	carol := faketeams.User{AADObjectID: "aad-carol", Name: "Carol Example"}
	rc := lifecycle.RouterConfig{HasWebhookSecret: func(string) bool { return true }, PauseWait: 3 * time.Second,
		Routes: []domain.Route{{Name: "oncall", Thread: "per-run",
			Targets:    []domain.Target{{Platform: Platform, Channel: "Platform/Deployments"}, {Platform: Platform, Channel: chat}},
			Responders: domain.Responders{Users: []string{"teams:" + aliceUser.AADObjectID}}}}}
	e := newEnv(t, &rc)
	e.F.AddChat(chat)
	e.F.Install(e.Endpoint, testTeam, "Platform", testChannel, "Deployments")
	ctx := context.Background()

	ask := func(run string, req domain.AskRequest) *domain.Question {
		t.Helper()
		req.AgentID, req.AgentName, req.RunID, req.Route = "deploy-bot", "Deploy bot", run, "oncall"
		req.Resume = &domain.ResumeRequest{URL: "https://runtime.example/resume"}
		res, err := e.Router.Ask(ctx, "ops", &req, "")
		if err != nil {
			t.Fatalf("ask: %v", err)
		}
		q := res.Question
		if len(q.Targets) != 2 {
			t.Fatalf("copies: %+v", q.Targets)
		}
		for _, c := range q.Targets {
			if c.Error != "" || c.MessageTS == "" {
				t.Fatalf("posting to %s: %q", c.Channel, c.Error)
			}
		}
		if _, err := e.Router.Store().PauseRun(ctx, "ops", q.RunID, q.AgentID, time.Now()); err != nil {
			t.Fatal(err)
		}
		return q
	}
	// press sends an Action.Execute of the channel copy as posted, with
	// seenInputs filled, and returns the card the presser sees.
	press := func(u faketeams.User, q *domain.Question, c json.RawMessage, title string, seenInputs map[string]string) json.RawMessage {
		t.Helper()
		a, ok := seenAction(c, title)
		if !ok {
			t.Fatalf("no %q on the card:\n%s", title, c)
		}
		data := map[string]any{}
		_ = json.Unmarshal(a.Data, &data)
		for k, v := range seenInputs {
			data[k] = v
		}
		b, _ := json.Marshal(data)
		r := e.F.Invoke(e.Endpoint, u, q.Targets[0].MessageTS, a.Verb, b)
		if r.HTTPStatus != http.StatusOK || r.StatusCode != http.StatusOK || r.Type != cardContentType {
			t.Fatalf("%s: answered %d %d %q", title, r.HTTPStatus, r.StatusCode, r.Type)
		}
		return r.Value
	}
	settled := func(q *domain.Question, want ...string) {
		t.Helper()
		e.settle(t)
		for _, c := range q.Targets {
			card := e.F.Activity(c.MessageTS).Card()
			if seenLive(card) {
				t.Errorf("the copy in %s still takes answers", c.Channel)
			}
			for _, w := range want {
				if !strings.Contains(seenText(card), w) {
					t.Errorf("the copy in %s does not say %q:\n%s", c.Channel, w, seenText(card))
				}
			}
		}
	}

	// Every shape in one card: single choice, multi-select with free
	// text, an open-ended item, and one asked only for some answers.
	q := ask("run-e2e", domain.AskRequest{Context: "Release **v2.14** is ready.", Questions: []domain.Item{
		{Question: "Which environment?", Header: "Env", Options: []domain.Option{{Label: "staging"}, {Label: "production", Default: true}}},
		{Question: "Which regions?", Header: "Regions", MultiSelect: true, Options: []domain.Option{{Label: "eu-west"}, {Label: "us-east"}, {Label: "ap-south"}}},
		{Question: "Release name?", Header: "Name", Other: &domain.FreeTextRules{MaxLength: 40}},
		{Question: "Which canary share?", Header: "Canary", ShowIf: &domain.ShowIf{Item: 0, AnyOf: []string{"production"}},
			Options: []domain.Option{{Label: "5%"}, {Label: "25%"}}},
	}})
	channelCopy := e.F.Activity(q.Targets[0].MessageTS)
	if channelCopy.Conversation != testChannel {
		t.Fatalf("the route's channel copy went to %s, want %s", channelCopy.Conversation, testChannel)
	}
	posted := channelCopy.Versions[0]
	in := seenInputs(posted)
	filled := map[string]string{"c0": seenChoice(in["c0"], "production"),
		"c1": seenChoice(in["c1"], "eu-west") + "," + seenChoice(in["c1"], "ap-south"),
		"o1": "us-central", "t2": "Aurora", "c3": seenChoice(in["c3"], "25%")}
	refused := press(carol, q, posted, "Submit", filled)
	if !strings.Contains(seenText(refused), words.NotAllowed(q, domain.Person{Platform: Platform, ID: carol.AADObjectID}).Text) {
		t.Errorf("carol, whom the responders do not name, was shown:\n%s", seenText(refused))
	}
	if got := e.get(t, q); got.Status != domain.StatusPending {
		t.Fatalf("carol's submit was recorded: %s", got.Status)
	}
	press(aliceUser, q, posted, "Submit", filled)
	got := e.get(t, q)
	want := map[string]string{"Which environment?": "production", "Which regions?": "eu-west, ap-south, us-central",
		"Release name?": "Aurora", "Which canary share?": "25%"}
	if got.Status != domain.StatusAnswered || got.RespondedBy == nil || got.RespondedBy.Key() != "teams:"+aliceUser.AADObjectID {
		t.Fatalf("after aliceUser's submit: %s by %v", got.Status, got.RespondedBy)
	}
	for k, v := range want {
		if got.Answers[k] != v {
			t.Errorf("answer to %q: %q, want %q", k, got.Answers[k], v)
		}
	}
	if got.ResumedRunID == "" {
		t.Error("the answer did not resume the run")
	}
	if got.RespondedBy.Name != aliceUser.Name {
		t.Errorf("aliceUser is named %q, not as Teams shows her (%q)", got.RespondedBy.Name, aliceUser.Name)
	}
	settled(q, aliceUser.Name, "Aurora")

	// The resumed run asks for an approval of a file edit, with its diff.
	edit, _ := json.Marshal(map[string]any{"file_path": "/srv/app/config.yaml", "old_string": "replicas: 2\n", "new_string": "replicas: 6\n"})
	ap := ask(got.ResumedRunID, domain.AskRequest{Kind: domain.KindApproval, Question: "Edit config.yaml?", Header: "Edit",
		Options: []domain.Option{{Label: "Allow"}, {Label: "Deny"}}, Action: &domain.Action{Tool: "Edit", Input: edit}})
	if ap.Action == nil || !strings.Contains(ap.Action.Diff, "+replicas: 6") {
		t.Fatalf("the approval has no diff: %+v", ap.Action)
	}
	apCopy := e.F.Activity(ap.Targets[0].MessageTS)
	if apCopy.Conversation != testChannel || apCopy.Thread != "" {
		t.Errorf("the approval went to %s (thread %q), want a new thread in %s", apCopy.Conversation, apCopy.Thread, testChannel)
	}
	for _, line := range []string{"/srv/app/config.yaml", "-replicas: 2", "+replicas: 6"} {
		if !strings.Contains(seenText(apCopy.Versions[0]), line) {
			t.Errorf("the approval card does not show %q of the diff:\n%s", line, seenText(apCopy.Versions[0]))
		}
	}
	press(aliceUser, ap, apCopy.Versions[0], "Allow", nil)
	got = e.get(t, ap)
	if got.Status != domain.StatusAnswered || got.Decision == nil || got.Decision.Behavior != domain.BehaviorAllow {
		t.Fatalf("after Allow: %s, decision %+v", got.Status, got.Decision)
	}
	if got.ResumedRunID == "" {
		t.Error("the approval did not resume the run")
	}
	settled(ap, aliceUser.Name)
}
