package webhook

import (
	"testing"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
)

func TestResumeMessage(t *testing.T) {
	q := &domain.Question{Status: domain.StatusAnswered, Questions: []domain.Item{{Question: "Which auth method?"}},
		Answers: map[string]string{"Which auth method?": "OAuth 2.0"}}
	assert.Equal(t, "Previously you asked: \"Which auth method?\"\nThe user responded: \"OAuth 2.0\"\n\nContinue from where you left off.", ResumeMessage(q))
	// A denial with a note: the Deny option, then the note as its reason.
	d := &domain.Question{Status: domain.StatusAnswered, Kind: domain.KindApproval, Questions: []domain.Item{{Question: "Run rm -rf build?"}},
		Answers: map[string]string{"Run rm -rf build?": "Deny"}, Reason: "Allow."}
	assert.Contains(t, ResumeMessage(d), "The user responded: \"Deny\"\nTheir reason: \"Allow.\"\n")
	q.Status = domain.StatusExpired
	assert.Contains(t, ResumeMessage(q), "No answer came")
	assert.Contains(t, ResumeMessage(q), "Continue without the answer")
	// A dismissal's note is what the person wants the agent to know.
	q.Status, q.CancelReason, q.CancelNote = domain.StatusCancelled, domain.CancelUser, "use the staging cluster instead"
	q.RespondedBy = &domain.Person{Platform: "slack", ID: "U1", Name: "maria"}
	assert.Contains(t, ResumeMessage(q), `dismissed by maria without an answer. Their note: "use the staging cluster instead"`)
}
