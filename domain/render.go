package domain

import (
	"fmt"
	"regexp"
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
		a, asked := q.Answers[it.Question]
		if !asked {
			continue // not asked (show_if): listed in skipped, not here
		}
		parts = append(parts, name+": "+a)
	}
	return strings.Join(parts, "; ")
}

// OutcomeLine is the one line every copy shows once a question is final:
// "Answered by alice: OAuth 2.0", "Expired", "Cancelled (superseded)",
// "Dismissed by bob". Empty while the question is pending.
func OutcomeLine(q *Question) string {
	switch q.Status {
	case StatusAnswered:
		by := "Answered by " + PersonName(q.RespondedBy)
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
			return "Dismissed by " + PersonName(q.RespondedBy) + NoteSuffix(q)
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
		return PersonName(q.RespondedBy)
	}
	return strings.Join(names, ", ")
}

// ExpiresPhrase renders the deadline of q relative to now: "expires in 30 min".
func ExpiresPhrase(q *Question, now time.Time) string {
	return "expires in " + HumanDuration(q.ExpiresAt.Sub(now))
}

// PlatformName is a platform as people read it: "Slack", "API", "web inbox".
func PlatformName(p string) string {
	switch p {
	case "slack":
		return "Slack"
	case "discord":
		return "Discord"
	case "telegram":
		return "Telegram"
	case "pagerduty":
		return "PagerDuty"
	case "web":
		return "web inbox"
	case "api":
		return "API"
	case "cli":
		return "CLI"
	case "":
		return ""
	}
	return strings.ToUpper(p[:1]) + p[1:]
}

// OnPlatform is where someone did something: "on Slack", "on the API",
// "on the web inbox", "by email".
func OnPlatform(p string) string {
	switch p {
	case "email":
		return "by email"
	case "web", "api", "cli":
		return "on the " + PlatformName(p)
	}
	return "on " + PlatformName(p)
}

// PersonName names p for people, or "someone".
func PersonName(p *Person) string {
	if p == nil {
		return "someone"
	}
	return p.String()
}

// HumanDuration renders d as "30 min", "2 h 5 min", "45 s".
func HumanDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Round(time.Minute).Minutes()))
	case d < 48*time.Hour:
		h := int(d.Hours())
		m := int((d - time.Duration(h)*time.Hour).Minutes())
		if m == 0 {
			return fmt.Sprintf("%d h", h)
		}
		return fmt.Sprintf("%d h %d min", h, m)
	}
	return fmt.Sprintf("%d days", int(d.Hours()/24))
}

// DescribeStep names an escalation step for the audit trail.
func DescribeStep(s EscalationStep) string {
	var parts []string
	if s.Remind {
		parts = append(parts, "reminder")
	}
	for _, t := range s.Targets {
		parts = append(parts, "copy to "+TargetName(t))
	}
	if s.Responders != nil {
		parts = append(parts, "responders added: "+DescribeResponders(*s.Responders))
	}
	if s.Page != nil {
		parts = append(parts, "page through "+s.Page.Pager)
	}
	return fmt.Sprintf("after %s: %s", HumanDuration(time.Duration(s.After)), strings.Join(parts, ", "))
}

// maskedLink is a Markdown link whose text hides where it goes:
// [text](url), [text](<url>), [text](url "title").
var maskedLink = regexp.MustCompile(`\[([^\]\n]*)\]\(\s*<?([^\s()<>]+)>?(?:\s+"[^"\n]*")?\s*\)`)

// ShowLinks rewrites the Markdown links in agent text so each shows where
// it goes: "[Open the runbook](https://evil.example)" becomes
// "Open the runbook (https://evil.example)". A surface that renders
// Markdown (Discord) would otherwise show only the text, which can imitate
// the bridge's own address.
func ShowLinks(s string) string {
	if !strings.Contains(s, "](") {
		return s
	}
	return maskedLink.ReplaceAllString(s, "$1 ($2)")
}

// WithLinksShown returns q, or a copy of it whose agent and person texts
// (questions, descriptions, context, notes, answers) show their links'
// destinations (ShowLinks), for a surface that renders Markdown.
func (q *Question) WithLinksShown() *Question {
	if q == nil || !q.hasMaskedLink() {
		return q
	}
	show := ShowLinks
	c := *q
	c.Context = show(q.Context)
	c.CancelNote = show(q.CancelNote)
	c.Questions = make([]Item, len(q.Questions))
	for i, it := range q.Questions {
		it.Question = show(it.Question)
		opts := make([]Option, len(it.Options))
		for j, o := range it.Options {
			o.Description = show(o.Description)
			opts[j] = o
		}
		it.Options = opts
		c.Questions[i] = it
	}
	if len(q.Answers) > 0 {
		c.Answers = make(map[string]string, len(q.Answers))
		for k, v := range q.Answers {
			c.Answers[k] = show(v)
		}
	}
	return &c
}

// hasMaskedLink reports whether any text WithLinksShown rewrites holds a
// Markdown link, so a question without one (nearly all) is not copied.
func (q *Question) hasMaskedLink() bool {
	has := func(s string) bool { return strings.Contains(s, "](") && maskedLink.MatchString(s) }
	if has(q.Context) || has(q.CancelNote) {
		return true
	}
	for _, it := range q.Questions {
		if has(it.Question) {
			return true
		}
		for _, o := range it.Options {
			if has(o.Description) {
				return true
			}
		}
	}
	for _, v := range q.Answers {
		if has(v) {
			return true
		}
	}
	return false
}
