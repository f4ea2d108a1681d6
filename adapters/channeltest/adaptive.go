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
