package teams

import (
	"strings"
	"sync"
	"testing"

	"github.com/askbridge/askbridge/adapters/teams/faketeams"
	"github.com/askbridge/askbridge/domain"
)

// TestConcurrentClicksExactlyOnce: two people press different options of
// one card at the same moment, many times over: each question is answered
// once, by one of them, the other is told who answered and with what, and
// the card ends showing that one answer.
func TestConcurrentClicksExactlyOnce(t *testing.T) {
	e := newEnv(t, nil)
	bob := faketeams.User{AADObjectID: "aad-bob", Name: "Bob Example"}
	for round := range 10 {
		q := e.ask(t, domain.AskRequest{RunID: "run-" + string(rune('a'+round)), Questions: []domain.Item{{Question: "Which auth method?",
			Header: "Auth", Options: []domain.Option{{Label: "OAuth 2.0"}, {Label: "API key"}}}}})
		c := e.F.Activity(q.Targets[0].MessageTS).Versions[0]
		oauth, _ := seenAction(c, "OAuth 2.0")
		key, _ := seenAction(c, "API key")
		var wg sync.WaitGroup
		replies := make([]faketeams.Reply, 2)
		start := make(chan struct{})
		for i, p := range []struct {
			u faketeams.User
			a seenControl
		}{{aliceUser, oauth}, {bob, key}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				replies[i] = e.F.Invoke(e.Endpoint, p.u, q.Targets[0].MessageTS, p.a.Verb, p.a.Data)
			}()
		}
		close(start)
		wg.Wait()
		got := e.get(t, q)
		if got.Status != domain.StatusAnswered || got.RespondedBy == nil {
			t.Fatalf("round %d: %s", round, got.Status)
		}
		winner, loser := 0, 1
		if got.RespondedBy.ID == bob.AADObjectID {
			winner, loser = 1, 0
		}
		if want := []string{"OAuth 2.0", "API key"}[winner]; got.Response != want {
			t.Errorf("round %d: recorded %q by %s", round, got.Response, got.RespondedBy.ID)
		}
		lost := seenText(replies[loser].Value)
		if !strings.Contains(lost, words.AlreadyAnswered(got).Text) {
			t.Errorf("round %d: the second click was told %q", round, lost)
		}
		if won := seenText(replies[winner].Value); !strings.Contains(won, got.Response) || seenLive(replies[winner].Value) {
			t.Errorf("round %d: the first click was shown %q", round, won)
		}
		e.settle(t)
		final := e.F.Activity(q.Targets[0].MessageTS).Card()
		if seenLive(final) || !strings.Contains(seenText(final), got.Response) {
			t.Errorf("round %d: the card ends %q (seenLive %t)", round, seenText(final), seenLive(final))
		}
	}
}
