package teams

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/askbridge/askbridge/domain"
)

// node is one string of a card: the type of the object holding it, its
// key, and its value.
type node struct{ typ, key, s string }

// strs lists every string of a card with where it sits.
func strs(t testing.TB, card json.RawMessage) []node {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(card, &v))
	var out []node
	var walk func(v any, typ string)
	walk = func(v any, typ string) {
		switch x := v.(type) {
		case map[string]any:
			ty, _ := x["type"].(string)
			if ty == "" {
				ty = typ + ">"
			}
			for k, c := range x {
				if s, ok := c.(string); ok {
					out = append(out, node{ty, k, s})
				} else {
					walk(c, ty)
				}
			}
		case []any:
			for _, c := range x {
				walk(c, typ)
			}
		}
	}
	walk(v, "")
	return out
}

// objects lists every object of a card of type typ.
func objects(t testing.TB, card json.RawMessage, typ string) []map[string]any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(card, &v))
	var out []map[string]any
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if x["type"] == typ {
				out = append(out, x)
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(v)
	return out
}

// shown is the text a person reads: each RichTextBlock's runs and each
// TextBlock, one per line, without the invisible joiners.
func shown(t testing.TB, card json.RawMessage) string {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(card, &v))
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			switch x["type"] {
			case "RichTextBlock":
				for _, in := range x["inlines"].([]any) {
					b.WriteString(in.(map[string]any)["text"].(string))
				}
				b.WriteString("\n")
				return
			case "TextBlock":
				b.WriteString(x["text"].(string) + "\n")
				return
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys) // body before card's actions is not needed; stable is
			for _, k := range keys {
				walk(x[k])
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(v)
	return strings.ReplaceAll(b.String(), joiner, "")
}

func renderCard(t testing.TB, q *domain.Question, v CardView) json.RawMessage {
	t.Helper()
	card, err := QuestionCard(q, v)
	require.NoError(t, err)
	return card
}

// TestEveryShapeFitsTeams: every card of the golden set is within Teams'
// card size and its button rows within Teams' action count; a pending
// card has controls, a final one and a refused view none, and a person's
// view asks Teams to refresh it for that person only.
func TestEveryShapeFitsTeams(t *testing.T) {
	for _, s := range goldenShapes(t) {
		t.Run(s.name, func(t *testing.T) {
			card := renderCard(t, s.q, s.view)
			assert.LessOrEqual(t, len(card), maxCardBytes, "card size")
			for _, set := range objects(t, card, "ActionSet") {
				assert.LessOrEqual(t, len(set["actions"].([]any)), maxActions, "buttons in one row")
			}
			var c struct {
				Version string `json:"version"`
				Refresh *struct {
					Action  struct{ Verb string }
					UserIDs []string `json:"userIds"`
				} `json:"refresh"`
			}
			require.NoError(t, json.Unmarshal(card, &c))
			assert.Equal(t, "1.5", c.Version)
			controls := len(objects(t, card, "Action.Execute"))
			pending := s.q.Status == domain.StatusPending
			switch {
			case !pending:
				assert.Zero(t, controls, "a final copy has no controls")
				assert.Nil(t, c.Refresh)
				assert.Contains(t, shown(t, card), outcomeLine(s.q), "a final copy says how it ended")
			default:
				assert.Positive(t, controls, "a pending card has controls")
				if s.view.Refused != "" {
					assert.True(t, strings.HasPrefix(shown(t, card), s.view.Refused), "the notice comes first")
				}
			}
			if s.view.Viewer != "" && pending {
				require.NotNil(t, c.Refresh)
				assert.Equal(t, []string{s.view.Viewer}, c.Refresh.UserIDs)
				assert.Equal(t, VerbRefresh, c.Refresh.Action.Verb)
			} else {
				assert.Nil(t, c.Refresh, "the card everyone sees is not refreshed per person")
			}
		})
	}
}

// TestLargestShapesSaySoAndLink: a question that does not fit whole shows
// what it can, says what is left out and links the question page; the
// start of every item is still shown.
func TestLargestShapesSaySoAndLink(t *testing.T) {
	var sizes []string
	for _, s := range goldenShapes(t) {
		card := renderCard(t, s.q, s.view)
		if !strings.HasPrefix(s.name, "largest") {
			assert.NotContains(t, shown(t, card), "Not all shown here", s.name+" fits whole")
			continue
		}
		sizes = append(sizes, fmt.Sprintf("%s: %d bytes", s.name, len(card)))
		text := shown(t, card)
		assert.Contains(t, text, "Not all shown here", s.name)
		if s.view.PublicURL != "" {
			assert.Contains(t, string(card), `"url":"https://bridge.example.com/questions/`+s.q.ID+`"`, s.name)
		} else {
			assert.Contains(t, text, "askbridge questions show "+s.q.ID, s.name)
		}
		for _, it := range s.q.Questions {
			assert.Contains(t, text, string([]rune(it.Question)[:10]), s.name)
		}
	}
	sort.Strings(sizes)
	t.Logf("card sizes of the largest shapes (Teams takes %d bytes):\n%s", maxCardBytes, strings.Join(sizes, "\n"))
}

// TestDiffLinesKeepTheirSigns: a diff shows as code, + and − lines
// coloured apart and each keeping its sign.
func TestDiffLinesKeepTheirSigns(t *testing.T) {
	q := build(t, domain.AskRequest{Kind: domain.KindApproval, Question: "Apply?", Options: []domain.Option{opt("Allow", ""), opt("Deny", "")}, Action: editAction(2)})
	card := renderCard(t, q, CardView{})
	var added, removed []string
	for _, r := range objects(t, card, "TextRun") {
		if r["fontType"] != "monospace" {
			continue
		}
		switch r["color"] {
		case "good":
			added = append(added, r["text"].(string))
		case "attention":
			removed = append(removed, r["text"].(string))
		}
	}
	assert.Equal(t, []string{"-\tlimit := 0 // old line 0\n-\tlimit := 1 // old line 1\n"}, removed)
	assert.Equal(t, []string{"+\tlimit := 0 // new line 0\n+\tlimit := 2 // new line 1"}, added)
	assert.Contains(t, shown(t, card), "Tool: Edit · diff +2 −2")
}

// TestQuestionTooLargeForTeams: a record no shortening fits (labels far
// beyond today's limits, as an older or future record may hold) says so
// and links the page.
func TestQuestionTooLargeForTeams(t *testing.T) {
	q := build(t, domain.AskRequest{Question: "Which?", Options: []domain.Option{opt("A", ""), opt("B", "")}})
	for j := range q.Questions[0].Options {
		q.Questions[0].Options[j].Label = long("Huge label", 20000)
	}
	card := renderCard(t, q, CardView{PublicURL: "https://bridge.example.com"})
	text := shown(t, card)
	assert.Contains(t, text, "too large to show in a Teams card")
	assert.Contains(t, text, "Answer it on the question page")
	assert.Contains(t, string(card), "https://bridge.example.com/questions/"+q.ID)
}
