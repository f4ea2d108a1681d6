package teams

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/teams/faketeams"
	"github.com/askbridge/askbridge/domain"
)

// TestWhyNothingChangedComesFirst: someone who may not answer, or who acts
// on a question that has ended, is told that — not what is missing from
// the form they sent; a person who may answer is told what is missing.
func TestWhyNothingChangedComesFirst(t *testing.T) {
	e := newEnv(t, nil)
	carol := faketeams.User{AADObjectID: "aad-carol", Name: "Carol Example"}
	form := domain.AskRequest{Responders: &domain.Responders{Users: []string{"teams:" + aliceUser.AADObjectID}},
		Questions: []domain.Item{
			{Question: "Which environment?", Header: "Env", Options: []domain.Option{{Label: "staging"}, {Label: "production"}}},
			{Question: "Release name?", Header: "Name"}}}
	submitEmpty := func(u faketeams.User, q *domain.Question) string {
		c := e.F.Activity(q.Targets[0].MessageTS).Versions[0]
		a, ok := seenAction(c, "Submit")
		if !ok {
			t.Fatalf("no Submit:\n%s", c)
		}
		r := e.F.Invoke(e.Endpoint, u, q.Targets[0].MessageTS, a.Verb, a.Data)
		if r.Type != cardContentType {
			t.Fatalf("answered %+v", r)
		}
		return seenText(r.Value)
	}
	q := e.ask(t, form)
	if got := submitEmpty(carol, q); !strings.Contains(got, words.NotAllowed(q, domain.Person{Platform: Platform, ID: carol.AADObjectID}).Text) {
		t.Errorf("carol, who may not answer, sent an empty form and was shown:\n%s", got)
	}
	// Carol's view is hers: Teams refreshes it for her alone, by her Teams
	// user id.
	a, _ := seenAction(e.F.Activity(q.Targets[0].MessageTS).Versions[0], "Submit")
	r := e.F.Invoke(e.Endpoint, carol, q.Targets[0].MessageTS, a.Verb, a.Data)
	var card struct {
		Refresh struct {
			UserIDs []string `json:"userIds"`
		} `json:"refresh"`
	}
	_ = json.Unmarshal(r.Value, &card)
	if len(card.Refresh.UserIDs) != 1 || card.Refresh.UserIDs[0] != "29:"+carol.AADObjectID {
		t.Errorf("carol's view refreshes for %v, want her Teams user id", card.Refresh.UserIDs)
	}
	if got := submitEmpty(aliceUser, q); !strings.Contains(got, "Not sent:") {
		t.Errorf("alice sent an empty form and was shown:\n%s", got)
	}
	if _, err := e.Router.CancelWithNote(context.Background(), "ops", q.ID, domain.CancelAgent, "run 7 took over", nil); err != nil {
		t.Fatal(err)
	}
	final := e.get(t, q)
	if got := submitEmpty(aliceUser, q); !strings.Contains(got, words.Late(final).Text) {
		t.Errorf("a form sent after the question was withdrawn was shown:\n%s", got)
	}
}
