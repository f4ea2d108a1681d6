package webhook

import (
	"fmt"
	"strings"

	"github.com/askbridge/askbridge/domain"
)

// ResumeMessage is the user_message of a resume webhook (docs/agents.md "Webhook mode"): what
// the agent was asked and what came back, or that no answer came.
func ResumeMessage(q *domain.Question) string {
	var b strings.Builder
	b.WriteString("Previously you asked: ")
	for i, it := range q.Questions {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", it.Question)
	}
	b.WriteString("\n")
	switch q.Status {
	case domain.StatusAnswered:
		if len(q.Questions) == 1 {
			fmt.Fprintf(&b, "The user responded: %q\n", q.Answers[q.Questions[0].Question])
			if q.Reason != "" {
				fmt.Fprintf(&b, "Their reason: %q\n", q.Reason)
			}
		} else {
			b.WriteString("The user responded:")
			for _, it := range q.Questions {
				fmt.Fprintf(&b, "\n- %q: %q", it.Question, q.Answers[it.Question])
			}
			b.WriteString("\n")
		}
		b.WriteString("\nContinue from where you left off.")
	case domain.StatusExpired:
		b.WriteString("No answer came before the question expired.\n\nContinue without the answer: make the safest reasonable choice, and say which one you made.")
	case domain.StatusCancelled:
		b.WriteString("The question was dismissed")
		if q.RespondedBy != nil {
			b.WriteString(" by " + q.RespondedBy.String())
		}
		b.WriteString(" without an answer.")
		if q.CancelNote != "" {
			fmt.Fprintf(&b, " Their note: %q", q.CancelNote)
		}
		b.WriteString("\n\nContinue without the answer: make the safest reasonable choice, and say which one you made.")
	default:
		b.WriteString("No answer yet.")
	}
	return b.String()
}
