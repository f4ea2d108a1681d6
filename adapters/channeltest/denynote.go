package channeltest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// The "Deny with note" case, the same on every surface (Slack, Discord,
// Telegram, the web inbox, email): a note given with Deny is a reason,
// carried as such, never read as an answer. Whatever the note says — an
// option's label, value or description, a number, "Allow." with
// punctuation, quotes or full-width letters — the record ends denied: the
// Deny option chosen, the note kept as the record's reason exactly as
// typed, and for an approval with an action decision.behavior "deny" with
// the note as decision.message.

// NoteDriver denies an approval with a note as a suite person on one
// surface. Every Driver is one; email, which has no inbound Driver,
// implements just this.
type NoteDriver interface {
	// Person is who name is on the surface.
	Person(name string) domain.Person
	// DenyWithNote denies q through the surface's own "Deny with note…"
	// control — a field, a modal, a reply, the Deny link's page — typing
	// note exactly, and returns once the surface has handled it.
	DenyWithNote(name string, q *domain.Question, note string)
	// NoteLimit is the most characters the surface's note box takes: the
	// platform's cap on a text input, at most domain.MaxAnswerLen.
	NoteLimit() int
}

// NoteEnv is one surface under the "Deny with note" case.
type NoteEnv struct {
	// Router has the surface added and uses the suite's RouterConfig.
	Router *lifecycle.Router
	// Targets are where questions are posted (nil: the web inbox). The
	// suite asks in project "ops".
	Targets []domain.Target
	Driver  NoteDriver
}

// NoteFactory builds a NoteEnv on the suite's RouterConfig (Clock, Logger
// set; the factory adds its Store).
type NoteFactory func(t *testing.T, rc lifecycle.RouterConfig) *NoteEnv

// RunDenyWithNote runs the "Deny with note" case against the surface
// newEnv builds. RunInbound runs it too, for every inbound Driver.
func RunDenyWithNote(t *testing.T, newEnv NoteFactory) {
	clock := &Clock{now: time.Now().UTC()}
	logs := &logBuffer{}
	rc := lifecycle.RouterConfig{Clock: clock, Logger: logs.logger(), PauseWait: SuitePauseWait,
		CopyRetryBackoff: 5 * time.Millisecond, CopyRetryFor: time.Second,
		HasWebhookSecret: func(string) bool { return true }}
	env := newEnv(t, rc)
	d := env.Driver
	limit := min(d.NoteLimit(), domain.MaxAnswerLen)
	if limit <= 0 {
		limit = domain.MaxAnswerLen
	}
	// One surface for every note (a driver acts on the test that built
	// it), so a failure names the note instead of stopping the table.
	for _, withAction := range []bool{false, true} {
		kind := "approval"
		if withAction {
			kind = "action approval"
		}
		for i, note := range DenyNotes(limit) {
			req := NoteApproval(withAction)
			req.AgentID, req.AgentName = "deploy-bot", "Deploy bot"
			req.RunID = fmt.Sprintf("deny-note-%t-%d", withAction, i)
			req.Targets = env.Targets
			res, err := env.Router.Ask(context.Background(), "ops", &req, "")
			if err != nil {
				t.Fatalf("ask: %v", err)
			}
			q := res.Question
			d.DenyWithNote(Alice, q, note)
			got, err := env.Router.Question(context.Background(), q.ProjectID, q.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range DeniedWithNote(got, note, d.Person(Alice)) {
				t.Errorf("%s, Deny with note %q: %s", kind, domain.Shorten(note, 24), p)
			}
		}
	}
}

// NoteApproval is the approval the "Deny with note" case asks: Allow and
// Deny with values and descriptions, and with an action when withAction.
func NoteApproval(withAction bool) domain.AskRequest {
	req := domain.AskRequest{Kind: domain.KindApproval, Question: "Run rm -rf build?", Header: "Bash",
		Options: []domain.Option{
			{Label: "Allow", Value: "run", Description: "Run the command as asked"},
			{Label: "Deny", Value: "refuse", Description: "Do not run it"}}}
	if withAction {
		req.Action = &domain.Action{Tool: "Bash", Input: json.RawMessage(`{"command":"rm -rf build"}`)}
	}
	return req
}

// DenyNotes are the notes the case denies with: ones that read like an
// answer in every way people type one, and one of limit characters.
func DenyNotes(limit int) []string {
	long := strings.Repeat("Allow. ", limit/7+1)
	long = string([]rune(long)[:limit])
	return []string{
		"Allow", "Allow.", `"Allow"`, "allow!", " ALLOW ", "Ａｌｌｏｗ",
		"run",                      // the Allow option's value
		"Run the command as asked", // the Allow option's description
		"1",
		"Deny", "refuse", "2", // the Deny option's label and value, its number
		"use make clean instead",
		long,
	}
}

// DeniedWithNote lists how q differs from a record denied by who with
// note as its reason, exactly as typed; nil when it is one.
func DeniedWithNote(q *domain.Question, note string, who domain.Person) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	it := q.Questions[0]
	if q.Status != domain.StatusAnswered {
		return []string{fmt.Sprintf("the question is %s, want answered", q.Status)}
	}
	if keyOf(q.RespondedBy) != who.Key() {
		bad("responded_by %v, want %s", q.RespondedBy, who.Key())
	}
	if q.Answers[it.Question] != "Deny" || q.Response != "refuse" || len(q.Selections[it.Question]) != 1 || q.Selections[it.Question][0] != "Deny" {
		bad("recorded answers %q, response %q, selections %q; want the Deny option (answers \"Deny\", response \"refuse\")",
			domain.Shorten(q.Answers[it.Question], 60), domain.Shorten(q.Response, 60), q.Selections[it.Question])
	}
	if q.Reason != note {
		bad("reason %q (%d characters), want the note exactly as typed (%d characters)",
			domain.Shorten(q.Reason, 60), utf8.RuneCountInString(q.Reason), utf8.RuneCountInString(note))
	}
	if len(q.FreeText) > 0 {
		bad("free_text %q: a note is no answer", q.FreeText)
	}
	if q.Action == nil {
		if q.Decision != nil {
			bad("an approval without an action got a decision: %+v", q.Decision)
		}
		return out
	}
	switch {
	case q.Decision == nil || q.Decision.Behavior != domain.BehaviorDeny:
		bad("decision %+v, want deny", q.Decision)
	case q.Decision.Message != note:
		bad("decision.message %q, want the note exactly as typed", domain.Shorten(q.Decision.Message, 60))
	case len(q.Decision.Input) > 0:
		bad("a denial carries arguments to run: %s", q.Decision.Input)
	}
	return out
}
