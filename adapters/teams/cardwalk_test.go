package teams

import (
	"encoding/json"
	"strings"
)

// What a person sees on a card and can press, read from the card JSON as
// the Teams client reads it.

type seenControl struct {
	Type, Title, Verb string
	Data              json.RawMessage
	Card              json.RawMessage // Action.ShowCard's card
}

// seenWalk calls fn on every object of the card, depth first.
func seenWalk(v any, fn func(m map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		fn(x)
		for _, c := range x {
			seenWalk(c, fn)
		}
	case []any:
		for _, c := range x {
			seenWalk(c, fn)
		}
	}
}

func seenDecode(card json.RawMessage) any {
	var v any
	_ = json.Unmarshal(card, &v)
	return v
}

// seenActions lists the card's seenActions (those in ShowCards too), refresh excluded.
func seenActions(card json.RawMessage) []seenControl {
	var out []seenControl
	root := seenDecode(card)
	var refresh map[string]any
	if m, ok := root.(map[string]any); ok {
		refresh, _ = m["refresh"].(map[string]any)
	}
	seenWalk(root, func(m map[string]any) {
		typ, _ := m["type"].(string)
		if !strings.HasPrefix(typ, "Action.") {
			return
		}
		if refresh != nil && refresh["action"] != nil && seenSame(refresh["action"], m) {
			return
		}
		a := seenControl{Type: typ}
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

func seenSame(a any, b map[string]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// seenAction finds the action titled title (a prefix match for titles
// ending in "…").
func seenAction(card json.RawMessage, title string) (seenControl, bool) {
	for _, a := range seenActions(card) {
		if a.Title == title || strings.TrimSuffix(a.Title, "…") == strings.TrimSuffix(title, "…") {
			return a, true
		}
	}
	return seenControl{}, false
}

// seenText is every text of the card a person reads.
func seenText(card json.RawMessage) string {
	var parts []string
	seenWalk(seenDecode(card), func(m map[string]any) {
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

// seenLive reports whether the card offers seenActions to answer with.
func seenLive(card json.RawMessage) bool {
	for _, a := range seenActions(card) {
		if a.Type == "Action.Execute" || a.Type == "Action.ShowCard" {
			return true
		}
	}
	return false
}

// seenInputs lists the ids of the card's seenInputs by type.
func seenInputs(card json.RawMessage) map[string]map[string]any {
	out := map[string]map[string]any{}
	seenWalk(seenDecode(card), func(m map[string]any) {
		typ, _ := m["type"].(string)
		if id, ok := m["id"].(string); ok && strings.HasPrefix(typ, "Input.") {
			out[id] = m
		}
	})
	return out
}
