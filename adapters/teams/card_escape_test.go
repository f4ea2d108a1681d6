package teams

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/askbridge/askbridge/domain"
)

// probes are texts an agent (or a person, in an answer or note) may send
// that a renderer would turn into something else than what was typed.
var probes = map[string]string{
	"masked link":     "[Open the runbook](https://evil.example/login)",
	"javascript link": "[x](javascript:alert(1))",
	"image":           "![pixel](https://evil.example/p.png)",
	"mention":         "<at>Alice Martin</at> approves",
	"html":            "<b>Allow</b><img src=x onerror=alert(1)>",
	"entity":          "Deny &lt;now&gt; &#65;",
	"emphasis":        "**Allow** _this_ ~~not~~",
	"heading list":    "# Allow\n- item\n1. first",
	"date function":   "{{DATE(2017-02-14T06:08:39Z, SHORT)}}",
	"code":            "`rm -rf /` ```x```",
	"autolink":        "<https://evil.example> www.evil.example",
}

// danger matches what a renderer acts on in a control's title.
var danger = regexp.MustCompile(`\]\(|<[a-zA-Z/!]|&[#a-zA-Z0-9]|\{\{`)

// TestAgentTextReadsAsTyped: every probe, wherever an agent or a person
// puts it (context, question, header, label, description, hint, answer,
// note), is shown as typed in a plain text run, never in a TextBlock
// (Markdown), and control titles carry nothing a renderer acts on.
func TestAgentTextReadsAsTyped(t *testing.T) {
	for name, p := range probes {
		t.Run(name, func(t *testing.T) {
			one := oneLine(p)
			q := build(t, domain.AskRequest{Context: p, AgentName: "agent " + one, Questions: []domain.Item{
				{Question: "First " + p, Header: "H", Options: []domain.Option{
					{Label: "A " + one, Description: "about " + p}, opt("B", "")},
					Other: &domain.FreeTextRules{Hint: "like " + one}},
				{Question: "Second " + p, MultiSelect: true, Options: []domain.Option{opt("C "+one, ""), opt("D", "")}},
			}})
			fin := answered(q, map[string]string{q.Questions[0].Question: "typed " + p, q.Questions[1].Question: "C " + one})
			for view, card := range map[string][]byte{
				"pending": renderCard(t, q, CardView{}),
				"final":   renderCard(t, fin, CardView{}),
			} {
				text := shown(t, card)
				for _, want := range []string{p, "First " + p, "about " + one, "A " + one} {
					if view == "final" && strings.HasPrefix(want, "about") {
						continue // the final copy lists no descriptions
					}
					assert.Contains(t, text, want, "%s copy shows the text as typed", view)
				}
				for _, n := range strs(t, card) {
					switch {
					case n.typ == "TextBlock":
						assert.NotContains(t, n.s, strings.Fields(one)[0], "%s: agent text in a Markdown TextBlock", view)
					case n.typ == "TextRun" && n.key == "text":
						assert.NotContains(t, n.s, "{{", "%s: a date function would be applied", view)
					case n.key == "title" || n.key == "label" || n.key == "placeholder" || n.key == "errorMessage" ||
						n.key == "fallbackText" || n.key == "altText":
						assert.False(t, danger.MatchString(n.s), "%s: %s %q carries %q", view, n.typ, n.key, n.s)
					}
				}
			}
		})
	}
}

// TestDenyNoteAndAnswerProbesInFinalCopies: a denial's note and a
// dismissal's note show as typed on the settled copy.
func TestDenyNoteAndAnswerProbesInFinalCopies(t *testing.T) {
	for name, p := range probes {
		gate := build(t, domain.AskRequest{Kind: domain.KindApproval, Question: "Deploy?", Options: []domain.Option{opt("Allow", ""), opt("Deny", "")}})
		denied := answered(gate, map[string]string{"Deploy?": "Deny"})
		denied.Reason = p
		assert.Contains(t, shown(t, renderCard(t, denied, CardView{})), "Denied with a note by Alice Martin: "+p, name)
		dismissed := *gate
		dismissed.Status, dismissed.CancelReason, dismissed.CancelNote, dismissed.RespondedBy = domain.StatusCancelled, domain.CancelUser, p, alice
		assert.Contains(t, shown(t, renderCard(t, &dismissed, CardView{})), `Dismissed by Alice Martin — "`+p+`".`, name)
	}
}

// TestVeryLongTextIsShortenedAndSaid: text longer than a card holds is
// shortened with "…", and the card says so.
func TestVeryLongTextIsShortenedAndSaid(t *testing.T) {
	q := build(t, domain.AskRequest{Question: "Which?", Options: []domain.Option{opt("A", ""), opt("B", "")}})
	q.Context = long("Context of a record beyond today's limits", 60000)
	card := renderCard(t, q, CardView{PublicURL: "https://bridge.example.com"})
	assert.LessOrEqual(t, len(card), maxCardBytes)
	text := shown(t, card)
	assert.Contains(t, text, "Context of a record beyond today's limits")
	assert.Contains(t, text, "…")
	assert.Contains(t, text, "Not all shown here: context shortened.")
}
