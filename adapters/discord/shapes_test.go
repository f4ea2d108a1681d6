package discord

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/domain"
)

func TestSingleSelectButtonsAnswered(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	q := e.ask(&domain.AskRequest{RunID: "run-42", Questions: []domain.Item{authItem()}, Context: "Deploying **api** to prod"})
	msg := e.copyOf(q)
	if want := "https://discord.com/channels/900/1000/" + msg; q.Targets[0].URL != want {
		t.Errorf("jump link %q, want %q", q.Targets[0].URL, want)
	}

	m := f.Message(msg)
	emb := m.Embeds[0]
	for _, want := range []string{"Auth", "Deploy bot"} {
		if !strings.Contains(emb.Title, want) {
			t.Errorf("title %q lacks %q", emb.Title, want)
		}
	}
	for _, want := range []string{"Deploying **api** to prod", "Which auth method?", "OAuth 2.0", "recommended", "Standard", "Simple"} {
		if !strings.Contains(emb.Description, want) {
			t.Errorf("description lacks %q:\n%s", want, emb.Description)
		}
	}
	for _, want := range []string{"deploy-bot", "run-42", "expires in 5 min"} {
		if !strings.Contains(emb.Footer.Text, want) {
			t.Errorf("footer %q lacks %q", emb.Footer.Text, want)
		}
	}
	for _, label := range []string{"OAuth 2.0", "API key", "Other…", "Dismiss"} {
		f.Button(m, label)
	}

	resp := f.Click(alice, msg, "OAuth 2.0")
	if resp.Type != 7 {
		t.Fatalf("click answered with type %d, want 7 (update the message)", resp.Type)
	}
	final := e.wait(q)
	if final.Status != domain.StatusAnswered || final.RespondedBy.Name != "alice" || final.RespondedBy.ID != "4455" {
		t.Fatalf("final %s by %+v", final.Status, final.RespondedBy)
	}
	if !reflect.DeepEqual(final.Answers, map[string]string{"Which auth method?": "OAuth 2.0"}) ||
		!reflect.DeepEqual(final.Selections, map[string][]string{"Which auth method?": {"OAuth 2.0"}}) ||
		final.Response != "oauth" {
		t.Errorf("answer forms: %v %v %q", final.Answers, final.Selections, final.Response)
	}
	e.settle()
	e.assertFinished(msg, "Answered by alice: OAuth 2.0")
}

func TestOtherOpensModalAndAnswersWithFreeText(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	q := e.ask(&domain.AskRequest{Questions: []domain.Item{authItem()}})
	msg := e.copyOf(q)
	modal := f.Click(alice, msg, "Other…")
	if modal.Type != 9 {
		t.Fatalf("Other… answered with type %d, want a modal", modal.Type)
	}
	if resp := f.SubmitModal(alice, msg, modal, "SAML via Okta"); resp.Type != 7 {
		t.Fatalf("modal submit answered with type %d, want 7", resp.Type)
	}
	final := e.wait(q)
	if final.Answers["Which auth method?"] != "SAML via Okta" || final.Response != "SAML via Okta" ||
		!reflect.DeepEqual(final.Selections["Which auth method?"], []string{"SAML via Okta"}) {
		t.Errorf("answer forms: %v %v %q", final.Answers, final.Selections, final.Response)
	}
	e.settle()
	e.assertFinished(msg, "Answered by alice: SAML via Okta")
}

func TestMultiSelectThenSubmit(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	q := e.ask(&domain.AskRequest{Questions: []domain.Item{featuresItem()}})
	msg := e.copyOf(q)
	m := f.Message(msg)
	sel := m.Components[0].Components[0]
	if sel.Type != 3 || sel.MaxValues != 4 {
		t.Fatalf("multi-select renders as type %d with max_values %d, want a string select with max_values 4 (3 options + Other…)", sel.Type, sel.MaxValues)
	}
	if resp := f.Choose(alice, msg, 0, "Login", "Billing"); resp.Type != 6 {
		t.Fatalf("select answered with type %d, want 6", resp.Type)
	}
	if got := e.pending(q); got != domain.StatusPending {
		t.Fatalf("a selection alone must not answer; status %s", got)
	}
	if resp := f.Click(alice, msg, "Submit"); resp.Type != 7 {
		t.Fatalf("Submit answered with type %d", resp.Type)
	}
	final := e.wait(q)
	if final.Answers["Which features?"] != "Login, Billing" || final.Response != "Login, Billing" ||
		!reflect.DeepEqual(final.Selections["Which features?"], []string{"Login", "Billing"}) {
		t.Errorf("answer forms: %v %v %q", final.Answers, final.Selections, final.Response)
	}
	e.settle()
	e.assertFinished(msg, "Answered by alice: Login, Billing")
}

func TestOpenEndedAnswerModal(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	q := e.ask(&domain.AskRequest{Question: "What should the release be called?", Header: "Name"})
	msg := e.copyOf(q)
	modal := f.Click(alice, msg, "Answer…")
	if modal.Type != 9 {
		t.Fatalf("Answer… gave type %d, want a modal", modal.Type)
	}
	f.SubmitModal(alice, msg, modal, "Aurora")
	final := e.wait(q)
	if final.Response != "Aurora" || final.Answers["What should the release be called?"] != "Aurora" {
		t.Errorf("answer forms: %v %q", final.Answers, final.Response)
	}
	e.settle()
	e.assertFinished(msg, "Answered by alice: Aurora")
}

func TestSeveralItemsKeepDraftsUntilSubmit(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	notes := domain.Item{Question: "Anything else?", Header: "Notes"}
	q := e.ask(&domain.AskRequest{Questions: []domain.Item{authItem(), featuresItem(), notes}})
	msg := e.copyOf(q)
	m := f.Message(msg)
	if len(m.Components) != 4 {
		t.Fatalf("%d rows, want one per item and one for Submit/Dismiss", len(m.Components))
	}
	f.Choose(alice, msg, 0, "API key")
	f.Choose(alice, msg, 1, "Login", "Dashboard")
	// Bob's choices are his own and do not complete Alice's answer.
	f.Choose(bob, msg, 0, "OAuth 2.0")

	resp := f.Click(alice, msg, "Submit")
	if resp.Type != 4 || !strings.Contains(fakediscord.Deref(resp.Data.Content), "Still to answer: Notes") {
		t.Fatalf("early Submit: type %d %q", resp.Type, fakediscord.Deref(resp.Data.Content))
	}
	if e.pending(q) != domain.StatusPending {
		t.Fatal("a partial answer reached the agent")
	}
	modal := f.Click(alice, msg, "Answer Notes…")
	if r := f.SubmitModal(alice, msg, modal, "Ship on Friday"); r.Type != 4 {
		t.Fatalf("modal submit for a draft gave type %d, want an ephemeral confirmation", r.Type)
	}
	f.Click(alice, msg, "Submit")
	final := e.wait(q)
	want := map[string]string{"Which auth method?": "API key", "Which features?": "Login, Dashboard", "Anything else?": "Ship on Friday"}
	if !reflect.DeepEqual(final.Answers, want) {
		t.Errorf("answers %v, want %v", final.Answers, want)
	}
	if final.Response != "API key; Login, Dashboard; Ship on Friday" {
		t.Errorf("response %q", final.Response)
	}
	e.settle()
	e.assertFinished(msg, "Answered by alice: Auth: API key; Features: Login, Dashboard; Notes: Ship on Friday")
}

func TestOtherInsideSelectKeepsChoicesAndAddsText(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	q := e.ask(&domain.AskRequest{Questions: []domain.Item{featuresItem()}})
	msg := e.copyOf(q)
	modal := f.Choose(alice, msg, 0, "Login", "Other…")
	if modal.Type != 9 {
		t.Fatalf("choosing Other… gave type %d, want a modal", modal.Type)
	}
	f.SubmitModal(alice, msg, modal, "Audit log")
	f.Click(alice, msg, "Submit")
	final := e.wait(q)
	if !reflect.DeepEqual(final.Selections["Which features?"], []string{"Login", "Audit log"}) {
		t.Errorf("selections %v", final.Selections)
	}
}

func TestFinishShowsEveryOutcome(t *testing.T) {
	for _, c := range []struct {
		name    string
		mutate  func(q *domain.Question)
		outcome string
	}{
		{"expired", func(q *domain.Question) { q.Status = domain.StatusExpired }, "Expired"},
		{"withdrawn", func(q *domain.Question) { q.Status, q.CancelReason = domain.StatusCancelled, domain.CancelAgent }, "Cancelled (withdrawn by the agent)"},
		{"superseded", func(q *domain.Question) { q.Status, q.CancelReason = domain.StatusCancelled, domain.CancelSuperseded }, "Cancelled (superseded)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := fakediscord.New(t)
			e := newEnv(t, f, newTestStore(t))
			q := e.ask(&domain.AskRequest{Questions: []domain.Item{authItem(), featuresItem()}})
			msg := e.copyOf(q)
			c.mutate(q)
			if err := e.ad.Finish(context.Background(), q, q.Targets[0]); err != nil {
				t.Fatal(err)
			}
			e.assertFinished(msg, c.outcome)
		})
	}
}

func TestAgentCancelFinishesCopy(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	q := e.ask(&domain.AskRequest{Questions: []domain.Item{authItem()}})
	msg := e.copyOf(q)
	if _, err := e.router.Cancel(context.Background(), "ops", q.ID, domain.CancelAgent, nil); err != nil {
		t.Fatal(err)
	}
	e.settle()
	e.assertFinished(msg, "Cancelled (withdrawn by the agent)")
	resp := f.ClickDisabledAnyway(alice, msg, "ab:o:"+q.ID+":0:0")
	if resp.Type != 4 || !strings.Contains(fakediscord.Deref(resp.Data.Content), "withdrawn by the agent") {
		t.Errorf("late click on a cancelled question: type %d %q", resp.Type, fakediscord.Deref(resp.Data.Content))
	}
}

func TestLongTextsAreShortenedNeverRejected(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	long := func(c string, n int) string { return strings.Repeat(c, n) }
	var items []domain.Item
	for i := range 4 {
		it := domain.Item{Question: long(string(rune('a'+i)), 2000), Header: "Header" + string(rune('A'+i)), MultiSelect: i%2 == 1}
		for j := range 4 {
			it.Options = append(it.Options, domain.Option{Label: long(string(rune('A'+j)), 199) + string(rune('0'+i)),
				Description: long("d", 1000), Value: long("v", 1000)})
		}
		items = append(items, it)
	}
	q := e.ask(&domain.AskRequest{Questions: items, Context: long("c", 8000), AgentName: long("n", 200)})
	msg := e.copyOf(q) // the fake rejects anything over a limit

	single := e.ask(&domain.AskRequest{RunID: "other-run", Question: long("q", 2000), Header: "Long", Options: []domain.Option{
		{Label: long("x", 200), Description: long("d", 1000)}, {Label: long("y", 200)}}, Context: long("c", 8000)})
	smsg := e.copyOf(single)
	m := f.Message(smsg)
	label := m.Components[0].Components[0].Label
	if !strings.HasSuffix(label, "…") || len([]rune(label)) != 80 {
		t.Fatalf("long label rendered as %q", label)
	}
	f.Click(alice, smsg, label)
	final := e.wait(single)
	if final.Answers[single.Questions[0].Question] != long("x", 200) {
		t.Errorf("the agent must get the original label, got %q", final.Answers[single.Questions[0].Question])
	}
	_ = msg
}

// pending reads the question's current status.
func (e *env) pending(q *domain.Question) domain.Status {
	e.t.Helper()
	cur, err := e.store.Get(context.Background(), "ops", q.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return cur.Status
}

var _ = time.Second
