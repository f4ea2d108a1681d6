package telegram

import (
	"context"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/telegram/faketelegram"
	"github.com/askbridge/askbridge/domain"
)

// keyboardTexts lists the copy's buttons as shown now.
func keyboardTexts(m *faketelegram.Msg) []string {
	var out []string
	for _, row := range m.Keyboard {
		for _, b := range row {
			out = append(out, b.Text)
		}
	}
	return out
}

func hasButton(m *faketelegram.Msg, text string) bool {
	for _, b := range keyboardTexts(m) {
		if strings.Contains(b, text) {
			return true
		}
	}
	return false
}

// Several items are asked one after another in the same message: the
// keyboard holds only the current item of the person's draft (the first
// asked item not answered yet, its condition met), the text names the step,
// a multi-select item waits for Next, an item whose condition is not met is
// never shown, and Submit comes once every item asked is answered.
func TestItemsOneAfterAnother(t *testing.T) {
	e := newEnv(t)
	q := e.ask(domain.AskRequest{Questions: []domain.Item{
		{Question: "Which auth method?", Header: "Auth", Options: []domain.Option{opt("OAuth 2.0"), opt("API key")}},
		{Question: "Which scopes?", Header: "Scopes", MultiSelect: true, Options: []domain.Option{opt("read"), opt("write"), opt("admin")}},
		{Question: "Which key name?", Header: "Key", ShowIf: &domain.ShowIf{Item: 0, AnyOf: []string{"API key"}}},
		{Question: "Which OAuth provider?", Header: "Provider", ShowIf: &domain.ShowIf{Item: 0, AnyOf: []string{"OAuth 2.0"}},
			Options: []domain.Option{opt("GitHub"), opt("Google")}},
	}})
	m := e.msg(q)
	if !strings.Contains(m.Text, "Question 1 of 2: Auth") || !hasButton(m, "API key") || hasButton(m, "read") || hasButton(m, "Submit") {
		t.Fatalf("first step: %q %q", m.Text, keyboardTexts(m))
	}

	e.press(alice, m, e.buttonNow(m, "API key"))
	m = e.msg(q)
	if !strings.Contains(m.Text, "Question 2 of 3 (alice's answers): Scopes") || !hasButton(m, "☐ read") || hasButton(m, "API key") || hasButton(m, "Submit") {
		t.Fatalf("after item 1: %q %q", m.Text, keyboardTexts(m))
	}
	if hasButton(m, "GitHub") {
		t.Fatalf("an item whose condition is not met is on the keyboard: %q", keyboardTexts(m))
	}

	// Next before any choice is refused; two toggles stay on the item.
	e.press(alice, m, e.buttonNow(m, "Next ▶"))
	if ts := e.fake.Toasts(alice.ID); !ts[len(ts)-1].Alert || !strings.Contains(ts[len(ts)-1].Text, "Check at least one") {
		t.Errorf("Next with nothing checked: %+v", ts[len(ts)-1])
	}
	e.press(alice, m, e.buttonNow(m, "read"))
	e.press(alice, m, e.buttonNow(m, "write"))
	m = e.msg(q)
	if !hasButton(m, "✓ read") || !hasButton(m, "✓ write") || !strings.Contains(m.Text, "Question 2 of 3") {
		t.Fatalf("multi-select toggles: %q %q", m.Text, keyboardTexts(m))
	}
	e.press(alice, m, e.buttonNow(m, "Next ▶"))
	m = e.msg(q)
	if !strings.Contains(m.Text, "Question 3 of 3 (alice's answers): Key") || !hasButton(m, "Answer 3…") {
		t.Fatalf("after Next: %q %q", m.Text, keyboardTexts(m))
	}

	// The open-ended item is answered by replying to its prompt; then Submit.
	e.press(alice, m, e.buttonNow(m, "Answer 3…"))
	p := e.lastPrompt(m.Chat)
	if st := e.deliver(e.fake.Reply(alice, p.Chat, p.ID, "deploy-key")); st != 200 {
		t.Fatal(st)
	}
	e.settle()
	m = e.msg(q)
	if !strings.Contains(m.Text, "All 3 questions answered (alice's answers): press Submit.") || !hasButton(m, "Submit") || hasButton(m, "Answer 3…") {
		t.Fatalf("after the last item: %q %q", m.Text, keyboardTexts(m))
	}

	// Mallory presses Submit on the keyboard showing alice's step: his own
	// draft is empty, so he is told what is left and the keyboard follows him.
	e.press(mallory, m, e.buttonNow(m, "Submit"))
	if ts := e.fake.Toasts(mallory.ID); len(ts) != 1 || !ts[0].Alert || !strings.Contains(ts[0].Text, "Still to answer: Auth, Scopes") {
		t.Errorf("an empty draft submitted: %+v", ts)
	}
	if got, _ := e.router.Question(context.Background(), "ops", q.ID); got.Status != domain.StatusPending {
		t.Fatalf("mallory's Submit answered: %s", got.Status)
	}

	e.press(alice, m, e.buttonNow(m, "Submit"))
	got, _ := e.router.Question(context.Background(), "ops", q.ID)
	if got.Status != domain.StatusAnswered {
		t.Fatalf("alice's Submit: %s", got.Status)
	}
	want := map[string]string{"Which auth method?": "API key", "Which scopes?": "read, write", "Which key name?": "deploy-key"}
	for k, v := range want {
		if got.Answers[k] != v {
			t.Errorf("answer %q = %v, want %v", k, got.Answers[k], v)
		}
	}
	if _, ok := got.Answers["Which OAuth provider?"]; ok {
		t.Errorf("the item whose condition was not met was answered: %v", got.Answers)
	}
}
