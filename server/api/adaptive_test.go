package api_test

import (
	"testing"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/server/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Conditions, free-text rules, defaults and images over the API: the
// document describes every field (checkSpec validates each body), refusals
// name the item, and the record lists what was skipped.
func TestAdaptiveQuestionOverTheAPI(t *testing.T) {
	b := newBridge(t, opts{})
	base := "/api/projects/ops/agent-questions"
	body := map[string]any{"run_id": "r1", "context": "Pick how the service signs in.",
		"context_image": map[string]any{"url": "https://img.example/arch.png", "alt": "the architecture"},
		"questions": []map[string]any{
			{"question": "Which auth?", "header": "Auth", "options": []map[string]any{
				{"label": "API key", "image": map[string]any{"url": "https://img.example/key.png", "alt": "a key"}},
				{"label": "OAuth", "default": true}}},
			{"question": "Ticket?", "options": []any{}, "show_if": map[string]any{"item": 0, "any_of": []string{"API key"}},
				"other": map[string]any{"pattern": "OPS-[0-9]+", "max_length": 10, "hint": "a ticket id like OPS-123"}},
		},
		"on_timeout": map[string]any{"use_defaults": true},
	}
	r := b.do("POST", base, "", body)
	require.Equal(t, 201, r.status, string(r.raw))
	id := r.body["id"].(string)

	r = b.do("POST", base+"/"+id+"/respond", "", map[string]any{"answers": map[string]any{"Which auth?": "API key", "Ticket?": "ops 12"}})
	require.Equal(t, 400, r.status, string(r.raw))
	assert.Contains(t, string(r.raw), `answers[Ticket?]`)
	assert.Contains(t, string(r.raw), `expected a ticket id like OPS-123`)

	r = b.do("POST", base+"/"+id+"/respond", "", map[string]any{"answers": map[string]any{"Which auth?": "OAuth", "Ticket?": "OPS-1"}})
	require.Equal(t, 400, r.status, string(r.raw))
	assert.Contains(t, string(r.raw), "this question is not asked")

	r = b.do("POST", base+"/"+id+"/respond", "", map[string]any{"answers": map[string]any{"Which auth?": "OAuth"}})
	require.Equal(t, 202, r.status, string(r.raw))
	got := b.do("GET", base+"/"+id, "", nil)
	assert.Equal(t, map[string]any{"Which auth?": "OAuth"}, got.body["answers"])
	require.Len(t, got.body["skipped"], 1)
	assert.Equal(t, "Ticket?", got.body["skipped"].([]any)[0].(map[string]any)["question"])

	// Refused at ask time, naming the field.
	bad := map[string]any{"question": "Go?", "options": []map[string]any{{"label": "Yes", "image": map[string]any{"url": "data:image/png;base64,AA", "alt": "x"}}, {"label": "No"}}}
	r = b.do("POST", base, "", bad)
	require.Equal(t, 400, r.status, string(r.raw))
	assert.Contains(t, string(r.raw), "questions[0].options[0].image.url")
}

// The history endpoint returns the earlier answers to the same question by
// the same agent, and an agent never reads another agent's.
func TestHistoryEndpoint(t *testing.T) {
	b := newBridge(t, opts{agents: []api.Agent{
		{ID: "bot", Project: "ops", Token: "bot-tok", Tools: []string{"ask_user"}},
		{ID: "spy", Project: "ops", Token: "spy-tok", Tools: []string{"ask_user"}},
	}})
	base := "/api/projects/ops/agent-questions/"
	q := func(token, run string) string {
		return b.ask("ops", token, map[string]any{"run_id": run, "question": "Which auth?", "options": []map[string]any{{"label": "API key"}, {"label": "OAuth"}}})
	}
	for i, label := range []string{"OAuth", "API key"} {
		id := q("bot-tok", "run-"+string(rune('a'+i)))
		_, err := b.router.Answer(t.Context(), "ops", id, domain.RespondRequest{Response: &label}, domain.Person{Platform: "slack", ID: "U1", Name: "maria"})
		require.NoError(t, err)
	}
	id := q("bot-tok", "run-z")
	r := b.do("GET", base+id+"/history", "bot-tok", nil)
	require.Equal(t, 200, r.status, string(r.raw))
	h := r.body["history"].([]any)
	require.Len(t, h, 2)
	assert.Equal(t, "API key", h[0].(map[string]any)["answer"], "newest first")
	got := b.do("GET", base+id, "bot-tok", nil)
	assert.Len(t, got.body["history"], 2, "the record carries what people are shown")

	r = b.do("GET", base+id+"/history", "spy-tok", nil)
	assert.Equal(t, 404, r.status, "another agent's question is not found")
	r = b.do("GET", base+id+"/history?limit=0", "bot-tok", nil)
	assert.Equal(t, 400, r.status)
	assert.Contains(t, string(r.raw), "limit")
}
