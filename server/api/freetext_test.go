package api_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An answer that matches no option is free text, and the record says so
// (free_text names the items); a label typed loosely still matches.
func TestRecordNamesFreeTextItems(t *testing.T) {
	b := newBridge(t, opts{})
	base := "/api/projects/ops/agent-questions/"
	ask := func(run string) string {
		return b.ask("ops", "", map[string]any{"run_id": run, "questions": []map[string]any{
			{"question": "Which auth method?", "options": []map[string]any{{"label": "OAuth 2.0", "value": "oauth"}, {"label": "API key"}}},
			{"question": "Anything else?"}}})
	}
	banana, loose := ask("run-1"), ask("run-2")
	r := b.do("POST", base+banana+"/respond", "", map[string]any{"answers": map[string]any{"Which auth method?": "banana", "Anything else?": "no"}})
	require.Equal(t, 202, r.status, string(r.raw))
	r = b.do("POST", base+loose+"/respond", "", map[string]any{"answers": map[string]any{"Which auth method?": " api  key. ", "Anything else?": "no"}})
	require.Equal(t, 202, r.status, string(r.raw))

	got := b.do("GET", base+banana, "", nil)
	assert.Equal(t, []any{"Which auth method?", "Anything else?"}, got.body["free_text"])
	assert.Equal(t, map[string]any{"Which auth method?": "banana", "Anything else?": "no"}, got.body["answers"], "answers unchanged")

	got = b.do("GET", base+loose, "", nil)
	assert.Equal(t, []any{"Anything else?"}, got.body["free_text"], "a loosely typed label is no free text")
	assert.Equal(t, map[string]any{"Which auth method?": "API key", "Anything else?": "no"}, got.body["answers"])
	assert.Equal(t, "API key; no", got.body["response"])

	// A pending question has no free_text field at all.
	pending := b.do("GET", base+ask("run-3"), "", nil)
	_, has := pending.body["free_text"]
	assert.False(t, has)
}
