package pagerduty

import (
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/actiontext"
	"github.com/askbridge/askbridge/domain"
)

// Profile is one page setting of a route or escalation step
// (page: {pagerduty: {routing_key_file, severity}}).
type Profile struct {
	RoutingKey string
	// Severity is critical, error, warning or info (default critical).
	Severity string
}

// oneLine folds s onto one line: agent text may hold newlines and runs of
// spaces that a pager's title would show as is.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// What a question asks, in a few words: the approval's action, or the first
// item's text.
func asks(q *domain.Question) string {
	if q.Action != nil {
		if cmd, ok := actiontext.Command(q.Action); ok {
			return "run " + q.Action.Tool + ": " + cmd
		}
		return "use " + q.Action.Tool
	}
	if len(q.Questions) > 0 {
		s := q.Questions[0].Question
		if len(q.Questions) > 1 {
			s += " (and " + plural(len(q.Questions)-1, "more question") + ")"
		}
		return s
	}
	return "a question"
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func agentName(q *domain.Question) string {
	if q.AgentName != "" {
		return q.AgentName
	}
	if q.AgentID != "" {
		return q.AgentID
	}
	return "An agent"
}

// Summary is the alert's title: "Deploy bot asks: Deploy api 1.4 to
// production?" or "Deploy bot asks to run Bash: rm -rf build", on one line,
// at most MaxSummary characters ("…" when cut).
func Summary(q *domain.Question) string {
	verb := " asks: "
	if q.Action != nil {
		verb = " asks to "
	}
	return domain.Shorten(oneLine(agentName(q)+verb+asks(q)), MaxSummary)
}

// QuestionURL is the question's page under the bridge's public URL, empty
// without one.
func QuestionURL(publicURL string, q *domain.Question) string {
	if publicURL == "" {
		return ""
	}
	return strings.TrimRight(publicURL, "/") + "/questions/" + q.ID
}

// TriggerEvent is the page of q: dedup_key = the question id, so a repeated
// trigger (a re-attached ask, a retry) merges into the same alert.
func TriggerEvent(q *domain.Question, p Profile, publicURL string, now time.Time) Event {
	sev := p.Severity
	if sev == "" {
		sev = "critical"
	}
	details := map[string]any{
		"project": q.ProjectID, "run": q.RunID, "agent": agentName(q), "question_id": q.ID,
		"expires_at": q.ExpiresAt.UTC().Format(time.RFC3339),
	}
	if q.Route != "" {
		details["route"] = q.Route
	}
	var items []string
	for _, it := range q.Questions {
		items = append(items, it.Question)
	}
	if len(items) > 0 {
		details["questions"] = items
	}
	if q.Action != nil {
		details["tool"] = q.Action.Tool
		details["digest"] = q.Action.Digest
	}
	if q.Context != "" {
		details["context"] = domain.Shorten(q.Context, 2000)
	}
	ev := Event{RoutingKey: p.RoutingKey, EventAction: "trigger", DedupKey: q.ID, Client: "askbridge",
		Payload: &Payload{Summary: Summary(q), Source: "askbridge", Severity: sev, Component: q.AgentID,
			Group: q.ProjectID, Class: q.Kind, Timestamp: now.UTC().Format(time.RFC3339), CustomDetails: details}}
	if u := QuestionURL(publicURL, q); u != "" {
		ev.ClientURL = u
		ev.Links = []Link{{Href: u, Text: "Answer the question"}}
	}
	return ev
}

// ResolveEvent closes q's alert and says how the question ended ("Answered
// by maria on Slack: Allow"). PagerDuty reads only routing_key, dedup_key
// and event_action of a resolve; the outcome goes in payload.summary, where
// PagerDuty's alert log shows the event.
func ResolveEvent(q *domain.Question, p Profile) Event {
	return Event{RoutingKey: p.RoutingKey, EventAction: "resolve", DedupKey: q.ID,
		Payload: &Payload{Summary: domain.Shorten(oneLine(Outcome(q)), MaxSummary), Source: "askbridge", Severity: orDefault(p.Severity)}}
}

func orDefault(sev string) string {
	if sev == "" {
		return "critical"
	}
	return sev
}

// Outcome is how q ended, with the surface it was answered on.
func Outcome(q *domain.Question) string {
	line := domain.OutcomeLine(q)
	if line == "" {
		return "The question ended"
	}
	if q.RespondedBy != nil && q.RespondedBy.Platform != "" && q.RespondedBy.Platform != "system" {
		on := " " + domain.OnPlatform(q.RespondedBy.Platform)
		if i := strings.Index(line, ":"); i > 0 && q.Status == domain.StatusAnswered {
			return line[:i] + on + line[i:]
		}
		return line + on
	}
	return line
}
