package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
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
	Response    *string               `json:"response,omitempty"`
	Answers     map[string]StringList `json:"answers,omitempty"`
	RespondedBy *Person               `json:"responded_by,omitempty"`
}

// ParseAnswer resolves a respond request against a question's items. Every
// item must be answered; a single-select item takes one answer. Each string
// matches an option's value or label (case-insensitive) or else is free text.
func ParseAnswer(q *Question, req RespondRequest) (Answer, error) {
	var p problems
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
	if err := p.err(EInvalidAnswer, "the answer is not valid"); err != nil {
		return Answer{}, err
	}
	choices := make([][]string, len(q.Questions))
	for i, it := range q.Questions {
		var picked []string
		for _, s := range raw[i] {
			if s = strings.TrimSpace(s); s != "" {
				picked = append(picked, s)
			}
		}
		choices[i] = picked
		f := fmt.Sprintf("answers[%s]", it.Question)
		if len(picked) == 0 {
			p.add(f, "required: every question must be answered")
		}
		if !it.MultiSelect && len(picked) > 1 {
			p.add(f, "takes one answer, got %d", len(picked))
		}
		for _, s := range picked {
			if utf8.RuneCountInString(s) > MaxAnswerLen {
				p.add(f, "free text at most %d characters", MaxAnswerLen)
			}
		}
	}
	if err := p.err(EInvalidAnswer, "the answer is not valid"); err != nil {
		return Answer{}, err
	}
	return Resolve(q.Questions, choices), nil
}

// Resolve builds the three answer forms from per-item choices (labels,
// values or free texts). It does not validate; ParseAnswer does.
func Resolve(items []Item, choices [][]string) Answer {
	a := Answer{Answers: map[string]string{}, Selections: map[string][]string{}}
	var responses []string
	for i, it := range items {
		var labels, values []string
		seen := map[string]bool{}
		for _, s := range choices[i] {
			label, value := s, s
			if o, ok := matchOption(it, s); ok {
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
	if _, ok := matchOption(it, s); ok || !it.MultiSelect || !strings.Contains(s, ",") {
		return []string{s}
	}
	parts := strings.Split(s, ",")
	for _, part := range parts {
		if _, ok := matchOption(it, strings.TrimSpace(part)); !ok {
			return []string{s}
		}
	}
	return parts
}

func matchOption(it Item, s string) (Option, bool) {
	s = strings.TrimSpace(s)
	for _, o := range it.Options {
		if strings.EqualFold(o.Value, s) || strings.EqualFold(o.Label, s) {
			return o, true
		}
	}
	return Option{}, false
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
