package discord

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/domain"
)

func TestSubmitTakenByAnotherReplica(t *testing.T) {
	f := fakediscord.New(t)
	st := redisReplicas(t, 2)
	r1 := newEnv(t, f, st[0])
	r1URL := f.Target
	r2 := newEnv(t, f, st[1])
	r2URL := f.Target

	q := r1.ask(&domain.AskRequest{Questions: []domain.Item{authItem(), featuresItem()}})
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
		!strings.HasPrefix(fakediscord.Deref(late.Data.Content), "This question was already answered by alice: Auth: API key") {
		t.Errorf("late Submit: %q", fakediscord.Deref(late.Data.Content))
	}
}
