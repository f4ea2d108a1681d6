package lifecycle

import (
	"context"
	"encoding/json"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// Clock tells the time. Tests inject their own so expiry never sleeps.
type Clock interface{ Now() time.Time }

// SystemClock is the real clock, in UTC.
type SystemClock struct{}

// Now implements Clock.
func (SystemClock) Now() time.Time { return time.Now().UTC() }

// CreateResult is the outcome of Store.Create.
type CreateResult struct {
	Question *domain.Question
	// Reattached: an existing question (same idempotency key, or identical
	// items in the same run, pending or answered within ReattachWindow) was
	// returned instead of creating one. Nothing new was posted.
	Reattached bool
	// Superseded is the run's earlier pending question, cancelled with
	// reason "superseded" in the same atomic step, if there was one.
	Superseded *domain.Question
}

// Transition moves a pending question to a final state.
type Transition struct {
	To           domain.Status
	Answer       *domain.Answer
	By           *domain.Person
	CancelReason string
	// CancelNote is the free text given with a cancel, kept on the record.
	CancelNote string
	At         time.Time
	// RequirePausedRun refuses the transition with ERunNotPaused unless the
	// question's run is paused (webhook-mode answers).
	RequirePausedRun bool
	// ContinuationRunID, when set, creates that continuation run if the
	// question's run is paused, and marks the paused run resumed.
	ContinuationRunID string
	// DeliveryID, when set, enqueues a resume webhook delivery with that id
	// in the same atomic step.
	DeliveryID string
	// Retention is how long the final record is kept.
	Retention time.Duration
	// Defaulted marks an answer given by on_timeout.
	Defaulted bool
}

// Ref names a question in a project.
type Ref struct{ ProjectID, ID string }

// Delivery is one resume webhook to send.
type Delivery struct {
	ID         string    `json:"id"` // X-Askbridge-Delivery, the same on every retry
	ProjectID  string    `json:"project_id"`
	QuestionID string    `json:"question_id"`
	Event      string    `json:"event"`
	Attempts   int       `json:"attempts"`
	CreatedAt  time.Time `json:"created_at"`
	// Lease names the claim that holds the delivery: a replica whose lease
	// ran out (and was taken over) can no longer renew or reschedule it.
	Lease string `json:"-"`
	// Question is the record as it was when the delivery was enqueued, so a
	// delivery outlives its question's retention. Nil for deliveries
	// enqueued by an older release (read the question from the store).
	Question *domain.Question `json:"-"`
	// Expired: the delivery's record was gone when it was claimed (it was
	// kept less long than the bridge was down); it can only be reported.
	Expired bool `json:"-"`
	// Payload is a sender's own data for a delivery it queued with
	// EnqueueDelivery (the recipient, which mail, which step of a page):
	// kept with the delivery and handed back by ClaimDeliveries, opaque to
	// the queue. Empty for resume webhooks.
	Payload json.RawMessage `json:"-"`
}

// The store is described by its roles: each consumer asks for the
// narrowest one it needs (the resume deliverer for DeliveryQueue and
// QuestionReader, a parked long-poll for QuestionReader and EventLog), and
// Store embeds them all for the Router and the one implementation (package
// store: embedded, standalone Redis, Sentinel, Cluster; store/storetest is
// the conformance suite every form passes).

// QuestionReader reads question records.
type QuestionReader interface {
	// Locate returns the project of a question id (chat interactions carry
	// only the id). ENotFound if unknown.
	Locate(ctx context.Context, id string) (project string, err error)
	// Get returns a question. ENotFound if it does not exist in project.
	Get(ctx context.Context, project, id string) (*domain.Question, error)
	// List returns a project's questions oldest first, only those with
	// status when status is not empty (at most limit, newest kept: for a
	// view of the latest ones; ListPage reaches every question).
	List(ctx context.Context, project string, status domain.Status, limit int) ([]*domain.Question, error)
	// ListPage returns one page of a project's questions oldest first (see
	// ListQuery), and the cursor of the next page. Paging from "" to the
	// last page lists every question that stayed in the list meanwhile
	// exactly once, whatever ends or is created between pages. EInvalid
	// (field cursor) for a cursor no page gave.
	ListPage(ctx context.Context, project string, q ListQuery) (ListPage, error)
	// Deadlines returns the ids and deadlines of up to limit of a
	// project's pending questions, nearest deadline first (ties by id),
	// and how many questions are pending in all.
	Deadlines(ctx context.Context, project string, limit int) ([]Deadline, int, error)
	// History returns the answered questions of project asked under key
	// (domain.HistoryKey of their agent and items), newest answer first
	// (under one retention), at most limit. Its index lives as long as the
	// records it names.
	History(ctx context.Context, project, key string, limit int) ([]*domain.Question, error)
	// RunQuestions returns every question of a run in creation order.
	RunQuestions(ctx context.Context, project, run string) ([]*domain.Question, error)
	// Projects lists every project that has asked a question.
	Projects(ctx context.Context) ([]string, error)
}

// Questions keeps question records and moves them through their states.
// Every state change is one atomic step, whatever the number of replicas.
type Questions interface {
	QuestionReader
	// Create stores q (status pending) and indexes it. It returns an
	// existing question instead when q re-asks (see CreateResult), and
	// supersedes the run's earlier pending question in the same step.
	Create(ctx context.Context, q *domain.Question) (CreateResult, error)
	// AttachCopy records a posted copy (or a failed post) on the question.
	AttachCopy(ctx context.Context, project, id string, t domain.Target) error
	// Transition moves a pending question to a final state atomically:
	// the first caller wins; later ones get the StatusError of the record.
	Transition(ctx context.Context, project, id string, tr Transition) (*domain.Question, error)
	// Vote records v on an approval that needs required votes for one
	// option; a person's later vote replaces their earlier one. When the
	// vote makes required (or is a veto), the question is answered with tr
	// in the same atomic step and resolved is true. Errors as Transition.
	Vote(ctx context.Context, project, id string, v domain.Vote, required int, veto bool, tr Transition) (q *domain.Question, resolved bool, err error)
	// MarkRead marks the question's notification read.
	MarkRead(ctx context.Context, project, id string) (*domain.Question, error)
	// Remark adds r to a pending question's remarks (domain.AddRemark) in
	// one atomic step, and returns the question as it now is and whether r
	// changed it (false when the same remark is there already). ENotFound
	// if unknown; a question no longer pending is left as it is, with its
	// StatusError.
	Remark(ctx context.Context, project, id string, r domain.Remark) (q *domain.Question, changed bool, err error)
}

// Schedule finds questions whose deadline or escalation step has come,
// and moves escalation on exactly once.
type Schedule interface {
	// Due returns pending questions whose deadline is at or before now.
	Due(ctx context.Context, now time.Time, limit int) ([]Ref, error)
	// DueEscalations returns pending questions whose next escalation step
	// is at or before now.
	DueEscalations(ctx context.Context, now time.Time, limit int) ([]Ref, error)
	// Escalate moves a pending question from escalation level to level+1
	// exactly once across replicas (next: when the following step is due,
	// zero if none). It reports whether this caller did it.
	Escalate(ctx context.Context, project, id string, level int, next time.Time, detail string, at time.Time) (bool, error)
}

// Runs keeps agent runs.
type Runs interface {
	// Run returns a run. ENotFound if unknown.
	Run(ctx context.Context, project, id string) (*domain.Run, error)
	// PauseRun marks a running run paused (creating it if unknown).
	PauseRun(ctx context.Context, project, id, agentID string, at time.Time) (*domain.Run, error)
}

// EventLog is a project's event stream, readable from any replica, and
// the watching that wakes waiters when it moves.
type EventLog interface {
	// Events returns up to limit events after the stream id after ("" =
	// from the start, "$" = none), oldest first.
	Events(ctx context.Context, project, after string, limit int) ([]domain.Event, error)
	// LastEventID returns the id of the project's newest event ("0-0" when
	// there is none), to follow the stream from now on.
	LastEventID(ctx context.Context, project string) (string, error)
	// AppendEvent adds an event that is not part of a question transition.
	AppendEvent(ctx context.Context, ev domain.Event) error
	// Watch wakes the returned channel (buffered, coalescing) whenever an
	// event for the question id occurs, on any replica; id "" watches the
	// whole project. Call stop to release it.
	Watch(project, id string) (wake <-chan struct{}, stop func())
	// WatchFinal is Watch with a callback, for a caller that parks many
	// waits without a goroutine each and needs the question once it is
	// final: f gets the final record when the wake-up carries it, nil for
	// any other wake-up (read the question back). f runs on the replica's
	// subscriber loop and must not block, nor modify the record (it is
	// shared with the question's other watchers).
	WatchFinal(project, id string, f func(q *domain.Question)) (stop func())
}

// AuditLog is a project's audit trail.
type AuditLog interface {
	// AppendAudit adds an entry to the project's audit trail.
	AppendAudit(ctx context.Context, e domain.AuditEntry) error
	// Audit returns a project's audit trail oldest first, only entries of
	// question when it is not empty.
	Audit(ctx context.Context, project, question string, limit int) ([]domain.AuditEntry, error)
}

// DeliveryQueue holds the resume webhooks to send, leased to one replica
// at a time.
type DeliveryQueue interface {
	// ClaimDeliveries leases up to max due resume deliveries for lease,
	// taking from every project in turn; each claim counts an attempt.
	ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, max int) ([]Delivery, error)
	// RenewDeliveries extends the leases of claimed deliveries to until and
	// returns the ids whose lease was lost (taken over by another claim).
	RenewDeliveries(ctx context.Context, ds []Delivery, until time.Time) (lost []string, err error)
	// FinishDelivery removes a delivery for good (sent or failed).
	FinishDelivery(ctx context.Context, d Delivery) error
	// RetryDelivery schedules the delivery's next attempt at at and records
	// d.Attempts as the attempts made (lower it for a delivery put back
	// unsent). Nothing changes if d's lease was lost.
	RetryDelivery(ctx context.Context, d Delivery, at time.Time) error
	// EnqueueDelivery queues d (ID, ProjectID, QuestionID, Event, Payload)
	// to be sent from d.CreatedAt on (the caller's clock; now when zero), with a snapshot of the question as it is
	// stored now, through the same leases, retries and takeover as a
	// resume webhook. It queues an id once: it reports false and changes
	// nothing when a delivery with d.ID is queued, or was queued within
	// the time an undelivered delivery is kept, so a repeated ask, a
	// re-attach or two replicas send a page or a mail once. Event names
	// the sender: "<sender>.<kind>" (pagerduty.trigger, email.send).
	EnqueueDelivery(ctx context.Context, d Delivery) (queued bool, err error)
	// QueueOnEnd queues d (as EnqueueDelivery, once per d.ID) in the same
	// atomic step as the one that makes d.QuestionID's question final —
	// answered, cancelled (dismissed, superseded) or expired, whichever
	// path and replica finalizes it — due delay after that step's time,
	// with the final question. A question already final queues d now (due
	// delay after d.CreatedAt, or after now when zero). queued is false
	// when d.ID was already registered or queued. ENotFound if the
	// question does not exist. It closes the gap between a transition and
	// a delivery queued after it: a replica dying in between loses nothing.
	QueueOnEnd(ctx context.Context, d Delivery, delay time.Duration) (queued bool, err error)
}

// Scratch keeps short-lived helpers of chat interactions.
type Scratch interface {
	// PutDraft keeps one person's partial selections on a question (chat
	// platforms without form state) for ttl, readable from any replica.
	PutDraft(ctx context.Context, project, id, person string, draft map[string][]string, ttl time.Duration) error
	// GetDraft returns the draft, or an empty map.
	GetDraft(ctx context.Context, project, id, person string) (map[string][]string, error)
	// Once reports true the first time key is seen within ttl (dedupe of
	// platform retries such as Slack's event_id).
	Once(ctx context.Context, key string, ttl time.Duration) (bool, error)
	// Marked reports whether Once has seen key within its ttl, without
	// marking it (an ended web session).
	Marked(ctx context.Context, key string) (bool, error)
}

// Retention drops what has outlived retention when asked (records, index
// entries, old events and audit entries); the Router's sweeper asks on
// every cycle, on every replica.
type Retention interface {
	// Trim drops what expired by now and reports how many entries went.
	Trim(ctx context.Context, now time.Time) (int, error)
}

// Store is every role together: what the Router needs.
type Store interface {
	Questions
	Schedule
	Runs
	EventLog
	AuditLog
	DeliveryQueue
	Scratch
	Retention
	// Ping checks the store is reachable.
	Ping(ctx context.Context) error
}

// Channel is one surface that posts copies of a question where people
// work (a chat platform): the whole of what the Router asks of it, with
// one optional ability (PersonResolver) below. A failure no retry can fix
// (the message or channel is gone, the bot lost access, a platform limit)
// is returned wrapped with Permanent, so the Router does not retry it;
// every other error is taken as transient (channelerr.go). Every surface
// passes the conformance suites of adapters/channeltest.
type Channel interface {
	// Platform is the name used in targets ("slack", "discord").
	Platform() string
	// Post posts a copy of q on t and returns t with its references
	// (message ts or id, url) filled in.
	Post(ctx context.Context, q *domain.Question, t domain.Target) (domain.Target, error)
	// Update re-renders a posted copy of a question still pending (vote
	// tallies, responders added by escalation).
	Update(ctx context.Context, q *domain.Question, t domain.Target) error
	// Remind reminds the responders on a posted copy (in its thread,
	// mentioning them).
	Remind(ctx context.Context, q *domain.Question, t domain.Target) error
	// Finish updates a posted copy to q's final state: controls removed or
	// disabled, one line with the outcome.
	Finish(ctx context.Context, q *domain.Question, t domain.Target) error
}

// PersonResolver is the optional ability of a Channel that can fill in a
// person's groups on its platform (Slack user groups) as they matter to
// q's responders. The Router uses it for answers an operator relays for a
// person, so they pass the same check as that person's own click; on a
// Channel without it only responders naming the person's user id admit
// them. The Router looks for it once, when the Channel is added.
type PersonResolver interface {
	ResolvePerson(ctx context.Context, q *domain.Question, p domain.Person) domain.Person
}

// BatchChannel is the optional ability of a Channel that shows the
// approvals of one batch (domain.Batch) as one message per target: a
// section per call with its own controls, and Allow all / Deny all for
// the batch. The Router posts a batch's message once per target, with the
// first call of the batch it posts there; a later call joining the batch
// re-renders that message (UpdateBatch) instead of posting one of its
// own, and so does every decision, withdrawal or vote on any call. Every
// call's copy on the target points at the batch message (its Refs[BatchRef]
// names the batch), so any replica finds it. b holds the calls asked on
// t, in the order they were asked, each as it is now: pending ones with
// their controls, the others with their outcome; when none is pending the
// message is finished. A Channel without the ability posts one message
// per call. The Router looks for it once, when the Channel is added.
type BatchChannel interface {
	// PostBatch posts the batch's message on t and returns t with its
	// references filled in, as Post does.
	PostBatch(ctx context.Context, b *domain.Batch, t domain.Target) (domain.Target, error)
	// UpdateBatch re-renders the batch's message posted on t.
	UpdateBatch(ctx context.Context, b *domain.Batch, t domain.Target) error
}

// Observer is told of every transition out of pending that this replica
// makes (answered, cancelled, expired), after the store took it: metrics
// count it, the resume deliverer sends its webhook at once. Transitioned
// must not block; a replica sees only its own transitions (the event log
// carries every replica's).
type Observer interface {
	Transitioned(q *domain.Question)
}

// ObserverFunc is a function as an Observer.
type ObserverFunc func(q *domain.Question)

// Transitioned calls f.
func (f ObserverFunc) Transitioned(q *domain.Question) { f(q) }
