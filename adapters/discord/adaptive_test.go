package discord

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/domain"
)

func adaptiveAsk(t *testing.T) *domain.AskRequest {
	var req domain.AskRequest
	if err := json.Unmarshal([]byte(`{"context":"Pick how it signs in.","context_image":{"url":"https://img.example/arch.png","alt":"the architecture"},
	 "questions":[
	 {"question":"Which auth?","header":"Auth","options":[{"label":"API key","image":{"url":"https://img.example/k.png","alt":"a key"}},{"label":"OAuth","default":true}]},
	 {"question":"Ticket?","header":"Ticket","options":[],"show_if":{"item":0,"any_of":["API key"]},
	  "other":{"pattern":"OPS-[0-9]+","max_length":12,"hint":"a ticket id like OPS-123"}},
	 {"question":"Scopes?","header":"Scopes","multiSelect":true,"options":[{"label":"read","default":true},{"label":"write"}],"show_if":{"item":0,"none_of":["API key"]}}]}`), &req); err != nil {
		t.Fatal(err)
	}
	return &req
}

// A question that adapts, on Discord: defaults pre-selected (select
// option default), only the items shown are asked and the message is
// updated when a choice changes that, pictures in the embed with their
// alt text in the text, and the rules refused with a button that re-opens
// the modal holding what was typed.
func TestDiscordConditionsDefaultsRulesAndPictures(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	q := e.ask(adaptiveAsk(t))
	msg := e.copyOf(q)
	m := f.Message(msg)
	if len(m.Components) != 3 { // Auth, Scopes, Submit: Ticket? waits for API key
		t.Fatalf("%d rows, want Auth, Scopes and Submit", len(m.Components))
	}
	if o := m.Components[0].Components[0].Options[1]; o.Label != "OAuth" || !o.Default {
		t.Errorf("the default is not pre-selected: %+v", o)
	}
	emb := m.Embeds[0]
	if emb.Image == nil || emb.Image.URL != "https://img.example/arch.png" {
		t.Errorf("embed image %+v", emb.Image)
	}
	body, _ := json.Marshal(emb)
	for _, want := range []string{"a key", "asked only if “Auth” is API key", "(default)"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("embed lacks %q", want)
		}
	}

	// API key asks Ticket? (the message is updated) and hides Scopes?.
	if r := f.Choose(alice, msg, 0, "API key"); r.Type != 7 {
		t.Fatalf("a choice others depend on answered with type %d, want 7 (update)", r.Type)
	}
	m = f.Message(msg)
	if len(m.Components) != 3 || m.Components[1].Components[0].Label != "Answer Ticket…" {
		t.Fatalf("after API key: rows %+v", m.Components)
	}
	modal := f.Click(alice, msg, "Answer Ticket…")
	r := f.SubmitModal(alice, msg, modal, "ops 12")
	if r.Type != 4 || !strings.Contains(fakediscord.Deref(r.Data.Content), "expected a ticket id like OPS-123") {
		t.Fatalf("refusal: type %d %q", r.Type, fakediscord.Deref(r.Data.Content))
	}
	if e.pending(q) != domain.StatusPending {
		t.Fatal("a refused answer was recorded")
	}
	in, tok, _ := f.Interaction(alice, m, 3, map[string]any{"custom_id": (*r.Data.Components)[0].Components[0].CustomID, "component_type": 2})
	again := f.Send(in, tok)
	if again.Type != 9 || !strings.Contains(string(mustJSON(again)), "ops 12") {
		t.Fatalf("the modal did not re-open with what was typed: %s", mustJSON(again))
	}
	f.SubmitModal(alice, msg, modal, "OPS-12")
	f.Click(alice, msg, "Submit")
	final := e.wait(q)
	if want := map[string]string{"Which auth?": "API key", "Ticket?": "OPS-12"}; !reflect.DeepEqual(final.Answers, want) {
		t.Errorf("answers %v", final.Answers)
	}
	if len(final.Skipped) != 1 || final.Skipped[0].Question != "Scopes?" {
		t.Errorf("skipped %v", final.Skipped)
	}
}

// Submitting without touching anything answers with the defaults shown.
func TestDiscordSubmitWithTheDefaults(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	q := e.ask(adaptiveAsk(t))
	msg := e.copyOf(q)
	f.Click(bob, msg, "Submit")
	final := e.wait(q)
	if want := map[string]string{"Which auth?": "OAuth", "Scopes?": "read"}; !reflect.DeepEqual(final.Answers, want) {
		t.Errorf("answers %v", final.Answers)
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }
