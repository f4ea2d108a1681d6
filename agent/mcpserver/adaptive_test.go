package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/domain"
)

// The ask_user tool describes the optional enhancements, passes them to
// the bridge, and refuses a broken one naming it; callers that send none
// keep the AskUserQuestion shape.
func TestToolSchemaAndInputCarryTheEnhancements(t *testing.T) {
	b, _ := json.Marshal(InputSchema())
	for _, want := range []string{`"show_if"`, `"any_of"`, `"none_of"`, `"other"`, `"pattern"`, `"hint"`, `"default"`, `"image"`, `"alt"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("input schema lacks %s", want)
		}
	}
	in, ps := decodeInput(json.RawMessage(`{"questions":[
	 {"question":"Which auth?","header":"Auth","options":[{"label":"API key","description":"k","default":true,"image":{"url":"https://img.example/k.png","alt":"a key"}},{"label":"OAuth","description":"o"}]},
	 {"question":"Ticket?","header":"Ticket","show_if":{"item":0,"any_of":["API key"]},"other":{"pattern":"OPS-[0-9]+","hint":"a ticket id"}}]}`))
	if len(ps) != 0 {
		t.Fatalf("problems: %v", ps)
	}
	it := in.Questions[1].domainItem()
	if it.ShowIf == nil || it.Other == nil || !in.Questions[0].domainItem().Options[0].Default || in.Questions[0].domainItem().Options[0].Image == nil {
		t.Fatalf("enhancements lost: %+v", it)
	}
	_, ps = decodeInput(json.RawMessage(`{"questions":[{"question":"A?","header":"A","show_if":{"item":1,"any_of":["x"]}},{"question":"B?","header":"B"}]}`))
	if len(ps) == 0 || !strings.Contains(strings.Join(ps, "\n"), "questions[0].show_if.item: points forward") {
		t.Errorf("a forward condition was not refused by name: %v", ps)
	}
}

// The host user's form: a conditional item is not required and says when
// it applies; defaults are the form's defaults; the rules are described.
func TestElicitationFormOfAnAdaptiveQuestion(t *testing.T) {
	q := &domain.Question{Questions: []domain.Item{
		{Question: "Which auth?", Header: "Auth", Options: []domain.Option{{Label: "API key", Default: true}, {Label: "OAuth"}}},
		{Question: "Ticket?", ShowIf: &domain.ShowIf{Item: 0, AnyOf: []string{"API key"}}, Other: &domain.FreeTextRules{MaxLength: 10, Hint: "a ticket id"}},
	}}
	schema, names := elicitSchema(q)
	props := schema["properties"].(map[string]any)
	if d := props[names[0]].(map[string]any)["default"]; d != "API key" {
		t.Errorf("default %v", d)
	}
	ticket := props[names[1]].(map[string]any)
	if !strings.Contains(ticket["description"].(string), "asked only if “Auth” is API key") || ticket["maxLength"] != 10 {
		t.Errorf("ticket %v", ticket)
	}
	for _, r := range schema["required"].([]string) {
		if r == names[1] {
			t.Error("a conditional item is required in the form")
		}
	}
}
