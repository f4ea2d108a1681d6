package discord

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestACapturedInteractionCountsOnce: a signed interaction sent again
// within the signature's window, after the person changed their vote,
// flips nothing: interactions are remembered by id across replicas.
func TestACapturedInteractionCountsOnce(t *testing.T) {
	f := fakediscord.New(t)
	st := newTestStore(t)
	e := newEnv(t, f, st)
	two := 2
	q := e.ask(&domain.AskRequest{Kind: domain.KindApproval, Question: "Deploy api v2 to production?", ApprovalsRequired: &two,
		Options: []domain.Option{{Label: "Approve"}, {Label: "Deny"}}})
	msg := e.copyOf(q)
	m := f.Message(msg)
	captured, tok, _ := f.Interaction(alice, m, 3, map[string]any{"custom_id": f.Button(m, "Approve").CustomID, "component_type": 2})
	f.Send(captured, tok)
	e.shows(msg, "Approve: 1 of 2 approvals — alice")
	f.Click(alice, msg, "Deny")
	e.shows(msg, "Deny: 1 of 2 approvals — alice")

	resp := f.Send(captured, tok)
	assert.Equal(t, 6, resp.Type, "the replay is acknowledged and changes nothing")
	e.settle()
	got, err := st.Get(context.Background(), q.ProjectID, q.ID)
	require.NoError(t, err)
	require.Len(t, got.Votes, 1)
	assert.Equal(t, "Deny", got.Votes[0].Label, "the replay did not flip alice's vote back")
}

// TestAControlCountsOnlyOnTheQuestionsOwnCopy: a custom_id naming a
// question, clicked on a message that is not one of its copies, changes
// nothing.
func TestAControlCountsOnlyOnTheQuestionsOwnCopy(t *testing.T) {
	f := fakediscord.New(t)
	f.AddChannel("2000", "900")
	st := newTestStore(t)
	e := newEnv(t, f, st)
	q := e.ask(&domain.AskRequest{Question: "Which auth?", Options: []domain.Option{{Label: "OAuth"}, {Label: "API key"}}})
	m := f.Message(e.copyOf(q))
	in, tok, _ := f.Interaction(alice, m, 3, map[string]any{"custom_id": f.Button(m, "OAuth").CustomID, "component_type": 2})
	in["channel_id"] = "2000"
	in["message"].(map[string]any)["id"] = "999999999999999999"
	resp := f.Send(in, tok)
	assert.Equal(t, 4, resp.Type)
	require.NotNil(t, resp.Data)
	require.NotNil(t, resp.Data.Content)
	assert.Equal(t, words.NotOurs().Text, *resp.Data.Content)
	assert.Equal(t, domain.StatusPending, e.pending(q))
}

// TestAgentTextCannotDisguiseALink: Discord renders Markdown, so a masked
// link in the context or a description is shown with its destination.
func TestAgentTextCannotDisguiseALink(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	q := e.ask(&domain.AskRequest{Question: "Approve the [release notes](https://evil.example/a)?",
		Context: "Runbook: [https://bridge.example/runbook](https://evil.example/b)",
		Options: []domain.Option{{Label: "Yes", Description: "see [docs](<https://evil.example/c>)"}, {Label: "No"}}})
	text := shows(f.Message(e.copyOf(q)))
	for _, want := range []string{"release notes (https://evil.example/a)", "https://bridge.example/runbook (https://evil.example/b)", "docs (https://evil.example/c)"} {
		assert.Contains(t, text, want)
	}
	assert.NotContains(t, text, "](https://evil", "no masked link is left")
}

// TestAHostileInteractionBodyIsRefused: a signed body nested past the
// limit is refused before it is decoded.
func TestAHostileInteractionBodyIsRefused(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	body := []byte(`{"type":3,"data":` + strings.Repeat("[", 100000) + `}`)
	sig, stamp := f.Sign(body, f.Now())
	req := httptest.NewRequest("POST", "/discord/interactions", bytes.NewReader(body))
	req.Header.Set("X-Signature-Ed25519", sig)
	req.Header.Set("X-Signature-Timestamp", stamp)
	rec := httptest.NewRecorder()
	e.ad.InteractionsHandler().ServeHTTP(rec, req)
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), "nests too deeply")
}
