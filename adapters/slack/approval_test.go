package slack

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/askbridge/askbridge/domain"
)

func approvalRequest(run string) domain.AskRequest {
	return domain.AskRequest{RunID: run, AgentID: "claude", AgentName: "Claude Code", Kind: domain.KindApproval, Route: "oncall",
		Questions: []domain.Item{{Question: "Allow Bash: rm -rf build?", Header: "Approval", Options: []domain.Option{
			{Label: "Allow", Description: "Let the agent run it"}, {Label: "Deny", Description: "Refuse"}}}}}
}

// TestApprovalButtonsStyledAndDenyWithNote: Allow is primary and Deny
// danger; there is no "Other…" whose text would deny; "Deny with note…"
// opens a modal that says what it does, and its text denies.
func TestApprovalButtonsStyledAndDenyWithNote(t *testing.T) {
	e := newEnv(t)
	q := e.ask(approvalRequest("run-a1"))
	ts := e.copyOn(q, "C1").MessageTS
	_, allow := e.element("C1", ts, "Allow")
	_, deny := e.element("C1", ts, "Deny")
	assert.Equal(t, "primary", allow["style"])
	assert.Equal(t, "danger", deny["style"])
	m, _ := e.fake.Message("C1", ts)
	assert.NotContains(t, string(m.Blocks), "Other…", "an approval offers no free-text Other")

	e.click(alice, "C1", ts, "Deny with note…", nil)
	e.wait("modal", func() bool { return len(e.fake.Views()) == 1 })
	var view map[string]any
	require.NoError(t, json.Unmarshal(e.fake.Views()[0].View, &view))
	assert.Equal(t, "Deny with note", view["title"].(map[string]any)["text"])
	assert.Equal(t, "Deny", view["submit"].(map[string]any)["text"])
	e.submitView(alice, "Allow")
	got := e.final(q)
	assert.Equal(t, "Deny", got.Response, "a note that reads like Allow still denies")
	assert.Equal(t, "Allow", got.Reason, "the note is the reason, as typed")
	for _, m := range e.edited(q) {
		assert.Contains(t, m.Texts(), "Denied with a note by <@U1>: Allow", "the outcome says it was denied")
	}
}

// TestApprovalThreadReplyTextNeverDecides: chatter in an approval's thread
// ("yes go ahead") is not turned into a denial; "deny: reason" is.
func TestApprovalThreadReplyTextNeverDecides(t *testing.T) {
	e := newEnv(t)
	q := e.ask(approvalRequest("run-a2"))
	root := e.copyOn(q, "C1").MessageTS
	e.reply("Ev1", alice, "C1", root, "yes go ahead")
	e.wait("explanation", func() bool { return len(e.ephemeralsTo(alice)) == 1 })
	assert.Contains(t, e.ephemeralsTo(alice)[0], "deny: your reason")
	assert.Equal(t, domain.StatusPending, e.get(q).Status)
	e.reply("Ev2", alice, "C1", root, "other: fine")
	e.wait("explanation", func() bool { return len(e.ephemeralsTo(alice)) == 2 })
	assert.Equal(t, domain.StatusPending, e.get(q).Status)
	e.reply("Ev3", alice, "C1", root, "deny: use make clean instead")
	got := e.final(q)
	assert.Equal(t, "Deny", got.Response)
	assert.Equal(t, "use make clean instead", got.Reason)
	assert.True(t, strings.HasPrefix(e.ephemeralsTo(alice)[0], "I could not read that as a decision"))
}
