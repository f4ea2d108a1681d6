package mcpserver_test

import (
	"encoding/json"
	"testing"

	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/askbridge/askbridge/domain"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestToolSchemaExpressesTheRules(t *testing.T) {
	api := fakeapi.New(t, "")
	s, _ := connect(t, api)
	res, err := s.ListTools(t.Context(), nil)
	require.NoError(t, err)
	tool := res.Tools[0]
	b, _ := json.Marshal(tool.InputSchema)
	var in struct {
		Properties struct {
			Questions struct {
				Items struct {
					Properties struct {
						Options struct {
							MinItems *int `json:"minItems"`
							MaxItems *int `json:"maxItems"`
						} `json:"options"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"questions"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(b, &in))
	opts := in.Properties.Questions.Items.Properties.Options
	require.NotNil(t, opts.MinItems, "options states its minimum: %s", b)
	assert.Equal(t, 2, *opts.MinItems)
	assert.Equal(t, 4, *opts.MaxItems)

	b, _ = json.Marshal(tool.OutputSchema)
	var out struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Type                 any             `json:"type"`
			Enum                 []string        `json:"enum"`
			AdditionalProperties json.RawMessage `json:"additionalProperties"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(b, &out), string(b))
	assert.Contains(t, out.Required, "status")
	assert.ElementsMatch(t, []string{"answered", "expired", "cancelled", "pending", "invalid", "not_sent"}, out.Properties["status"].Enum)
	assert.JSONEq(t, `{"type":"array","items":{"type":"string"}}`, string(out.Properties["selections"].AdditionalProperties),
		"one type, no type list")
	assert.JSONEq(t, `{"type":"string"}`, string(out.Properties["answers"].AdditionalProperties))
	for name, p := range out.Properties {
		_, isList := p.Type.([]any)
		assert.False(t, isList, "property %s has a type list", name)
	}
}

func call(t *testing.T, s *mcp.ClientSession, args any) *mcp.CallToolResult {
	t.Helper()
	r, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: args})
	require.NoError(t, err)
	return r
}

func TestAskUserInvalidInputNamesTheQuestion(t *testing.T) {
	api := fakeapi.New(t, "")
	s, _ := connect(t, api)
	args := map[string]any{"questions": []any{
		map[string]any{"question": "Which auth method?", "header": "much too long a header", "options": []any{
			map[string]any{"label": "OAuth 2.0", "description": "a"}, map[string]any{"label": "API key", "description": "b"}}},
		map[string]any{"question": "Which region?", "header": "Region", "options": []any{
			map[string]any{"label": "EU", "description": "a"}}},
		map[string]any{"question": "Which database?", "header": "DB", "options": []any{
			map[string]any{"label": "Postgres", "description": "a"}, map[string]any{"label": "Other", "description": "something else"}}},
	}}
	r := call(t, s, args)
	assert.True(t, r.IsError)
	msg := text(r)
	assert.Contains(t, msg, "questions[0].header: at most 12 characters")
	assert.Contains(t, msg, "questions[1].options: 2 to 4 options")
	assert.Contains(t, msg, "questions[2].options[1].label: "+domain.OtherOptionProblem, "the words of the HTTP API")
	assert.Contains(t, msg, "Fix these and call ask_user again.")
	sc := structured(t, r)
	assert.Equal(t, "invalid", sc["status"])
	assert.Len(t, sc["problems"], 3)
	assert.Empty(t, api.Questions(), "nothing was sent")

	r = call(t, s, map[string]any{"questions": []any{map[string]any{"question": "Deploy?", "header": "Deploy", "options": "yes/no"}}})
	assert.True(t, r.IsError)
	assert.Contains(t, text(r), "options: must be an array of options")
	assert.Contains(t, text(r), "Fix these and call ask_user again.")
	assert.Equal(t, "invalid", structured(t, r)["status"])
}

func TestFailedCallsHaveAStatusAndJSONText(t *testing.T) {
	api := fakeapi.New(t, "")
	s, _ := connect(t, api, "BRIDGE_URL=http://127.0.0.1:1")
	r := call(t, s, authArgs())
	assert.True(t, r.IsError)
	assert.Contains(t, text(r), "could not be reached")
	sc := structured(t, r)
	assert.Equal(t, "not_sent", sc["status"], "never an empty status")

	require.Len(t, r.Content, 2, "prose, then the structured result as JSON text")
	js := r.Content[1].(*mcp.TextContent).Text
	var fromText map[string]any
	require.NoError(t, json.Unmarshal([]byte(js), &fromText))
	assert.Equal(t, sc, fromText)
}
