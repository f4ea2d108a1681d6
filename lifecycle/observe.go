package lifecycle

import (
	"context"
	"strings"
	"time"
)

// Steps a StepObserver is told of.
const (
	StepReminder   = "reminder"   // responders reminded on one copy
	StepEscalation = "escalation" // an escalation step ran (once across replicas)
)

// Results of a person's interaction, as a StepObserver is told of them.
const (
	InteractionAnswered = "answered" // the answer was recorded
	InteractionVoted    = "voted"    // a vote was counted; the approval needs more
	InteractionStale    = "stale"    // the question was no longer pending
	InteractionRefused  = "refused"  // refused; the reason is the error code
)

// StepObserver is the optional ability of an Observer to be told of what
// happens to questions between their transitions (metrics count it). The
// Router looks for it once, when it is built. Its methods must not block.
type StepObserver interface {
	// Stepped reports a lifecycle step (StepReminder, StepEscalation) on a
	// question of project.
	Stepped(project, step string)
	// Interacted reports a person's answer, vote or click on platform:
	// result is one of the Interaction… values, reason the error code of
	// a refusal ("" otherwise).
	Interacted(platform, result, reason string)
}

// Backlog is what is waiting in one project, across every replica.
type Backlog struct {
	ProjectID string
	// Pending is the number of pending questions.
	Pending int
	// Deliveries is the number of resume webhooks queued (due, leased or
	// waiting for a retry).
	Deliveries int
	// OldestDelivery is when the oldest of them was enqueued (zero when
	// there is none).
	OldestDelivery time.Time
	// BySender counts the queued deliveries (resume webhooks and a
	// surface's or pager's pages and mails alike) by DeliverySender of
	// their event: "webhook", "email", "pagerduty", … A store looks at
	// StatsScan of a project's queued deliveries at most; the rest, in an
	// outage already, are counted under SenderUnscanned. Nil when nothing
	// is queued.
	BySender map[string]int
}

// StatsScan bounds how many of a project's queued deliveries one read of
// the backlog looks at (for the oldest and the count by sender).
const StatsScan = 1000

// Senders of queued deliveries a Backlog names besides the senders' own.
const (
	SenderWebhook   = "webhook"   // resume webhooks (question.*, run.* events)
	SenderUnscanned = "unscanned" // queued beyond the StatsScan looked at
)

// DeliverySender is who sends a queued delivery of event: SenderWebhook
// for a resume webhook (question.answered, run.paused, …), else the
// sender that queued it, the part of its event before the dot
// (email.send: email; pagerduty.trigger: pagerduty).
func DeliverySender(event string) string {
	name, _, ok := strings.Cut(event, ".")
	if !ok || name == "" || name == "question" || name == "run" {
		return SenderWebhook
	}
	return name
}

// Waiters counts this replica's callers waiting on one project's store
// wake-ups.
type Waiters struct {
	ProjectID string
	// Question is the number of waits on one question (long-polls, MCP
	// calls, answers waiting for a run to pause).
	Question int
	// Stream is the number of waits on the whole project (SSE and
	// WebSocket streams).
	Stream int
}

// Stats is the optional ability of a Store to report its queues and
// waiters, for the bridge's gauges; with a store without it those gauges
// are not exported. Backlog reads the store, so callers bound it with ctx
// and call it no more often than metrics are scraped.
type Stats interface {
	// Backlog returns each project's pending questions and queued resume
	// deliveries, projects in name order.
	Backlog(ctx context.Context) ([]Backlog, error)
	// Waiters returns this replica's waiters by project (projects with
	// none left out), in name order.
	Waiters() []Waiters
}
