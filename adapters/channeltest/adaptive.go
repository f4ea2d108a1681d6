package channeltest

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/domain"
)

// Questions that adapt (docs/adaptive-questions.md), the same on every surface:
//   - An item whose show_if the answers do not meet is not asked: a
//     Submit without it is recorded, the item listed in skipped and absent
//     from answers.
//   - Free text that breaks the item's rules (other) is refused and
//     nothing is recorded; text that keeps them is the answer.
//   - Options marked default are named or pre-selected on the copy.
//   - A surface whose Driver is a DefaultsDriver answers with the
//     defaults in one action: every item asked under the
//     defaults (show_if applied to them) gets its defaults, recorded once
//     for the person who acted, under the responders rules. It is not
//     offered, or refused with nothing recorded, while an item asked has
//     no default.
func adaptive(t *testing.T, newEnv InboundFactory) {
	t.Run("HiddenItemSkipped", func(t *testing.T) {
		s := startInbound(t, newEnv)
		q := s.ask(domain.AskRequest{Questions: []domain.Item{
			{Question: "Which auth method?", Header: "Auth", Options: []domain.Option{opt("OAuth 2.0", ""), opt("API key", "")}},
			{Question: "Which regions?", Header: "Regions", MultiSelect: true, Options: []domain.Option{opt("eu-west", ""), opt("us-east", "")},
				ShowIf: &domain.ShowIf{Item: 0, NoneOf: []string{"API key"}}},
			{Question: "Which key name?", Header: "Key", ShowIf: &domain.ShowIf{Item: 0, AnyOf: []string{"API key"}}},
		}})
		s.d.Submit(Alice, q, map[string][]string{"Which auth method?": {"OAuth 2.0"}, "Which regions?": {"eu-west"}})
		got := s.get(q)
		if got.Status != domain.StatusAnswered {
			t.Fatalf("status %s; told %v", got.Status, s.d.Told(Alice))
		}
		if _, ok := got.Answers["Which key name?"]; ok || got.Answers["Which regions?"] != "eu-west" {
			t.Errorf("answers %v", got.Answers)
		}
		if len(got.Skipped) != 1 || got.Skipped[0].Question != "Which key name?" {
			t.Errorf("skipped %v", got.Skipped)
		}
	})
	t.Run("RulesRefuseFreeText", func(t *testing.T) {
		s := startInbound(t, newEnv)
		q := s.ask(domain.AskRequest{Questions: []domain.Item{{Question: "Which ticket?", Header: "Ticket",
			Other: &domain.FreeTextRules{Pattern: `OPS-[0-9]+`, MaxLength: 12, Hint: "a ticket id like OPS-123"}}}})
		s.d.Other(Alice, q, "ops twelve")
		if got := s.get(q); got.Status != domain.StatusPending {
			t.Fatalf("text against the rules was recorded: %s %v", got.Status, got.Answers)
		}
		s.d.Other(Alice, q, "OPS-12")
		if got := s.get(q); got.Status != domain.StatusAnswered || got.Answers["Which ticket?"] != "OPS-12" {
			t.Fatalf("valid text: %s %v; told %v", got.Status, got.Answers, s.d.Told(Alice))
		}
	})
	t.Run("DefaultsInOnePress", func(t *testing.T) { defaultsInOnePress(t, newEnv) })
	t.Run("DefaultsNamed", func(t *testing.T) {
		s := startInbound(t, newEnv)
		o := opt("API key", "")
		o.Default = true
		q := s.ask(domain.AskRequest{Questions: []domain.Item{{Question: "Which auth method?", Header: "Auth",
			Options: []domain.Option{opt("OAuth 2.0", ""), o}}}})
		if c := s.d.Copy(q); !strings.Contains(strings.ToLower(c), "default") {
			t.Errorf("the copy does not name the default: %q", c)
		}
	})
}

// DefaultsDriver is a Driver of a surface that answers a question with its
// defaults in one action: "Submit defaults" where nothing can be
// pre-selected (Telegram's keyboards that collect a draft), the default
// option's own button where each option is a button (Slack, Discord,
// Telegram), or Submit on a copy whose defaults are pre-selected.
type DefaultsDriver interface {
	// SubmitDefaults takes that action on q's copy as it was posted, as
	// name. It reports false when the copy offers no such action (and
	// then does nothing).
	SubmitDefaults(name string, q *domain.Question) bool
}

func defaultsInOnePress(t *testing.T, newEnv InboundFactory) {
	def := func(label string) domain.Option { o := opt(label, ""); o.Default = true; return o }
	drive := func(t *testing.T, s *in) DefaultsDriver {
		dd, ok := s.d.(DefaultsDriver)
		if !ok {
			t.Skip("this surface's driver takes no one-press defaults (the web inbox checks them on its form)")
		}
		return dd
	}
	t.Run("one item", func(t *testing.T) {
		s := startInbound(t, newEnv)
		dd := drive(t, s)
		q := s.ask(domain.AskRequest{Questions: []domain.Item{{Question: "Which auth method?", Header: "Auth",
			Options: []domain.Option{opt("OAuth 2.0", ""), def("API key")}}}})
		if !dd.SubmitDefaults(Alice, q) {
			t.Fatal("the copy offers no one-press answer with the default")
		}
		got := s.get(q)
		if got.Status != domain.StatusAnswered || got.Answers["Which auth method?"] != "API key" || !s.is(got.RespondedBy, Alice) {
			t.Fatalf("after the defaults: %s %v by %v; told %v", got.Status, got.Answers, got.RespondedBy, s.d.Told(Alice))
		}
	})
	t.Run("conditional items", func(t *testing.T) {
		s := startInbound(t, newEnv)
		dd := drive(t, s)
		q := s.ask(domain.AskRequest{Questions: []domain.Item{
			{Question: "Which auth method?", Header: "Auth", Options: []domain.Option{def("OAuth 2.0"), opt("API key", "")}},
			{Question: "Which regions?", Header: "Regions", MultiSelect: true, Options: []domain.Option{def("eu-west"), opt("us-east", ""), def("ap-south")},
				ShowIf: &domain.ShowIf{Item: 0, NoneOf: []string{"API key"}}},
			// Not asked under the defaults, so its having none is fine.
			{Question: "Which key name?", Header: "Key", ShowIf: &domain.ShowIf{Item: 0, AnyOf: []string{"API key"}}},
		}, Responders: &domain.Responders{Users: []string{s.d.Person(Alice).Key(), s.d.Person(Bob).Key()}}})
		before := s.get(q)
		msg := s.refused(Mallory, "someone not allowed", func() {
			if !dd.SubmitDefaults(Mallory, q) {
				t.Fatal("the copy offers no one-press answer with the defaults")
			}
		})
		s.says("what mallory was told", msg, s.w.NotAllowed(before, s.d.Person(Mallory)).Text)
		s.sameRecord("mallory's defaults", before, s.get(q))

		dd.SubmitDefaults(Alice, q)
		got := s.get(q)
		if got.Status != domain.StatusAnswered || !s.is(got.RespondedBy, Alice) {
			t.Fatalf("after alice's defaults: %s by %v; told %v", got.Status, got.RespondedBy, s.d.Told(Alice))
		}
		want := map[string]string{"Which auth method?": "OAuth 2.0", "Which regions?": "eu-west, ap-south"}
		if len(got.Answers) != len(want) || got.Answers["Which auth method?"] != want["Which auth method?"] || got.Answers["Which regions?"] != want["Which regions?"] {
			t.Errorf("answers %v, want %v", got.Answers, want)
		}
		if len(got.Skipped) != 1 || got.Skipped[0].Question != "Which key name?" {
			t.Errorf("skipped %v", got.Skipped)
		}
		s.settle()
		msg = s.refused(Bob, "defaults after an answer", func() { dd.SubmitDefaults(Bob, q) })
		s.says("what bob was told", msg, s.w.AlreadyAnswered(got).Text)
		s.sameRecord("bob's defaults", got, s.get(q))
	})
	t.Run("an item asked has no default", func(t *testing.T) {
		s := startInbound(t, newEnv)
		dd := drive(t, s)
		q := s.ask(domain.AskRequest{Questions: []domain.Item{
			{Question: "Which auth method?", Header: "Auth", Options: []domain.Option{def("OAuth 2.0"), opt("API key", "")}},
			{Question: "Which regions?", Header: "Regions", MultiSelect: true, Options: []domain.Option{opt("eu-west", ""), opt("us-east", "")}},
		}})
		var offered bool
		msgs := s.told(Alice, func() { offered = dd.SubmitDefaults(Alice, q) })
		if got := s.get(q); got.Status != domain.StatusPending || len(got.Answers) != 0 {
			t.Fatalf("defaults with an item asked that has none were recorded: %s %v", got.Status, got.Answers)
		}
		if offered && len(msgs) == 0 {
			t.Error("the action was offered, refused, and alice was told nothing")
		}
	})
}
