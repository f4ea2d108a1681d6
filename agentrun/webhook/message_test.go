package webhook

import (
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/stretchr/testify/assert"
)

func TestResumeMessage(t *testing.T) {
	q := &core.Question{Status: core.StatusAnswered, Questions: []core.Item{{Question: "Which auth method?"}},
		Answers: map[string]string{"Which auth method?": "OAuth 2.0"}}
	assert.Equal(t, "Previously you asked: \"Which auth method?\"\nThe user responded: \"OAuth 2.0\"\n\nContinue from where you left off.", ResumeMessage(q))
	q.Status = core.StatusExpired
	assert.Contains(t, ResumeMessage(q), "No answer came")
	assert.Contains(t, ResumeMessage(q), "Continue without the answer")
}
