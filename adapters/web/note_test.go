package web

import (
	"context"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/domain"
)

// TestCancelNoteOnTheQuestionPage: the page of a cancelled question shows
// the note given with the cancel, escaped.
func TestCancelNoteOnTheQuestionPage(t *testing.T) {
	e := newEnv(t, envOptions{})
	q := e.ask("ops", domain.AskRequest{RunID: "r1", Question: "Withdraw me?"})
	if _, err := e.router.CancelWithNote(context.Background(), "ops", q.ID, domain.CancelAgent, "rolled back <b>", nil); err != nil {
		t.Fatal(err)
	}
	p := e.client().getPage("/questions/" + q.ID)
	if p.status != 200 || !strings.Contains(p.body, "Withdrawn by the agent — &#34;rolled back &lt;b&gt;&#34;") {
		t.Fatalf("status %d; the page does not show the note:\n%s", p.status, p.body)
	}
}
