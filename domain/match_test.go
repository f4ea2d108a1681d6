package domain

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Labels are matched the way people type them; what matches no option is
// free text, and the record says which items got free text.
func TestAnswersMatchLabelsAsPeopleTypeThem(t *testing.T) {
	auth := Item{Question: "Which auth method?", Options: []Option{{Label: "OAuth 2.0", Value: "oauth"}, {Label: "API key", Value: "apikey"}}}
	for _, typed := range []string{"API key", "api key", "  API  key ", "API key.", "“api key”", "api\tkey!", "apikey", "APIKEY"} {
		a, err := ParseAnswer(question(auth), RespondRequest{Response: &typed})
		require.NoError(t, err, typed)
		assert.Equal(t, []string{"API key"}, a.Selections[auth.Question], "%q names the option", typed)
		assert.Equal(t, "apikey", a.Response, typed)
		assert.Empty(t, FreeTextItems([]Item{auth}, a.Selections), typed)
	}
	for _, typed := range []string{"banana", "api keys", "API-key"} {
		a, err := ParseAnswer(question(auth), RespondRequest{Response: &typed})
		require.NoError(t, err, typed)
		assert.Equal(t, []string{typed}, a.Selections[auth.Question], "%q is free text", typed)
		assert.Equal(t, []string{auth.Question}, FreeTextItems([]Item{auth}, a.Selections), typed)
	}
	// A loose form that fits two options names neither.
	twins := Item{Question: "Which?", Options: []Option{{Label: "Yes!"}, {Label: "yes?"}}}
	_, ok := MatchOption(twins, "yes")
	assert.False(t, ok)
	o, ok := MatchOption(twins, "yes?")
	assert.True(t, ok)
	assert.Equal(t, "yes?", o.Label, "an exact label always wins")
}

func TestFreeTextItemsNamesOnlyFreeTextItems(t *testing.T) {
	region := Item{Question: "Which region?", Options: opts("eu", "us")}
	feats := Item{Question: "Which features?", MultiSelect: true, Options: opts("Login", "Dashboard")}
	notes := Item{Question: "Anything else?"}
	q := question(region, feats, notes)
	a, err := ParseAnswer(q, RespondRequest{Answers: map[string]StringList{
		"Which region?": {" EU "}, "Which features?": {"login", "SSO too"}, "Anything else?": {"no"}}})
	require.NoError(t, err)
	assert.Equal(t, []string{"eu"}, a.Selections["Which region?"])
	assert.Equal(t, []string{"Login", "SSO too"}, a.Selections["Which features?"])
	assert.Equal(t, []string{"Which features?", "Anything else?"}, FreeTextItems(q.Questions, a.Selections))
	assert.Empty(t, FreeTextItems(q.Questions, nil), "an unanswered question has none")
}
