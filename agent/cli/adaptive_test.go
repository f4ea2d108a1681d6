package cli

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func adaptiveQuestion(t *testing.T) *domain.Question {
	var req domain.AskRequest
	require.NoError(t, json.Unmarshal([]byte(`{"questions":[
	 {"question":"Which auth?","header":"Auth","options":[{"label":"API key","image":{"url":"https://img.example/k.png","alt":"a key"}},{"label":"OAuth","default":true}]},
	 {"question":"Ticket?","options":[],"show_if":{"item":0,"any_of":["API key"]},"other":{"pattern":"OPS-[0-9]+","hint":"a ticket id like OPS-123"}},
	 {"question":"Scopes?","multiSelect":true,"options":[{"label":"read","default":true},{"label":"write"}],"show_if":{"item":0,"none_of":["API key"]}}]}`), &req))
	q, _, err := domain.BuildQuestion(&req, domain.AskDefaults{Timeout: time.Minute}, false)
	require.NoError(t, err)
	q.ID, q.Status = "q1", domain.StatusPending
	return q
}

// The CLI asks a conditional item only when it applies: the arguments
// answer the items asked, "-" takes an item's defaults, and free text is
// checked against the item's rules before anything is sent.
func TestCLIAnswersOnlyTheItemsAsked(t *testing.T) {
	q := adaptiveQuestion(t)
	got, err := choose(q, []string{"1", "OPS-7"}, "", itemTexts{})
	require.NoError(t, err)
	assert.Equal(t, map[string]domain.StringList{"Which auth?": {"API key"}, "Ticket?": {"OPS-7"}}, got)

	got, err = choose(q, []string{"-", "-"}, "", itemTexts{})
	require.NoError(t, err)
	assert.Equal(t, map[string]domain.StringList{"Which auth?": {"OAuth"}, "Scopes?": {"read"}}, got)

	_, err = choose(q, []string{"1", "ops 7"}, "", itemTexts{})
	require.ErrorContains(t, err, "item 2: \"ops 7\" does not match the pattern OPS-[0-9]+; expected a ticket id like OPS-123")
	_, err = choose(q, []string{"2", "1", "x"}, "", itemTexts{})
	require.ErrorContains(t, err, "1 argument(s) too many")
	_, err = choose(q, []string{"2"}, "", itemTexts{})
	require.ErrorContains(t, err, "item 3 (Scopes?) is asked and needs an argument")
	_, err = choose(q, []string{"2", "1"}, "", itemTexts{2: "OPS-1"})
	require.ErrorContains(t, err, "item 2 is not asked")
}

// show names the defaults, the conditions, the rules, the pictures (as
// links with alt text) and what was answered the last times.
func TestCLIShowsWhatAdapts(t *testing.T) {
	q := adaptiveQuestion(t)
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	q.ExpiresAt = now.Add(time.Minute)
	q.History = []domain.PastAnswer{{Answer: "OAuth; read", RespondedBy: &domain.Person{Platform: "slack", ID: "U1", Name: "maria"}, RespondedAt: now.Add(-48 * time.Hour)}}
	var out bytes.Buffer
	a := &app{stdout: &out, now: func() time.Time { return now }}
	a.render(q)
	for _, want := range []string{
		"Last time: OAuth; read (maria, 2 days ago)",
		"2) OAuth (default: - takes it)",
		"(asked only if “Auth” is API key; otherwise it takes no argument)",
		"(your own answer: a ticket id like OPS-123 (matching OPS-[0-9]+))",
		"[picture: a key <https://img.example/k.png>]",
	} {
		assert.Contains(t, out.String(), want)
	}
}
