package teams

import (
	"encoding/json"
	"strings"
)

// What a person sees on a card and can press, read from the card JSON as
// the Teams client reads it.

type cardAction struct {
	Type, Title, Verb string
	Data              json.RawMessage
	Card              json.RawMessage // Action.ShowCard's card
}

// walk calls fn on every object of the card, depth first.
func walk(v any, fn func(m map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		fn(x)
		for _, c := range x {
			walk(c, fn)
		}
	case []any:
		for _, c := range x {
			walk(c, fn)
		}
	}
}

func decode(card json.RawMessage) any {
	var v any
	_ = json.Unmarshal(card, &v)
	return v
}

// actions lists the card's actions (those in ShowCards too), refresh excluded.
func actions(card json.RawMessage) []cardAction {
	var out []cardAction
	root := decode(card)
	var refresh map[string]any
	if m, ok := root.(map[string]any); ok {
		refresh, _ = m["refresh"].(map[string]any)
	}
	walk(root, func(m map[string]any) {
		typ, _ := m["type"].(string)
		if !strings.HasPrefix(typ, "Action.") {
			return
		}
		if refresh != nil && refresh["action"] != nil && sameMap(refresh["action"], m) {
			return
		}
		a := cardAction{Type: typ}
		a.Title, _ = m["title"].(string)
		a.Verb, _ = m["verb"].(string)
		if d, ok := m["data"]; ok {
			a.Data, _ = json.Marshal(d)
		}
		if c, ok := m["card"]; ok {
			a.Card, _ = json.Marshal(c)
		}
		out = append(out, a)
	})
	return out
}

func sameMap(a any, b map[string]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// findAction finds the action titled title (a prefix match for titles
// ending in "…").
func findAction(card json.RawMessage, title string) (cardAction, bool) {
	for _, a := range actions(card) {
		if a.Title == title || strings.TrimSuffix(a.Title, "…") == strings.TrimSuffix(title, "…") {
			return a, true
		}
	}
	return cardAction{}, false
}

// cardText is every text of the card a person reads.
func cardText(card json.RawMessage) string {
	var parts []string
	walk(decode(card), func(m map[string]any) {
		typ, _ := m["type"].(string)
		switch typ {
		case "TextBlock", "TextRun":
			if s, ok := m["text"].(string); ok {
				parts = append(parts, s)
			}
		case "Fact":
			t, _ := m["title"].(string)
			v, _ := m["value"].(string)
			parts = append(parts, t+" "+v)
		}
		if typ == "" {
			if t, ok := m["title"].(string); ok {
				if v, ok := m["value"].(string); ok {
					parts = append(parts, t+" "+v)
				}
			}
		}
	})
	return strings.Join(parts, "\n")
}

// live reports whether the card offers actions to answer with.
func live(card json.RawMessage) bool {
	for _, a := range actions(card) {
		if a.Type == "Action.Execute" || a.Type == "Action.ShowCard" {
			return true
		}
	}
	return false
}

// inputs lists the ids of the card's inputs by type.
func inputs(card json.RawMessage) map[string]map[string]any {
	out := map[string]map[string]any{}
	walk(decode(card), func(m map[string]any) {
		typ, _ := m["type"].(string)
		if id, ok := m["id"].(string); ok && strings.HasPrefix(typ, "Input.") {
			out[id] = m
		}
	})
	return out
}
