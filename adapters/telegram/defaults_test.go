package telegram

import (
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// "Submit defaults" is on every step of a keyboard that collects a draft
// when the defaults answer every item asked, says what it sends, and
// carries callback data Telegram takes (≤ 64 bytes); it is absent when an
// item asked has no default, and on a one-item keyboard the default's own
// button is marked instead.
func TestSubmitDefaultsButton(t *testing.T) {
	def := func(l string) domain.Option { return domain.Option{Label: l, Default: true} }
	q := &domain.Question{ID: domain.NewQuestionID("ops"), Status: domain.StatusPending, Kind: domain.KindQuestion, Questions: []domain.Item{
		{Question: "Which auth method?", Header: "Auth", Options: []domain.Option{def("OAuth 2.0"), {Label: "API key"}}},
		{Question: "Which regions?", Header: "Regions", MultiSelect: true, Options: []domain.Option{def("eu-west"), {Label: "us-east"}},
			ShowIf: &domain.ShowIf{Item: 0, AnyOf: []string{"OAuth 2.0"}}},
		{Question: "Which key name?", ShowIf: &domain.ShowIf{Item: 0, AnyOf: []string{"API key"}}},
	}}
	find := func(q *domain.Question, marks map[string][]string) *InlineKeyboardButton {
		m := render(q, time.Now(), renderOpts{Marks: marks})
		for _, row := range m.Keyboard.InlineKeyboard {
			for i := range row {
				if row[i].CallbackData == callbackData(q.ID, opDefaults) {
					return &row[i]
				}
			}
		}
		return nil
	}
	for _, marks := range []map[string][]string{nil, {"Which auth method?": {"API key"}}} {
		b := find(q, marks)
		if b == nil {
			t.Fatalf("no Submit defaults on the step of draft %v", marks)
		}
		if !strings.HasPrefix(b.Text, "Submit defaults: Auth: OAuth 2.0; Regions: eu") || len(b.CallbackData) > maxCallbackData {
			t.Errorf("button %q, data %q (%d bytes)", b.Text, b.CallbackData, len(b.CallbackData))
		}
	}
	q.Questions[1].Options[0].Default = false
	if b := find(q, nil); b != nil {
		t.Errorf("offered with an item asked that has no default: %+v", b)
	}
	one := &domain.Question{ID: q.ID, Status: domain.StatusPending, Kind: domain.KindQuestion, Questions: q.Questions[:1]}
	m := render(one, time.Now(), renderOpts{})
	if got := m.Keyboard.InlineKeyboard[0][0].Text; got != "OAuth 2.0 (default)" {
		t.Errorf("the default's own button: %q", got)
	}
	if find(one, nil) != nil {
		t.Error("a one-item keyboard offers a second button for its default")
	}
}

// The copy names what the other surfaces show of a question that adapts:
// pictures as links with their alt text (never loaded: previews are off),
// the rules of free text, when a conditional item is asked, and the last
// answers; the fake, which parses the HTML as Telegram does, takes it.
func TestCopyShowsPicturesRulesConditionsAndHistory(t *testing.T) {
	e := newEnv(t)
	req := domain.AskRequest{AgentID: "design-bot", RunID: "r1",
		Context: "Pick a layout.", ContextImage: &domain.Image{URL: "https://img.example.com/l.png?a=1&b=2", Alt: "two <layouts>"},
		Questions: []domain.Item{
			{Question: "Which layout?", Header: "Layout", Options: []domain.Option{
				{Label: "Grid", Image: &domain.Image{URL: "https://img.example.com/g.png", Alt: "a grid"}}, {Label: "List"}}},
			{Question: "Which ticket?", Header: "Ticket", ShowIf: &domain.ShowIf{Item: 0, AnyOf: []string{"Grid"}},
				Image: &domain.Image{URL: "https://img.example.com/t.png", Alt: "a ticket"},
				Other: &domain.FreeTextRules{Pattern: "OPS-[0-9]+", Hint: "a ticket id like OPS-123"}}}}
	first := e.ask(req)
	if _, err := e.router.Answer(t.Context(), first.ProjectID, first.ID, domain.RespondRequest{Answers: map[string]domain.StringList{
		"Which layout?": {"List"}}}, domain.Person{Platform: "slack", ID: "U1", Name: "maria"}); err != nil {
		t.Fatal(err)
	}
	e.settle()
	req.RunID = "r2"
	m := e.msg(e.ask(req))
	for _, want := range []string{"🖼 two <layouts>", "Which layout?", "Grid 🖼 a grid", "2. Ticket (asked only if “Layout” is Grid)", "🖼 a ticket",
		"Your own answer: a ticket id like OPS-123 (matching OPS-[0-9]+)", "🕘 Last time: List (maria, just now)"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("the copy lacks %q:\n%s", want, m.Text)
		}
	}
	for _, want := range []string{`<a href="https://img.example.com/l.png?a=1&amp;b=2">two &lt;layouts&gt;</a>`, `<a href="https://img.example.com/g.png">a grid</a>`} {
		if !strings.Contains(m.HTML, want) {
			t.Errorf("the HTML lacks %s:\n%s", want, m.HTML)
		}
	}
}
