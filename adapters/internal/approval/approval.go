// Package approval is how every surface (web, Slack, Discord) presents an
// approval (a question of kind "approval": Allow / Deny): which option
// allows and which denies, so the two look unmistakably different, and
// when a person may deny with a note.
//
// The semantics, the same on every surface:
//   - An approval has no "Other": free text is never offered, so nothing a
//     person types can turn into a decision they did not choose.
//   - "Deny with note…" is an explicit action. It sends the note as the
//     respond request's reason (NoteRequest): the record's answer is the
//     Deny option and the note, exactly as typed, its reason — never read
//     as an answer, so a note "Allow." denies like any other.
//   - An approval that needs several votes takes votes for options only
//     (free text cannot be tallied), so it has no note either.
package approval

import (
	"strings"

	"github.com/askbridge/askbridge/domain"
)

// Tone is what choosing an option of an approval does (domain.Tone: the
// core decides with the same rule).
type Tone = domain.Tone

// Tones.
const (
	Neutral = domain.ToneNeutral // neither: styled as a plain option
	Allow   = domain.ToneAllow   // lets the agent go ahead: primary / success styling
	Deny    = domain.ToneDeny    // refuses: danger styling
)

// Is reports whether q is an approval with the one single-select item the
// Allow / Deny presentation applies to.
func Is(q *domain.Question) bool {
	return q != nil && q.Kind == domain.KindApproval && len(q.Questions) == 1 &&
		!q.Questions[0].MultiSelect && !q.Questions[0].OpenEnded()
}

// ToneOf classifies one option of an approval by its label or value: its
// first word ("Deny", "Deny it", "Reject") or a veto flag (domain.OptionTone).
func ToneOf(o domain.Option) Tone { return domain.OptionTone(o) }

// Tones classifies every option of an approval's item (domain.ItemTones):
// when no option is recognised and there are exactly two, the first allows
// and the second denies. Nil when q is not an approval Is accepts.
func Tones(q *domain.Question) []Tone {
	if !Is(q) {
		return nil
	}
	return domain.ItemTones(q.Questions[0])
}

// DenyOption returns the index of the option that denies, or -1.
func DenyOption(q *domain.Question) int {
	for j, t := range Tones(q) {
		if t == Deny {
			return j
		}
	}
	return -1
}

// NoteAllowed reports whether q offers "Deny with note…": a single-vote
// approval with an option that denies.
func NoteAllowed(q *domain.Question) bool {
	return Is(q) && q.ApprovalsRequired < 2 && DenyOption(q) >= 0
}

// NoteRequest is the answer to send for a denial with note: note as the
// reason, exactly as typed (with the digest of q's action, when it has
// one). ok is false when q takes no note or note is blank.
func NoteRequest(q *domain.Question, note string) (req domain.RespondRequest, ok bool) {
	if strings.TrimSpace(note) == "" || !NoteAllowed(q) {
		return req, false
	}
	req.Reason = &note
	if q.Action != nil {
		req.Digest = q.Action.Digest
	}
	return req, true
}

// Outcome classifies how an answered approval ended: Allow or Deny and,
// for a denial with note, the note (the record's reason). Neutral for anything else.
func Outcome(q *domain.Question) (Tone, string) {
	if !Is(q) || q.Status != domain.StatusAnswered {
		return Neutral, ""
	}
	it := q.Questions[0]
	ans := q.Answers[it.Question]
	tones := Tones(q)
	for j, o := range it.Options {
		if o.Label == ans {
			if tones[j] == Deny && q.Reason != "" {
				return Deny, q.Reason
			}
			return tones[j], ""
		}
	}
	if ans == "" {
		return Neutral, ""
	}
	if d := DenyOption(q); d >= 0 {
		// Records kept from before notes were reasons: "Deny: <note>".
		if rest, ok := strings.CutPrefix(ans, it.Options[d].Label+": "); ok {
			return Deny, rest
		}
	}
	// Free text answered through the API denies with that text.
	return Deny, ans
}

// Verdict describes how a single-vote approval ended, for outcome lines:
// "Allowed", "Denied" or "Denied with a note", and the note. ok is false
// for anything else (a question, a gate decided by votes, a default).
func Verdict(q *domain.Question) (verb, note string, ok bool) {
	if q.ApprovalsRequired > 1 || q.Defaulted {
		return "", "", false
	}
	switch tone, note := Outcome(q); {
	case tone == Allow:
		return "Allowed", "", true
	case tone == Deny && note != "":
		return "Denied with a note", note, true
	case tone == Deny:
		return "Denied", "", true
	}
	return "", "", false
}
