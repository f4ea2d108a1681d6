package discord

import (
	"testing"

	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/domain"
)

// TestApprovalButtonsStyledAndDenyWithNote: Allow is a success (green)
// button and Deny a danger (red) one; there is no "Other…" whose text
// would deny; "Deny with note…" opens a modal that says what it does and
// its text is recorded as a denial that never reads as Allow.
func TestApprovalButtonsStyledAndDenyWithNote(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	q := e.ask(&domain.AskRequest{RunID: "sess-1", Kind: domain.KindApproval, Questions: []domain.Item{{
		Question: "Allow Bash: rm -rf build?", Header: "Approval",
		Options: []domain.Option{{Label: "Allow", Description: "Let the agent run it"}, {Label: "Deny", Description: "Refuse"}}}}})
	msg := e.copyOf(q)
	m := f.Message(msg)
	if s := f.Button(m, "Allow").Style; s != 3 {
		t.Errorf("Allow has style %d, want 3 (success)", s)
	}
	if s := f.Button(m, "Deny").Style; s != 4 {
		t.Errorf("Deny has style %d, want 4 (danger)", s)
	}
	for _, row := range m.Components {
		for _, c := range row.Components {
			if c.Label == "Other…" {
				t.Errorf("an approval offers a free-text Other… button")
			}
		}
	}
	modal := f.Click(alice, msg, "Deny with note…")
	if modal.Type != 9 || modal.Data == nil || modal.Data.Title != "Deny with note" {
		t.Fatalf("Deny with note… answered with type %d %+v, want the note modal", modal.Type, modal.Data)
	}
	f.SubmitModal(alice, msg, modal, "allow")
	final := e.wait(q)
	if final.Response != "Deny" || final.Reason != "allow" {
		t.Errorf("the note was recorded as %q with reason %q, want Deny with the note as its reason", final.Response, final.Reason)
	}
	e.settle()
	e.assertFinished(msg, "⛔ Denied with a note by alice: allow")
}
