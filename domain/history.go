package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Question history across sessions: when an agent asks what it asked
// before (the same item texts and option labels), people see what was
// answered the last few times. History is derived from answered records
// still within retention, found through an index (HistoryKey) that stores
// keep with the records' own lifetime.

// HistoryShown is how many earlier answers a question shows.
const HistoryShown = 3

// PastAnswer is one earlier answer to the same question.
type PastAnswer struct {
	QuestionID  string              `json:"question_id"`
	Answer      string              `json:"answer"` // the chosen labels or free text, items joined by "; "
	Answers     map[string]string   `json:"answers,omitempty"`
	Selections  map[string][]string `json:"selections,omitempty"`
	RespondedBy *Person             `json:"responded_by,omitempty"`
	RespondedAt time.Time           `json:"responded_at"`
	Defaulted   bool                `json:"defaulted,omitempty"`
}

// ShapeKey identifies what was asked, for history: the item texts and
// option labels, in order.
func ShapeKey(items []Item) string {
	h := sha256.New()
	for _, it := range items {
		fmt.Fprintf(h, "q%d:%s\n", len(it.Question), it.Question)
		for _, o := range it.Options {
			fmt.Fprintf(h, "o%d:%s\n", len(o.Label), o.Label)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// HistoryKey is the name under which stores index a question for its
// history: the agent and the shape of what it asked (ShapeKey), so an
// earlier answer is found without reading the project's other records.
func HistoryKey(agent string, items []Item) string {
	h := sha256.New()
	fmt.Fprintf(h, "a%d:%s\n%s", len(agent), agent, ShapeKey(items))
	// 64 bits: a collision within one project costs only a place in the
	// index (readers compare what was asked, SameAsked), and every record
	// carries the key.
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// SameAsked reports whether earlier was asked by the same agent with the
// same items as q, and answered.
func SameAsked(q, earlier *Question) bool {
	return earlier.ID != q.ID && earlier.ProjectID == q.ProjectID && earlier.AgentID == q.AgentID &&
		earlier.Status == StatusAnswered && ShapeKey(earlier.Questions) == ShapeKey(q.Questions)
}

// PastAnswerOf summarises an answered record.
func PastAnswerOf(q *Question) PastAnswer {
	var parts []string
	for _, it := range q.Questions {
		if a, ok := q.Answers[it.Question]; ok {
			parts = append(parts, a)
		}
	}
	p := PastAnswer{QuestionID: q.ID, Answer: strings.Join(parts, "; "), Answers: q.Answers, Selections: q.Selections,
		RespondedBy: q.RespondedBy, Defaulted: q.Defaulted}
	if q.RespondedAt != nil {
		p.RespondedAt = *q.RespondedAt
	}
	return p
}

// HistoryOf picks the earlier answers to q among candidates, newest first,
// at most limit.
func HistoryOf(q *Question, candidates []*Question, limit int) []PastAnswer {
	var out []PastAnswer
	for _, c := range candidates {
		if SameAsked(q, c) {
			out = append(out, PastAnswerOf(c))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].RespondedAt.After(out[j].RespondedAt) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// Brief is a past answer as kept on a new record: what was answered, by
// whom and when, without the maps.
func (p PastAnswer) Brief() PastAnswer {
	p.Answers, p.Selections = nil, nil
	p.Answer = clip(p.Answer, MaxLabelLen)
	if p.RespondedBy != nil {
		by := Person{Platform: p.RespondedBy.Platform, ID: p.RespondedBy.ID, Name: p.RespondedBy.Name}
		p.RespondedBy = &by
	}
	return p
}

// HistoryText is the line surfaces show: "Last 3 times: API key (maria,
// 2 days ago), API key (li, last week), OAuth (maria, 3 weeks ago)".
func HistoryText(h []PastAnswer, now time.Time) string {
	if len(h) == 0 {
		return ""
	}
	head := "Last time: "
	if len(h) > 1 {
		head = fmt.Sprintf("Last %d times: ", len(h))
	}
	parts := make([]string, len(h))
	for i, p := range h {
		who := "by default"
		if !p.Defaulted {
			who = PersonName(p.RespondedBy)
			if p.RespondedBy != nil && p.RespondedBy.Name == "" {
				who = p.RespondedBy.ID
			}
		}
		parts[i] = fmt.Sprintf("%s (%s, %s)", p.Answer, who, Ago(now.Sub(p.RespondedAt)))
	}
	return head + strings.Join(parts, ", ")
}

// Ago says how long ago something was, the way people say it.
func Ago(d time.Duration) string {
	day := 24 * time.Hour
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute") + " ago"
	case d < day:
		return plural(int(d/time.Hour), "hour") + " ago"
	case d < 2*day:
		return "yesterday"
	case d < 7*day:
		return plural(int(d/day), "day") + " ago"
	case d < 14*day:
		return "last week"
	case d < 60*day:
		return plural(int(d/(7*day)), "week") + " ago"
	}
	return plural(int(d/(30*day)), "month") + " ago"
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// SuggestFromHistory marks the most frequent earlier answer of each
// single-item question as recommended, when the agent recommended none.
// It reports whether it marked one.
func SuggestFromHistory(q *Question, h []PastAnswer) bool {
	if len(q.Questions) != 1 || len(h) == 0 {
		return false
	}
	it := &q.Questions[0]
	for _, o := range it.Options {
		if o.Recommended {
			return false
		}
	}
	counts := map[string]int{}
	best, bestN := "", 0
	for _, p := range h { // newest first: of equal counts, the one reached first wins
		for _, l := range p.Selections[it.Question] {
			counts[l]++
			if counts[l] > bestN {
				best, bestN = l, counts[l]
			}
		}
	}
	for i, o := range it.Options {
		if o.Label == best {
			it.Options[i].Recommended = true
			return true
		}
	}
	return false
}
