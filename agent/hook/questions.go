package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/askbridge/askbridge/domain"
)

// hostQuestion is one AskUserQuestion question exactly as Claude Code gave
// it. Claude Code accepts more than the bridge does (a header over 12
// characters, texts or labels differing only by case, long descriptions,
// an empty label) and looks answers up by the exact question string, so
// the hook shows people a display form (display) and answers with these
// originals.
type hostQuestion struct {
	Question    string `json:"question"`
	Header      string `json:"header"`
	MultiSelect bool   `json:"multiSelect"`
	Options     []struct {
		Label       string `json:"label"`
		Description string `json:"description"`
	} `json:"options"`
}

// askInput is an AskUserQuestion tool_input: its fields in order (so
// updatedInput hands back everything Claude Code sent) and the questions.
type askInput struct {
	fields    map[string]json.RawMessage
	questions []hostQuestion
}

func parseAskInput(raw json.RawMessage) (*askInput, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || len(bytes.TrimSpace(fields["questions"])) == 0 ||
		string(bytes.TrimSpace(fields["questions"])) == "null" {
		return nil, errors.New("AskUserQuestion tool_input has no questions")
	}
	var qs []hostQuestion
	if err := json.Unmarshal(fields["questions"], &qs); err != nil {
		return nil, fmt.Errorf("AskUserQuestion tool_input.questions is not a list of questions: %v", err)
	}
	return &askInput{fields: fields, questions: qs}, nil
}

// display is the form people see: within the bridge's limits, every
// question and every label of a question distinct (ignoring case),
// item i and option j standing for the original question i, option j.
func (a *askInput) display() []domain.Item {
	items := make([]domain.Item, len(a.questions))
	texts := map[string]bool{}
	for i, q := range a.questions {
		text := strings.TrimSpace(q.Question)
		if text == "" {
			text = firstNonEmpty(strings.TrimSpace(q.Header), fmt.Sprintf("Question %d", i+1))
		}
		it := domain.Item{
			Question:    distinct(texts, shorten(text, domain.MaxQuestionLen-8), i+1),
			Header:      shorten(strings.TrimSpace(q.Header), domain.MaxHeaderLen),
			MultiSelect: q.MultiSelect && len(q.Options) > 0,
		}
		labels := map[string]bool{}
		for j, o := range q.Options {
			label := strings.TrimSpace(o.Label)
			if label == "" {
				label = fmt.Sprintf("Option %d", j+1)
			}
			it.Options = append(it.Options, domain.Option{
				Label:       distinct(labels, shorten(label, domain.MaxLabelLen-8), j+1),
				Description: shorten(strings.TrimSpace(o.Description), domain.MaxDescriptionLen),
			})
		}
		items[i] = it
	}
	return items
}

// distinct returns s, or s with " (n)" (n counting up from the item's
// position) when seen already holds it in any case, and records it.
func distinct(seen map[string]bool, s string, n int) string {
	out := s
	for seen[strings.ToLower(out)] {
		out = fmt.Sprintf("%s (%d)", s, n)
		n++
	}
	seen[strings.ToLower(out)] = true
	return out
}

// answers maps an answered question (asked in the display form) back to
// the original strings: keyed by each original question, in question
// order, each chosen display label turned back into its original label,
// free text as typed.
func (a *askInput) answers(q *domain.Question, shown []domain.Item) orderedMap {
	var out orderedMap
	for i, orig := range a.questions {
		if i >= len(q.Questions) || i >= len(shown) {
			break
		}
		key := q.Questions[i].Question
		picked, ok := q.Selections[key]
		if !ok && q.Answers[key] != "" {
			picked = []string{q.Answers[key]}
		}
		var parts []string
		for _, s := range picked {
			parts = append(parts, originalLabel(orig, shown[i], s))
		}
		out.set(orig.Question, strings.Join(parts, ", "))
	}
	return out
}

func originalLabel(orig hostQuestion, shown domain.Item, s string) string {
	for j, o := range shown.Options {
		if j < len(orig.Options) && o.Label == s {
			return orig.Options[j].Label
		}
	}
	return s
}

// updatedInput is the tool_input Claude Code sent with the answers added:
// questions first, answers last, as Claude Code writes them.
func (a *askInput) updatedInput(answers orderedMap) orderedMap {
	var out orderedMap
	out.setRaw("questions", a.fields["questions"])
	keys := make([]string, 0, len(a.fields))
	for k := range a.fields {
		if k != "questions" && k != "answers" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		out.setRaw(k, a.fields[k])
	}
	b, _ := json.Marshal(answers)
	out.setRaw("answers", b)
	return out
}

// orderedMap is a JSON object that keeps its keys in insertion order (a Go
// map would sort them). A repeated key keeps its first value: Claude Code
// could not tell two identical question strings apart either.
type orderedMap struct {
	keys []string
	vals []json.RawMessage
}

func (m *orderedMap) set(k, v string) {
	b, _ := json.Marshal(v)
	m.setRaw(k, b)
}

func (m *orderedMap) setRaw(k string, v json.RawMessage) {
	for _, have := range m.keys {
		if have == k {
			return
		}
	}
	m.keys = append(m.keys, k)
	m.vals = append(m.vals, v)
}

// Get returns the value of k as a string ("" when absent or not a string).
func (m orderedMap) Get(k string) string {
	for i, have := range m.keys {
		if have == k {
			var s string
			_ = json.Unmarshal(m.vals[i], &s)
			return s
		}
	}
	return ""
}

// MarshalJSON implements json.Marshaler.
func (m orderedMap) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range m.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		var v bytes.Buffer
		if err := json.Compact(&v, m.vals[i]); err != nil {
			return nil, err
		}
		b.Write(v.Bytes())
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// questionsProblems is the denial for an ask the bridge refused because of
// what an item says (an "Other" option: the surfaces add it, so the bridge
// refuses what Claude Code accepts), which Claude can fix and ask again;
// "" for any other error: one Claude Code refuses itself (five questions)
// or one the operator must fix (a route, a token).
func questionsProblems(err error) string {
	var e *domain.Error
	if !errors.As(err, &e) || e.Code != domain.EInvalid || len(e.Details) == 0 {
		return ""
	}
	parts := make([]string, len(e.Details))
	for i, d := range e.Details {
		if !strings.HasPrefix(d.Field, "questions[") {
			return ""
		}
		parts[i] = d.Field + ": " + d.Problem
	}
	return "askbridge refused these questions: " + strings.Join(parts, "; ") + ". Fix them and call AskUserQuestion again."
}
