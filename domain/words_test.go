package domain

import (
	"errors"
	"strings"
	"testing"
)

// TestWordsTable is the table of what a person is told, sentence by
// sentence, in plain text (the zero Words).
func TestWordsTable(t *testing.T) {
	alice := Person{Platform: "slack", ID: "U1", Name: "alice"}
	bob := Person{Platform: "discord", ID: "42", Name: "bob"}
	mallory := Person{Platform: "web", ID: "mallory", Name: "mallory"}
	item := []Item{{Question: "Which auth method?", Header: "Auth", Options: []Option{{Label: "OAuth 2.0"}, {Label: "API key"}}}}
	gate := []Item{{Question: "Deploy?", Options: []Option{{Label: "Approve"}, {Label: "Deny", Veto: true}}}}
	only := Responders{Users: []string{"slack:U1", "discord:42"}}
	var w Words

	cases := []struct {
		name string
		got  Notice
		want Notice
	}{
		{"not allowed", w.NotAllowed(&Question{Questions: item, Responders: only}, mallory),
			Notice{TitleNotAllowed, "Only slack:U1, discord:42 may answer or dismiss this question. This changed nothing."}},
		{"not allowed: the requester", w.NotAllowed(&Question{Questions: item, RequestedBy: "web:mallory",
			Responders: Responders{Users: []string{"slack:U1", "web:mallory"}, ExcludeRequester: true}}, mallory),
			Notice{TitleNotAllowed, "You asked for this, so you may not answer it yourself; who may answer: slack:U1, web:mallory. This changed nothing."}},
		{"not allowed: the requester, nobody listed", w.NotAllowed(&Question{Questions: item, RequestedBy: "web:mallory",
			Responders: Responders{ExcludeRequester: true}}, mallory),
			Notice{TitleNotAllowed, "You asked for this, so you may not answer it yourself; who may answer: anyone else. This changed nothing."}},
		{"not allowed: an excluded requester's name is not someone else's", w.NotAllowed(&Question{Questions: item, RequestedBy: "web:someone",
			Responders: Responders{Users: []string{"slack:U1"}, ExcludeRequester: true}}, mallory),
			Notice{TitleNotAllowed, "Only slack:U1 may answer or dismiss this question. This changed nothing."}},
		{"not allowed: unread question", w.NotAllowed(nil, mallory),
			Notice{TitleNotAllowed, "You may not answer or dismiss this question. This changed nothing."}},
		{"already answered", w.Late(&Question{Questions: item, Status: StatusAnswered, RespondedBy: &alice,
			Answers: map[string]string{"Which auth method?": "API key"}}),
			Notice{TitleAlreadyAnswered, "This question was already answered by alice: API key. This changed nothing."}},
		{"already answered with a sentence", w.Late(&Question{Questions: item, Status: StatusAnswered, RespondedBy: &alice,
			Answers: map[string]string{"Which auth method?": "Mutual TLS, please!"}}),
			Notice{TitleAlreadyAnswered, "This question was already answered by alice: Mutual TLS, please! This changed nothing."}},
		{"already answered by default", w.Late(&Question{Questions: item, Status: StatusAnswered, Defaulted: true,
			Answers: map[string]string{"Which auth method?": "OAuth 2.0"}}),
			Notice{TitleAlreadyAnswered, "This question was already answered by default when its time ran out: OAuth 2.0. This changed nothing."}},
		{"already decided by votes", w.Late(&Question{Questions: gate, Status: StatusAnswered, ApprovalsRequired: 2, RespondedBy: &bob,
			Votes:   []Vote{{By: alice, Label: "Approve"}, {By: mallory, Label: "Deny"}, {By: bob, Label: "Approve"}},
			Answers: map[string]string{"Deploy?": "Approve"}}),
			Notice{TitleAlreadyAnswered, "This question was already answered by alice, bob: Approve. This changed nothing."}},
		{"several items", w.Late(&Question{Status: StatusAnswered, RespondedBy: &bob,
			Questions: []Item{{Question: "Which region?", Header: "Region"}, {Question: "Why?"}},
			Answers:   map[string]string{"Which region?": "eu", "Why?": "cost"}}),
			Notice{TitleAlreadyAnswered, "This question was already answered by bob: Region: eu; Why?: cost. This changed nothing."}},
		{"expired", w.Late(&Question{Questions: item, Status: StatusExpired}),
			Notice{TitleExpired, "This question expired without an answer; answers are no longer taken. This changed nothing."}},
		{"dismissed", w.Late(&Question{Questions: item, Status: StatusCancelled, CancelReason: CancelUser, RespondedBy: &bob}),
			Notice{TitleCancelled, "This question was dismissed by bob; answers are no longer taken. This changed nothing."}},
		{"withdrawn with a note", w.Late(&Question{Questions: item, Status: StatusCancelled, CancelReason: CancelAgent, CancelNote: "run 7 took over"}),
			Notice{TitleCancelled, `This question was withdrawn by the agent — "run 7 took over"; answers are no longer taken. This changed nothing.`}},
		{"superseded", w.Late(&Question{Questions: item, Status: StatusCancelled, CancelReason: CancelSuperseded}),
			Notice{TitleCancelled, "This question was replaced by a newer question of the same run; answers are no longer taken. This changed nothing."}},
		{"cancelled without a reason", w.Late(&Question{Questions: item, Status: StatusCancelled}),
			Notice{TitleCancelled, "This question was cancelled; answers are no longer taken. This changed nothing."}},
		{"cancelled for another reason", w.Late(&Question{Questions: item, Status: StatusCancelled, CancelReason: "shutdown"}),
			Notice{TitleCancelled, "This question was cancelled (shutdown); answers are no longer taken. This changed nothing."}},
		{"late on a question still pending", w.Late(&Question{Questions: item, Status: StatusPending}),
			Notice{TitleCancelled, "This question is no longer open. This changed nothing."}},
		{"run not paused", w.RunNotPaused(),
			Notice{TitleRunNotPaused, "The agent's run has not paused yet, so your answer was not recorded. Please try again in a moment."}},
		{"action changed", w.ActionChanged(),
			Notice{TitleActionChanged, "The action changed since it was shown to you, so nothing was recorded. Check it and decide again."}},
		{"gone", w.Gone(), Notice{TitleGone, "This question no longer exists. This changed nothing."}},
		{"not ours", w.NotOurs(), Notice{TitleNotOurs, "This control is not on a message this bridge posted for the question. This changed nothing."}},
		{"invalid", w.Invalid(&Error{Code: EInvalidAnswer, Message: MsgAnswerNotValid, Details: []Detail{
			{Field: "answers[Which region?]", Problem: "required: every question must be answered"}, {Field: "digest", Problem: "is missing"}}}),
			Notice{TitleInvalid, "That answer is not valid: “Which region?”: required: every question must be answered; is missing. Nothing was recorded."}},
		{"invalid: a message that says more than its details", w.Invalid(&Error{Code: EInvalidAnswer, Message: "Write a note to deny with, or press Deny.",
			Details: []Detail{{Field: "answers[Deploy?]", Problem: "the note is empty"}}}),
			Notice{TitleInvalid, "That answer is not valid: Write a note to deny with, or press Deny. Nothing was recorded."}},
		{"invalid without details", w.Invalid(Errorf(EInvalidAnswer, "this approval needs a vote for one of its options")),
			Notice{TitleInvalid, "That answer is not valid: this approval needs a vote for one of its options. Nothing was recorded."}},
		{"failed", w.Failed(),
			Notice{TitleFailed, "Something went wrong while recording your answer; nothing was recorded. Please try again."}},
		{"dismiss: asked first", w.DismissConfirm(),
			Notice{TitleDismiss, "Nobody answers it: the agent is told it was dismissed and carries on without an answer. This cannot be undone."}},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s:\n got  %+v\n want %+v", c.name, c.got, c.want)
		}
	}
}

// TestWordsRefusal picks the sentence for each error the Router returns.
func TestWordsRefusal(t *testing.T) {
	var w Words
	alice := Person{Platform: "slack", ID: "U1", Name: "alice"}
	item := []Item{{Question: "Ok?"}}
	answered := &Question{ID: "q1", Questions: item, Status: StatusAnswered, RespondedBy: &alice, Answers: map[string]string{"Ok?": "yes"}}
	cancelled := &Question{ID: "q1", Questions: item, Status: StatusCancelled, CancelReason: CancelAgent}
	expired := &Question{ID: "q1", Questions: item, Status: StatusExpired}
	pending := &Question{ID: "q1", Questions: item, Status: StatusPending, Responders: Responders{Users: []string{"slack:U1"}}}
	invalid := Errorf(EInvalidAnswer, "the answer is not valid")
	cases := []struct {
		err  error
		q    *Question
		want Notice
	}{
		{Errorf(ENotAllowed, "x"), pending, w.NotAllowed(pending, Person{Platform: "web", ID: "m"})},
		{StatusError(answered), answered, w.AlreadyAnswered(answered)},
		{StatusError(cancelled), cancelled, w.Closed(cancelled)},
		{StatusError(expired), expired, w.Closed(expired)},
		{Errorf(EConflict, "the action changed since it was shown"), pending, w.ActionChanged()},
		{Errorf(EConflict, "question q1 is answered"), answered, w.AlreadyAnswered(answered)},
		{Errorf(ERunNotPaused, "x"), pending, w.RunNotPaused()},
		{invalid, pending, w.Invalid(invalid)},
		{Errorf(ENotFound, "x"), nil, w.Gone()},
		{errors.New("redis: connection refused"), pending, w.Failed()},
		{Errorf(EUnavailable, "x"), pending, w.Failed()},
	}
	for _, c := range cases {
		if got := w.Refusal(c.err, c.q, Person{Platform: "web", ID: "m"}); got != c.want {
			t.Errorf("Refusal(%v):\n got  %+v\n want %+v", c.err, got, c.want)
		}
	}
	if got := w.Refusal(errors.New("redis: connection refused at 10.0.0.7"), pending, alice); strings.Contains(got.Text, "10.0.0.7") {
		t.Errorf("an internal error reached the person: %q", got.Text)
	}
}

// TestWordsFormatting: a surface's formatting reaches every part a
// sentence names, and nothing else of the sentence.
func TestWordsFormatting(t *testing.T) {
	w := Words{
		Person:     func(p *Person) string { return "<@" + p.ID + ">" },
		Responders: func(r Responders) string { return "[" + strings.Join(r.Users, "|") + "]" },
		Text:       func(s string) string { return strings.ReplaceAll(s, "<", "&lt;") },
	}
	alice := Person{Platform: "slack", ID: "U1", Name: "alice"}
	q := &Question{Questions: []Item{{Question: "Ok?"}}, Responders: Responders{Users: []string{"slack:U1"}}}
	if got := w.NotAllowed(q, Person{Platform: "slack", ID: "U9"}).Text; got != "Only [slack:U1] may answer or dismiss this question. This changed nothing." {
		t.Errorf("not allowed: %q", got)
	}
	q.Status, q.RespondedBy, q.Answers = StatusAnswered, &alice, map[string]string{"Ok?": "<b>yes</b>"}
	if got := w.Late(q).Text; got != "This question was already answered by <@U1>: &lt;b>yes&lt;/b>. This changed nothing." {
		t.Errorf("already answered: %q", got)
	}
	q.Status, q.CancelReason, q.CancelNote, q.Answers = StatusCancelled, CancelUser, "<!channel>", nil
	if got := w.Late(q).Text; got != `This question was dismissed by <@U1> — "&lt;!channel>"; answers are no longer taken. This changed nothing.` {
		t.Errorf("dismissed: %q", got)
	}
	if got := w.Invalid(Errorf(EInvalidAnswer, "<x> is not an option")).Text; got != "That answer is not valid: &lt;x> is not an option. Nothing was recorded." {
		t.Errorf("invalid: %q", got)
	}
}
