package api_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/server/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The trust model's refusals, as the API documents them (each response is
// checked against docs/openapi.yaml by do). The whole table of probes runs
// against the built binary in cmd/bridge/security_test.go.
func TestTrustModelResponsesAreDocumented(t *testing.T) {
	b := newBridge(t, opts{
		agents: []api.Agent{{ID: "a1", Project: "ops", Token: "t-a1", Tools: []string{"ask_user"}},
			{ID: "a2", Project: "ops", Token: "t-a2", Tools: []string{"ask_user"}}},
		operators: []api.Operator{{ID: "op", Projects: []string{"ops"}, Token: "t-op"},
			{ID: "bot", Projects: []string{"ops"}, Token: "t-bot", ActFor: true}},
	})
	id := b.ask("ops", "t-a1", map[string]any{"run_id": "r1", "question": "Deploy?",
		"options": []map[string]any{{"label": "Yes"}, {"label": "No"}}})

	r := b.do("POST", "/api/projects/ops/agent-questions", "t-a2", map[string]any{"run_id": "r1", "question": "Mine?"})
	assert.Equal(t, 409, r.status, string(r.raw))
	assert.Equal(t, "conflict", r.code())
	assert.Equal(t, []string{"run_id"}, r.fields())

	r = b.do("POST", "/api/projects/ops/agent-questions", "t-op", map[string]any{"agent_id": "a1", "question": "As a1?"})
	assert.Equal(t, 403, r.status, string(r.raw))
	assert.Equal(t, []string{"agent_id"}, r.fields())

	r = b.do("POST", "/api/projects/ops/agent-questions/"+id+"/respond", "t-op",
		map[string]any{"response": "Yes", "responded_by": "slack:U1"})
	assert.Equal(t, 403, r.status, string(r.raw))
	assert.Equal(t, "not_allowed", r.code())

	r = b.do("POST", "/api/projects/ops/agent-questions/"+id+"/respond", "t-bot",
		map[string]any{"response": "Yes", "responded_by": map[string]any{"platform": "slack", "id": "U1", "name": "maria"}})
	require.Equal(t, 202, r.status, string(r.raw))
	r = b.do("GET", "/api/projects/ops/agent-questions/"+id, "t-op", nil)
	by := r.body["responded_by"].(map[string]any)
	assert.Equal(t, "U1", by["id"])
	assert.Equal(t, "bot", by["via"], "the record names the relay")

	// A body that is not declared as JSON: 415, documented.
	req, _ := http.NewRequest("POST", b.srv.URL+"/api/projects/ops/agent-questions", strings.NewReader(`{"question":"x?"}`))
	req.Header.Set("Authorization", "Bearer t-a1")
	req.Header.Set("Content-Type", "text/plain")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	checkSpec(t, req, res, raw)
	assert.Equal(t, 415, res.StatusCode)
	assert.Contains(t, string(raw), "unsupported_media_type")
}
