package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxAnswerLen bounds one free-text answer.
const MaxAnswerLen = 4000

// StringList reads a JSON string or an array of strings.
type StringList []string

// UnmarshalJSON implements json.Unmarshaler.
func (l *StringList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var xs []string
		if err := json.Unmarshal(b, &xs); err != nil {
			return fmt.Errorf("want a string or a list of strings")
		}
		*l = xs
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a string or a list of strings")
	}
	*l = StringList{s}
	return nil
}

// RespondRequest is the body of POST .../respond (docs/openapi.yaml).
type RespondRequest struct {
	Response *string               `json:"response,omitempty"`
	Answers  map[string]StringList `json:"answers,omitempty"`
	// RespondedBy names the person an operator relays an answer for (the
	// trust model: only relay operators, or the local user of a bridge
	// without tokens, may set it).
	RespondedBy *PersonRef `json:"responded_by,omitempty"`
	// Approvals with an action (domain/decide.go). EditedInput approves the
	// action with these arguments instead; Rule picks one of the action's
	// suggestions ("always allow"), by index; Digest is the action digest
	// the person saw (a different one is refused as a conflict); Reason
	// denies in one step, with the reason as the agent's feedback.
	EditedInput json.RawMessage `json:"edited_input,omitempty"`
	Rule        *int            `json:"rule,omitempty"`
	Digest      string          `json:"digest,omitempty"`
	Reason      *string         `json:"reason,omitempty"`
}

// PersonRef is how a request names a person: an object {"platform", "id",
// "name"} or a string, "<platform>:<id>" (as responders name people) or a
// bare user id, taken as an API user.
type PersonRef struct{ Person }

// personRefError is the problem with a responded_by value; decoders
// report it at the field's path.
func personRefError(problem string) error { return errors.New(problem) }

// UnmarshalJSON accepts the object and the string forms.
func (r *PersonRef) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		s = strings.TrimSpace(s)
		if s == "" {
			return personRefError("must be a user id or an object with platform and id")
		}
		if plat, id, ok := strings.Cut(s, ":"); ok && plat != "" && id != "" && !strings.Contains(plat, "/") {
			r.Person = Person{Platform: plat, ID: id}
		} else {
			r.Person = Person{Platform: "api", ID: s}
		}
		return nil
	}
	var o struct {
		Platform string `json:"platform"`
		ID       string `json:"id"`
		Name     string `json:"name"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return personRefError("must be a user id or an object with platform and id")
	}
	if strings.TrimSpace(o.Platform) == "" || strings.TrimSpace(o.ID) == "" {
		return personRefError("needs platform and id")
	}
	r.Person = Person{Platform: o.Platform, ID: o.ID, Name: o.Name}
	return nil
}

// ParseAnswer resolves a respond request against a question's items. Every
// item must be answered; a single-select item takes one answer. Each string
// matches an option's value or label as people type them (MatchOption) or
// else is free text; the record's free_text names the items that got some.
func ParseAnswer(q *Question, req RespondRequest) (Answer, error) {
	var p problems
	if req.Response != nil {
		checkText(&p, "response", *req.Response)
	}
	for k, vs := range req.Answers {
		for _, v := range vs {
			checkText(&p, "answers["+k+"]", v)
		}
	}
	if len(p) > 0 {
		return Answer{}, p.err(EInvalidAnswer, "the answer is not valid")
	}
	raw := make([][]string, len(q.Questions))
	switch {
	case req.Response != nil && len(req.Answers) > 0:
		p.add("response", "give either response or answers, not both")
	case req.Response != nil:
		if len(q.Questions) != 1 {
			p.add("response", "this question has %d items: answer each with answers{\"<item text>\": ...}", len(q.Questions))
			break
		}
		raw[0] = splitResponse(q.Questions[0], *req.Response)
	case len(req.Answers) > 0:
		keys := make([]string, 0, len(req.Answers))
		for k := range req.Answers {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			i := itemIndex(q.Questions, k)
			if i < 0 {
				p.add("answers["+k+"]", "no such question; use the text of one of the question's items")
				continue
			}
			vals := []string(req.Answers[k])
			if len(vals) == 1 {
				vals = splitResponse(q.Questions[i], vals[0])
			}
			raw[i] = vals
		}
	default:
		p.add("response", "required: give response (one item) or answers (every item)")
	}
	if err := p.err(EInvalidAnswer, MsgAnswerNotValid); err != nil {
		return Answer{}, err
	}
	choices := make([][]string, len(q.Questions))
	for i := range q.Questions {
		for _, s := range raw[i] {
			if s = strings.TrimSpace(s); s != "" {
				choices[i] = append(choices[i], s)
			}
		}
	}
	shown := Shown(q.Questions, choices)
	for i, it := range q.Questions {
		picked := choices[i]
		f := fmt.Sprintf("answers[%s]", it.Question)
		if !shown[i] {
			if len(picked) > 0 {
				p.add(f, "this question is not asked (%s); leave it out", strings.TrimPrefix(skipReason(q.Questions, i, shown), "not asked: "))
			}
			continue
		}
		if len(picked) == 0 {
			if it.ShowIf != nil {
				p.add(f, "required: this question is asked because of the answer to questions[%d]", it.ShowIf.Item)
			} else {
				p.add(f, "required: every question must be answered")
			}
		}
		if !it.MultiSelect && len(picked) > 1 {
			p.add(f, "takes one answer, got %d", len(picked))
		}
		for _, s := range picked {
			if utf8.RuneCountInString(s) > MaxAnswerLen {
				p.add(f, "free text at most %d characters", MaxAnswerLen)
				continue
			}
			if _, ok := MatchOption(it, s); ok {
				continue
			}
			if msg := it.Other.Check(s); msg != "" {
				p.add(f, "%s", msg)
			}
		}
	}
	if err := p.err(EInvalidAnswer, MsgAnswerNotValid); err != nil {
		return Answer{}, err
	}
	a := resolveShown(q.Questions, choices, shown)
	for i := range q.Questions {
		if !shown[i] {
			a.Skipped = append(a.Skipped, Skipped{Question: q.Questions[i].Question, Reason: skipReason(q.Questions, i, shown)})
		}
	}
	return a, nil
}

// Resolve builds the three answer forms from per-item choices (labels,
// values or free texts). It does not validate; ParseAnswer does.
func Resolve(items []Item, choices [][]string) Answer {
	return resolveShown(items, choices, nil)
}

// resolveShown is Resolve over the items shown (all when shown is nil): a
// hidden item is no key of the answer forms.
func resolveShown(items []Item, choices [][]string, shown []bool) Answer {
	a := Answer{Answers: map[string]string{}, Selections: map[string][]string{}}
	var responses []string
	for i, it := range items {
		if shown != nil && !shown[i] {
			continue
		}
		var labels, values []string
		seen := map[string]bool{}
		for _, s := range choices[i] {
			label, value := s, s
			if o, ok := MatchOption(it, s); ok {
				label, value = o.Label, o.Value
			}
			if seen[label] {
				continue
			}
			seen[label] = true
			labels = append(labels, label)
			values = append(values, value)
		}
		a.Selections[it.Question] = labels
		a.Answers[it.Question] = strings.Join(labels, ", ")
		responses = append(responses, strings.Join(values, ", "))
	}
	a.Response = strings.Join(responses, "; ")
	return a
}

// splitResponse turns "Login, Dashboard" into two choices when the item is
// multi-select and every part names an option; otherwise it is one choice.
func splitResponse(it Item, s string) []string {
	if _, ok := MatchOption(it, s); ok || !it.MultiSelect || !strings.Contains(s, ",") {
		return []string{s}
	}
	parts := strings.Split(s, ",")
	for _, part := range parts {
		if _, ok := MatchOption(it, strings.TrimSpace(part)); !ok {
			return []string{s}
		}
	}
	return parts
}

// MatchOption finds the option s names the way people type it: a label
// or value exactly, then in any case, then ignoring surrounding spaces and
// punctuation and runs of white space ("api key", " API  key. " and
// "“API key”" all name "API key"). A loose form that fits two options
// names neither.
func MatchOption(it Item, s string) (Option, bool) {
	for _, o := range it.Options {
		if o.Label == s || o.Value == s {
			return o, true
		}
	}
	s = strings.TrimSpace(s)
	for _, o := range it.Options {
		if strings.EqualFold(o.Value, s) || strings.EqualFold(o.Label, s) {
			return o, true
		}
	}
	loose := looseForm(s)
	if loose == "" {
		return Option{}, false
	}
	found, n := Option{}, 0
	for _, o := range it.Options {
		if looseForm(o.Label) == loose || looseForm(o.Value) == loose {
			found = o
			n++
		}
	}
	return found, n == 1
}

// looseForm is s without surrounding spaces and punctuation, with runs of
// white space as one space, in lower case.
func looseForm(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) })
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// FreeTextItems returns, in item order, the text of every item whose
// answer holds free text: a selection that is none of its option labels
// (every answer to an open-ended item).
func FreeTextItems(items []Item, selections map[string][]string) []string {
	var out []string
	for _, it := range items {
		sel, ok := selections[it.Question]
		if !ok {
			continue
		}
		for _, s := range sel {
			if !slices.ContainsFunc(it.Options, func(o Option) bool { return o.Label == s }) {
				out = append(out, it.Question)
				break
			}
		}
	}
	return out
}

// itemIndex finds the item a key names: its exact text, the text in any
// case, or its header when that is unique.
func itemIndex(items []Item, key string) int {
	for i, it := range items {
		if it.Question == key {
			return i
		}
	}
	found := -1
	for i, it := range items {
		if strings.EqualFold(it.Question, key) || (it.Header != "" && strings.EqualFold(it.Header, key)) {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}
