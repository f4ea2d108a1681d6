package domain

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a person reads is what they decide: every probe below was a way for
// an agent's text to make a person's choice mean something else, or to
// hide what they read. Each is refused at ask time, naming the field.
func TestWhatPeopleReadIsWhatTheyDecide(t *testing.T) {
	approval := func(opts ...Option) *AskRequest {
		return &AskRequest{RunID: "r", Question: "Run rm -rf /srv/data?", Options: opts,
			Action: &Action{Tool: "Bash", Input: json.RawMessage(`{"command":"rm -rf /srv/data"}`)}}
	}
	question := func(opts ...Option) *AskRequest { return &AskRequest{Question: "Which?", Options: opts} }
	for _, c := range []struct {
		name  string
		req   *AskRequest
		field string
	}{
		{"crossed values on an approval", approval(Option{Label: "Allow", Value: "Deny"}, Option{Label: "Deny", Value: "Allow"}), "questions[0].options[0].value"},
		{"a value naming another label in other case and spaces", question(Option{Label: "Keep", Value: "  drop "}, Option{Label: "Drop"}), "questions[0].options[0].value"},
		{"a value naming another label in full-width letters", question(Option{Label: "Keep", Value: "ＤＲＯＰ"}, Option{Label: "Drop"}), "questions[0].options[0].value"},
		{"a value naming another label with a Cyrillic letter", question(Option{Label: "Keep", Value: "Drоp"}, Option{Label: "Drop"}), "questions[0].options[0].value"},
		{"a look-alike Deny and Cancel on an approval", approval(Option{Label: "Dеny"}, Option{Label: "Cancel"}), "questions[0].options"},
		{"an approval whose options allow nothing", approval(Option{Label: "Deny"}, Option{Label: "Later"}, Option{Label: "Never"}), "questions[0].options"},
		{"labels that differ by a zero-width space", question(Option{Label: "Allow"}, Option{Label: "Al\u200blow"}), "questions[0].options[1].label"},
		{"labels that differ by a confusable letter", question(Option{Label: "Deny"}, Option{Label: "Dеny"}), "questions[0].options[1].label"},
		{"a bidi override in a label", question(Option{Label: "\u202eyneD"}, Option{Label: "Allow"}), "questions[0].options[0].label"},
		{"a bidi isolate in a header", &AskRequest{Question: "Go?", Header: "A\u2066b"}, "questions[0].header"},
		{"NUL in a question", &AskRequest{Question: "Go?\x00 really"}, "questions[0].question"},
		{"U+FFFD (a lone surrogate) in the context", &AskRequest{Question: "Go?", Context: "see \ufffd"}, "context"},
		{"invalid UTF-8 in a description", question(Option{Label: "A", Description: "x\xff"}, Option{Label: "B"}), "questions[0].options[0].description"},
		{"NUL in a run id", &AskRequest{Question: "Go?", RunID: "r\x00"}, "run_id"},
		{"an escape in the agent name", &AskRequest{Question: "Go?", AgentName: "bot\x1b[2J"}, "agent_name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := BuildQuestion(c.req, AskDefaults{Timeout: DefaultTimeout}, false)
			require.Error(t, err)
			var e *Error
			require.ErrorAs(t, err, &e)
			fields := []string{}
			for _, d := range e.Details {
				fields = append(fields, d.Field)
			}
			assert.Contains(t, fields, c.field, "%v", e.Details)
		})
	}
}

// TestApprovalsPeopleCanReadAreAccepted: the rules above leave ordinary
// approvals alone, and a look-alike label is read as what it looks like.
func TestApprovalsPeopleCanReadAreAccepted(t *testing.T) {
	for _, opts := range [][]Option{
		{{Label: "Allow"}, {Label: "Deny"}},
		{{Label: "Approve", Value: "yes"}, {Label: "Deny", Value: "no"}, {Label: "Deny with note…"}},
		{{Label: "Ship it"}, {Label: "Hold"}}, // two options, neither recognised: the first allows
		{{Label: "Allow"}, {Label: "Cancel"}},
	} {
		req := &AskRequest{RunID: "r", Question: "Run it?", Options: opts,
			Action: &Action{Tool: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}}
		_, _, err := BuildQuestion(req, AskDefaults{Timeout: DefaultTimeout}, false)
		assert.NoError(t, err, "%v", opts)
	}
	assert.Equal(t, ToneDeny, OptionTone(Option{Label: "Dеny"}), "a Cyrillic е still reads Deny")
	assert.Equal(t, ToneDeny, OptionTone(Option{Label: "ＤＥＮＹ"}))
}

// TestAnApprovalDecidesByTheOptionChosen: typed or clicked, the option a
// person names decides, whatever the other options' values.
func TestAnApprovalDecidesByTheOptionChosen(t *testing.T) {
	q, _, err := BuildQuestion(&AskRequest{RunID: "r", Question: "Run it?", Options: []Option{{Label: "Allow"}, {Label: "Deny"}},
		Action: &Action{Tool: "Bash", Input: json.RawMessage(`{"command":"rm -rf /srv/data"}`)}}, AskDefaults{Timeout: DefaultTimeout}, false)
	require.NoError(t, err)
	for typed, want := range map[string]string{"Deny": BehaviorDeny, " deny ": BehaviorDeny, "Allow": BehaviorAllow, "no way": BehaviorDeny} {
		req := RespondRequest{Response: &typed}
		ans, err := ParseAnswer(q, req)
		require.NoError(t, err)
		require.NoError(t, DecideApproval(q, req, &ans, &Person{Platform: "api", ID: "op"}))
		assert.Equal(t, want, ans.Decision.Behavior, typed)
	}
}

func TestAnswersWithNULOrInvalidTextAreRefused(t *testing.T) {
	q, _, err := BuildQuestion(&AskRequest{Question: "Ticket?"}, AskDefaults{Timeout: DefaultTimeout}, false)
	require.NoError(t, err)
	for _, s := range []string{"OPS-1\x00", "OPS-\ufffd", "bad \xff"} {
		_, err := ParseAnswer(q, RespondRequest{Response: &s})
		assert.Equal(t, EInvalidAnswer, ErrorCode(err), "%q", s)
	}
}

// TestLinksShowWhereTheyGo: a Markdown link in agent text shows its real
// destination, whatever its words imitate.
func TestLinksShowWhereTheyGo(t *testing.T) {
	for in, want := range map[string]string{
		"[https://bridge.example/approve](https://evil.example/x)": "https://bridge.example/approve (https://evil.example/x)",
		"see [docs](<https://evil.example>) now":                   "see docs (https://evil.example) now",
		`[x](https://evil.example "Bridge")`:                       "x (https://evil.example)",
		"no links here [just brackets]":                            "no links here [just brackets]",
	} {
		assert.Equal(t, want, ShowLinks(in))
	}
	q := &Question{Context: "[ok](https://evil.example)", Questions: []Item{{Question: "Go [here](https://e.example)?",
		Options: []Option{{Label: "A", Description: "[b](https://f.example)"}, {Label: "B"}}}}}
	c := q.WithLinksShown()
	assert.Equal(t, "ok (https://evil.example)", c.Context)
	assert.Equal(t, "Go here (https://e.example)?", c.Questions[0].Question)
	assert.Equal(t, "b (https://f.example)", c.Questions[0].Options[0].Description)
	assert.Equal(t, "[ok](https://evil.example)", q.Context, "the record itself is untouched")
	plain := &Question{Context: "see https://docs.example (not masked)", Questions: []Item{{Question: "Go?"}}}
	assert.Same(t, plain, plain.WithLinksShown(), "a question without a masked link is not copied")
}
