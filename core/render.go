package core

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Ellipsis marks text shortened to fit a platform limit.
const Ellipsis = "…"

// Shorten returns s cut to at most max runes, ending with "…" when it was
// cut. Chat adapters use it so long labels are shortened, never rejected.
func Shorten(s string, max int) string {
	if max <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	if max == 1 {
		return Ellipsis
	}
	n := 0
	for i := range s {
		if n == max-1 {
			return strings.TrimRight(s[:i], " \t\n") + Ellipsis
		}
		n++
	}
	return s
}

// AnswerLine is an answered question's answers on one line: the answer of
// a single item, else "Region: eu; Why: cost" (headers, else the items'
// texts). Empty unless the question is answered.
func AnswerLine(q *Question) string {
	if q.Status != StatusAnswered {
		return ""
	}
	if len(q.Questions) == 1 {
		return q.Answers[q.Questions[0].Question]
	}
	parts := make([]string, 0, len(q.Questions))
	for _, it := range q.Questions {
		name := it.Header
		if name == "" {
			name = it.Question
		}
		parts = append(parts, name+": "+q.Answers[it.Question])
	}
	return strings.Join(parts, "; ")
}

// OutcomeLine is the one line every copy shows once a question is final:
// "Answered by alice: OAuth 2.0", "Expired", "Cancelled (superseded)",
// "Dismissed by bob". Empty while the question is pending.
func OutcomeLine(q *Question) string {
	switch q.Status {
	case StatusAnswered:
		by := "Answered by " + personName(q.RespondedBy)
		if q.Defaulted {
			by = "No answer in time; answered by default"
		} else if q.ApprovalsRequired > 1 {
			label := q.Answers[q.Questions[0].Question]
			by = "Approved by " + voters(q, label)
			if o, ok := MatchOption(q.Questions[0], label); ok && o.Veto {
				by = "Vetoed by " + voters(q, label)
			}
		}
		return by + ": " + AnswerLine(q)
	case StatusExpired:
		return "Expired"
	case StatusCancelled:
		switch q.CancelReason {
		case CancelUser:
			return "Dismissed by " + personName(q.RespondedBy) + NoteSuffix(q)
		case CancelAgent:
			return "Cancelled (withdrawn by the agent)" + NoteSuffix(q)
		case "":
			return "Cancelled" + NoteSuffix(q)
		}
		return "Cancelled (" + q.CancelReason + ")" + NoteSuffix(q)
	}
	return ""
}

// NoteSuffix is the cancel note as the end of a final-state line:
// ` — "no longer needed"`, or empty without a note.
func NoteSuffix(q *Question) string {
	if q.CancelNote == "" {
		return ""
	}
	return ` — "` + q.CancelNote + `"`
}

// TallyLine describes the votes of a pending approval that needs several:
// "Approve: 1 of 2 approvals — alice". Empty when nobody voted yet.
func TallyLine(q *Question) string {
	if q.ApprovalsRequired < 2 || len(q.Votes) == 0 {
		return ""
	}
	var order []string
	count := map[string]int{}
	for _, v := range q.Votes {
		if count[v.Label] == 0 {
			order = append(order, v.Label)
		}
		count[v.Label]++
	}
	parts := make([]string, 0, len(order))
	for _, l := range order {
		parts = append(parts, fmt.Sprintf("%s: %d of %d approvals — %s", l, count[l], q.ApprovalsRequired, voters(q, l)))
	}
	return strings.Join(parts, "; ")
}

// voters names who voted for label, in voting order.
func voters(q *Question, label string) string {
	var names []string
	for _, v := range q.Votes {
		if v.Label == label {
			names = append(names, v.By.String())
		}
	}
	if len(names) == 0 {
		return personName(q.RespondedBy)
	}
	return strings.Join(names, ", ")
}

// ExpiresPhrase renders the deadline of q relative to now: "expires in 30 min".
func ExpiresPhrase(q *Question, now time.Time) string {
	return "expires in " + HumanDuration(q.ExpiresAt.Sub(now))
}
