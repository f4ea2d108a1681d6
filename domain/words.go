package domain

import (
	"errors"
	"strings"
)

// The words a person is told when what they did on a question did not
// count, or not yet: a click, a form, a thread reply, a dismissal. One
// table, so Slack, Discord and the web inbox say the same thing; a surface
// keeps only its formatting (how a person, who may answer and free text
// are written: Words) and where the sentence goes (an ephemeral message,
// the page's alert).

// Notice is one sentence of the table, with the short title that surfaces
// showing one (the web inbox's alert) put above it.
type Notice struct {
	Title string
	Text  string
}

// Words writes the table's sentences for one surface. Its functions
// format the parts a sentence names; a nil function writes plain text.
type Words struct {
	// Person names a person: a Slack mention, "bob (Slack)" on the web
	// (default PersonName).
	Person func(p *Person) string
	// Responders names who may answer, for a refused person (default
	// DescribeResponders).
	Responders func(r Responders) string
	// Text writes text that came from an agent or a person (answers,
	// cancel notes, the problem with an answer) in the surface's markup:
	// Slack escapes &, < and > (default as is).
	Text func(s string) string
}

// ChangedNothing ends every refusal: the person's click, form or reply
// was not recorded and the question is as it was.
const ChangedNothing = "This changed nothing."

// The titles of the table, one per kind of notice.
const (
	TitleNotAllowed      = "You may not answer this question"
	TitleAlreadyAnswered = "Already answered"
	TitleCancelled       = "This question was cancelled"
	TitleExpired         = "This question expired"
	TitleRunNotPaused    = "Not yet: the run is still running"
	TitleActionChanged   = "The action changed"
	TitleGone            = "Question not found"
	TitleNotOurs         = "Not this question's control"
	TitleInvalid         = "The answer is not valid"
	TitleFailed          = "The answer was not recorded"
	TitleDismiss         = "Dismiss this question?"
)

// Who names p as the surface does in its sentences (Person, else
// PersonName).
func (w Words) Who(p *Person) string {
	if w.Person != nil {
		return w.Person(p)
	}
	return PersonName(p)
}

func (w Words) responders(r Responders) string {
	if w.Responders != nil {
		return w.Responders(r)
	}
	return DescribeResponders(r)
}

func (w Words) text(s string) string {
	if w.Text != nil {
		return w.Text(s)
	}
	return s
}

// sentence ends s with a full stop unless it ends with punctuation already.
func sentence(s string) string {
	s = strings.TrimRight(s, " \t\n")
	if s == "" || strings.ContainsAny(s[len(s)-1:], ".!?…") {
		return s
	}
	return s + "."
}

// Requester reports whether who is the person q was asked for while its
// responders exclude them (exclude_requester): the one refusal that is
// not about who is listed.
func Requester(q *Question, who Person) bool {
	return q != nil && q.Responders.ExcludeRequester && q.RequestedBy != "" && q.RequestedBy == who.Key()
}

// NotAllowed tells who that they may not answer (or dismiss) q, naming who
// may; the requester a route excludes is told that instead.
func (w Words) NotAllowed(q *Question, who Person) Notice {
	n := Notice{Title: TitleNotAllowed}
	switch {
	case q == nil:
		n.Text = "You may not answer or dismiss this question. " + ChangedNothing
	case Requester(q, who):
		others := "anyone else"
		if !q.Responders.Empty() {
			others = w.responders(q.Responders)
		}
		n.Text = "You asked for this, so you may not answer it yourself; who may answer: " + others + ". " + ChangedNothing
	default:
		n.Text = "Only " + w.responders(q.Responders) + " may answer or dismiss this question. " + ChangedNothing
	}
	return n
}

// Late tells a person who acted on a question that is no longer pending
// what became of it: who answered it and what, or why it closed.
func (w Words) Late(q *Question) Notice {
	if q != nil && q.Status == StatusAnswered {
		return w.AlreadyAnswered(q)
	}
	return w.Closed(q)
}

// AlreadyAnswered says who answered q and with what.
func (w Words) AlreadyAnswered(q *Question) Notice {
	by := "by " + w.Who(q.RespondedBy)
	switch {
	case q.Defaulted:
		by = "by default when its time ran out"
	case q.ApprovalsRequired > 1 && len(q.Questions) > 0:
		by = "by " + w.voters(q, q.Answers[q.Questions[0].Question])
	}
	text := "This question was already answered " + by
	if a := AnswerLine(q); a != "" {
		text += ": " + w.text(a)
	}
	return Notice{Title: TitleAlreadyAnswered, Text: sentence(text) + " " + ChangedNothing}
}

// voters names who voted for label, in voting order.
func (w Words) voters(q *Question, label string) string {
	var names []string
	for _, v := range q.Votes {
		if v.Label == label {
			names = append(names, w.Who(&v.By))
		}
	}
	if len(names) == 0 {
		return w.Who(q.RespondedBy)
	}
	return strings.Join(names, ", ")
}

// Closed says why q, cancelled or expired, takes no answer any more.
func (w Words) Closed(q *Question) Notice {
	if q == nil || !q.Status.Final() {
		return Notice{Title: TitleCancelled, Text: "This question is no longer open. " + ChangedNothing}
	}
	if q.Status == StatusAnswered {
		return w.AlreadyAnswered(q)
	}
	if q.Status == StatusExpired {
		return Notice{Title: TitleExpired, Text: "This question expired without an answer; answers are no longer taken. " + ChangedNothing}
	}
	note := ""
	if q.CancelNote != "" {
		note = ` — "` + w.text(q.CancelNote) + `"`
	}
	var why string
	switch q.CancelReason {
	case CancelUser:
		why = "This question was dismissed by " + w.Who(q.RespondedBy) + note
	case CancelAgent:
		why = "This question was withdrawn by the agent" + note
	case CancelSuperseded:
		why = "This question was replaced by a newer question of the same run" + note
	case "":
		why = "This question was cancelled" + note
	default:
		why = "This question was cancelled (" + w.text(q.CancelReason) + ")" + note
	}
	return Notice{Title: TitleCancelled, Text: why + "; answers are no longer taken. " + ChangedNothing}
}

// RunNotPaused tells a person whose answer to a webhook-mode question
// found the agent's run still running, after the wait for its pause.
func (w Words) RunNotPaused() Notice {
	return Notice{Title: TitleRunNotPaused,
		Text: "The agent's run has not paused yet, so your answer was not recorded. Please try again in a moment."}
}

// ActionChanged tells a person who decided on an approval's action that
// the action changed since it was shown to them (a digest conflict).
func (w Words) ActionChanged() Notice {
	return Notice{Title: TitleActionChanged,
		Text: "The action changed since it was shown to you, so nothing was recorded. Check it and decide again."}
}

// NotOurs tells a person who used a control that is not on one of the
// question's own copies (or names no question of the bridge's).
func (w Words) NotOurs() Notice {
	return Notice{Title: TitleNotOurs, Text: "This control is not on a message this bridge posted for the question. " + ChangedNothing}
}

// Gone tells a person who acted on a question that no longer exists.
func (w Words) Gone() Notice {
	return Notice{Title: TitleGone, Text: "This question no longer exists. " + ChangedNothing}
}

// Invalid tells a person why their answer is not valid: the error's own
// message when it says more than MsgAnswerNotValid, else every problem of
// its details, each with the item it is about.
func (w Words) Invalid(err error) Notice {
	problem := "it does not answer the question"
	var e *Error
	if errors.As(err, &e) {
		problem = e.Message
		if e.Message == MsgAnswerNotValid && len(e.Details) > 0 {
			parts := make([]string, len(e.Details))
			for i, d := range e.Details {
				parts[i] = d.Problem
				if item, ok := strings.CutPrefix(d.Field, "answers["); ok {
					parts[i] = "“" + strings.TrimSuffix(item, "]") + "”: " + d.Problem
				}
			}
			problem = strings.Join(parts, "; ")
		}
	}
	return Notice{Title: TitleInvalid, Text: "That answer is not valid: " + sentence(w.text(problem)) + " Nothing was recorded."}
}

// Failed tells a person that recording what they did failed for a reason
// that is not theirs (the store, a timeout).
func (w Words) Failed() Notice {
	return Notice{Title: TitleFailed,
		Text: "Something went wrong while recording your answer; nothing was recorded. Please try again."}
}

// DismissConfirm is what a surface that can ask first shows before a
// dismissal (Slack's confirmation dialog, the web inbox's Dismiss… form).
func (w Words) DismissConfirm() Notice {
	return Notice{Title: TitleDismiss,
		Text: "Nobody answers it: the agent is told it was dismissed and carries on without an answer. This cannot be undone."}
}

// Refusal is the notice for err, the error the Router returned for who's
// answer or dismissal of q (q: the record as it is now, nil when it could
// not be read). Errors that are not ours read as Failed.
func (w Words) Refusal(err error, q *Question, who Person) Notice {
	switch ErrorCode(err) {
	case ENotAllowed:
		return w.NotAllowed(q, who)
	case EAlreadyAnswered, EQuestionCancelled, EQuestionExpired:
		return w.Late(q)
	case EConflict:
		if q != nil && q.Status.Final() {
			return w.Late(q)
		}
		return w.ActionChanged()
	case ERunNotPaused:
		return w.RunNotPaused()
	case EInvalidAnswer:
		return w.Invalid(err)
	case ENotFound:
		return w.Gone()
	}
	return w.Failed()
}
