package actiontext

import (
	"encoding/json"

	"github.com/askbridge/askbridge/domain"
)

// Rule is an "always allow" suggestion in words (domain.SuggestionRule: the
// CLI words it the same way).
type Rule = domain.SuggestionRule

// Describe puts one suggestion in words, the same on every surface
// (domain.DescribeSuggestion).
func Describe(raw json.RawMessage) Rule { return domain.DescribeSuggestion(raw) }

// RuleWords is what a suggestion stops asking about (Describe's What).
func RuleWords(s json.RawMessage) string { return Describe(s).What }

// RuleScope is where a suggestion applies (Describe's Where).
func RuleScope(s json.RawMessage) string { return Describe(s).Where }

// AlwaysAllowLabel is the choice offered for a suggestion (Describe's
// Sentence): "Allow, and don't ask again this session for Bash(git status:*)".
func AlwaysAllowLabel(s json.RawMessage) string { return Describe(s).Sentence() }
