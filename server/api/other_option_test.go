package api_test

import (
	"testing"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
)

// TestAnOtherOptionIs400: the HTTP API refuses an option labelled "Other"
// (every surface adds a free-text "Other" itself) with the same words as
// MCP, naming the label; nothing is stored.
func TestAnOtherOptionIs400(t *testing.T) {
	b := newBridge(t, opts{})
	for name, body := range map[string]map[string]any{
		"items": {"questions": []any{map[string]any{"question": "Which database?", "header": "DB",
			"options": []map[string]any{{"label": "Postgres"}, {"label": "Other", "description": "something else"}}}}},
		"shorthand": {"question": "Which database?", "options": []map[string]any{{"label": "Postgres"}, {"label": "other…"}}},
	} {
		r := b.do("POST", "/api/projects/ops/agent-questions", "", body)
		assert.Equal(t, 400, r.status, name)
		assert.Equal(t, "invalid", r.code(), name)
		e, _ := r.body["error"].(map[string]any)
		assert.Equal(t, []any{map[string]any{"field": "questions[0].options[1].label", "problem": domain.OtherOptionProblem}}, e["details"], "%s: %s", name, r.raw)
	}
	r := b.do("GET", "/api/projects/ops/agent-questions", "", nil)
	assert.Empty(t, r.body["questions"], "nothing was stored")
}
