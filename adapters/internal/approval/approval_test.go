package approval

import (
	"testing"

	"github.com/askbridge/askbridge/domain"
)

func ask(opts ...domain.Option) *domain.Question {
	return &domain.Question{Kind: domain.KindApproval, Questions: []domain.Item{{Question: "Allow Bash: rm -rf build?", Options: opts}}}
}

func TestTones(t *testing.T) {
	for _, c := range []struct {
		opts []domain.Option
		want []Tone
	}{
		{[]domain.Option{{Label: "Allow"}, {Label: "Deny"}}, []Tone{Allow, Deny}},
		{[]domain.Option{{Label: "Approve"}, {Label: "Reject", Value: "no"}}, []Tone{Allow, Deny}},
		{[]domain.Option{{Label: "Deploy"}, {Label: "Wait"}}, []Tone{Allow, Deny}}, // unknown words: hook order
		{[]domain.Option{{Label: "Deploy"}, {Label: "Wait"}, {Label: "Ask later"}}, []Tone{Neutral, Neutral, Neutral}},
		{[]domain.Option{{Label: "Ship it"}, {Label: "Block", Veto: true}, {Label: "Not now"}}, []Tone{Neutral, Deny, Neutral}},
	} {
		got := Tones(ask(c.opts...))
		if len(got) != len(c.want) {
			t.Fatalf("%v: %v", c.opts, got)
		}
		for j := range got {
			if got[j] != c.want[j] {
				t.Errorf("%v: option %d is %v, want %v", c.opts, j, got[j], c.want[j])
			}
		}
	}
	if Tones(&domain.Question{Kind: domain.KindQuestion, Questions: []domain.Item{{Question: "x", Options: []domain.Option{{Label: "Allow"}, {Label: "Deny"}}}}}) != nil {
		t.Error("a plain question has no tones")
	}
}

func TestNoteTravelsAsAReason(t *testing.T) {
	q := ask(domain.Option{Label: "Allow"}, domain.Option{Label: "Deny"})
	for _, note := range []string{"use make clean instead", " allow ", "Allow.", "Deny"} {
		req, ok := NoteRequest(q, note)
		if !ok || req.Reason == nil || *req.Reason != note || req.Response != nil || len(req.Answers) > 0 {
			t.Errorf("NoteRequest(%q) = %+v, %v; want the note as the reason, as typed", note, req, ok)
		}
	}
	if _, ok := NoteRequest(q, "  "); ok {
		t.Error("a blank note is no note")
	}
	two := *q
	two.ApprovalsRequired = 2
	if _, ok := NoteRequest(&two, "why"); NoteAllowed(&two) || ok {
		t.Error("a vote cannot carry a note")
	}
	q.Status, q.Answers, q.Reason = domain.StatusAnswered, map[string]string{q.Questions[0].Question: "Deny"}, "Allow."
	if tone, note := Outcome(q); tone != Deny || note != "Allow." {
		t.Errorf("outcome %v %q", tone, note)
	}
	q.Reason = ""
	q.Answers[q.Questions[0].Question] = "Deny: allow" // a record kept from before
	if tone, note := Outcome(q); tone != Deny || note != "allow" {
		t.Errorf("outcome %v %q", tone, note)
	}
	q.Answers[q.Questions[0].Question] = "Allow"
	if tone, note := Outcome(q); tone != Allow || note != "" {
		t.Errorf("outcome %v %q", tone, note)
	}
}
