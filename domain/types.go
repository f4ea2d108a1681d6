package domain

import (
	"encoding/json"
	"strings"
	"time"
)

// Status is the state of a question (docs/openapi.yaml).
type Status string

// Question states. Only pending may change, and only once.
const (
	StatusPending   Status = "pending"
	StatusAnswered  Status = "answered"
	StatusCancelled Status = "cancelled"
	StatusExpired   Status = "expired"
)

// Final reports whether s is a terminal state.
func (s Status) Final() bool {
	return s == StatusAnswered || s == StatusCancelled || s == StatusExpired
}

// Cancel reasons.
const (
	CancelUser       = "user"       // a person dismissed the question
	CancelAgent      = "agent"      // the runtime withdrew it
	CancelSuperseded = "superseded" // a newer question for the same run
)

// MaxCancelNote bounds the free-text note of a cancel, in characters.
const MaxCancelNote = 500

// Kinds of question.
const (
	KindQuestion = "question"
	KindApproval = "approval"
)

// RunStatus is the state of an agent run.
type RunStatus string

// Run states.
const (
	RunRunning RunStatus = "running"
	RunPaused  RunStatus = "paused"
	RunResumed RunStatus = "resumed"
)

// Option is one choice of an item.
type Option struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
	Value       string `json:"value"`
	Recommended bool   `json:"recommended,omitempty"`
	// Veto resolves an approval (approvals_required ≥ 2) at its first vote.
	Veto bool `json:"veto,omitempty"`
	// Default pre-selects the option, and answers with it on timeout when
	// on_timeout.use_defaults is set.
	Default bool   `json:"default,omitempty"`
	Image   *Image `json:"image,omitempty"`
}

// Item is one question asked inside an agent question. No options means
// open-ended (free text).
type Item struct {
	Question    string   `json:"question"`
	Header      string   `json:"header,omitempty"`
	MultiSelect bool     `json:"multiSelect"`
	Options     []Option `json:"options"`
	// ShowIf asks the item only when an earlier item's answer matches.
	ShowIf *ShowIf `json:"show_if,omitempty"`
	// Other holds the rules free text must satisfy.
	Other *FreeTextRules `json:"other,omitempty"`
	Image *Image         `json:"image,omitempty"`
}

// OpenEnded reports whether the item takes free text only.
func (it Item) OpenEnded() bool { return len(it.Options) == 0 }

// Target is a chat place a question is posted to. Once posted, it also holds
// the platform's references to the copy, so any replica can edit it.
type Target struct {
	Platform string `json:"platform"`
	Channel  string `json:"channel"`
	ThreadTS string `json:"thread_ts,omitempty"`
	// To lists the addresses of an email target ({platform: email, to:
	// [...]}). CleanTarget folds it into Channel (addresses joined with
	// ","), which is what the store keeps and Key names.
	To []string `json:"to,omitempty"`
	// Set once the copy is posted.
	MessageTS string `json:"message_ts,omitempty"` // Slack ts or Discord message id
	URL       string `json:"url,omitempty"`
	// Refs carries further platform references (e.g. a Discord interaction
	// token while it is valid). Adapters own its keys.
	Refs  map[string]string `json:"refs,omitempty"`
	Error string            `json:"error,omitempty"` // why posting failed, if it did

	// Chat and Thread are Telegram's names for Channel and ThreadTS in a
	// request ({platform: telegram, chat, thread}); Resolved moves them
	// there, so records never carry them.
	Chat   string   `json:"chat,omitempty"`
	Thread ThreadID `json:"thread,omitempty"`
}

// Key names the target independently of its posted copy.
func (t Target) Key() string { return t.Platform + ":" + t.Channel + ":" + t.ThreadTS }

// Responders lists who may answer. Empty means anyone who can see the
// question. In JSON it is one object: users, exclude_requester, and one
// field per kind of group (responders_json.go).
type Responders struct {
	Users []string // "<platform>:<id>", e.g. "slack:U0123"
	// Groups holds responder groups by kind. A surface registers the kind
	// its people's groups are (PlatformInfo.GroupKind, e.g.
	// "slack_usergroups" for Slack user groups, "discord_roles" for
	// Discord roles); the domain names none.
	Groups           map[string][]string
	ExcludeRequester bool
}

// Empty reports whether no restriction is configured.
func (r Responders) Empty() bool {
	if len(r.Users) > 0 {
		return false
	}
	for _, g := range r.Groups {
		if len(g) > 0 {
			return false
		}
	}
	return true
}

// Group returns the groups of one kind.
func (r Responders) Group(kind string) []string { return r.Groups[kind] }

// WithGroup returns r with ids as its groups of kind (none: the kind goes).
func (r Responders) WithGroup(kind string, ids ...string) Responders {
	groups := make(map[string][]string, len(r.Groups)+1)
	for k, v := range r.Groups {
		groups[k] = v
	}
	if len(ids) == 0 {
		delete(groups, kind)
	} else {
		groups[kind] = ids
	}
	if len(groups) == 0 {
		groups = nil
	}
	r.Groups = groups
	return r
}

// OnTimeout answers a question that reaches its deadline unanswered.
type OnTimeout struct {
	Answer string `json:"answer,omitempty"` // an option's label or value (free text for open-ended)
	// UseDefaults answers every asked item with its default options.
	UseDefaults bool `json:"use_defaults,omitempty"`
}

// EscalationStep is one step of a route's escalation: after a delay from
// the question's creation, remind the responders, and/or post a copy on
// further targets and let further people answer.
type EscalationStep struct {
	After      Duration    `json:"after"`
	Remind     bool        `json:"remind,omitempty"`
	Targets    []Target    `json:"targets,omitempty"`
	Responders *Responders `json:"responders,omitempty"`
	// Page wakes people through a pager if nobody has answered by then.
	Page *Page `json:"page,omitempty"`
}

// Page says which pager wakes people for a question and with which of its
// settings. It names the settings; the secrets they hold (a routing key)
// stay with the pager and never enter a question record.
type Page struct {
	// Pager names the pager ("pagerduty").
	Pager string `json:"pager"`
	// Profile names one of the pager's page settings (the configuration
	// names them after the route and step).
	Profile string `json:"profile"`
}

// Vote is one person's choice on an approval that needs several.
type Vote struct {
	By    Person    `json:"by"`
	Label string    `json:"label"`
	At    time.Time `json:"at"`
}

// Person identifies who answered or tried to.
type Person struct {
	Platform string `json:"platform"`
	ID       string `json:"id"`
	Name     string `json:"name,omitempty"`
	// Via is the operator that relayed this person's answer through the API
	// (operators[].act_for); empty when the person acted directly.
	Via string `json:"via,omitempty"`
	// Groups the person belongs to on that platform (Slack user group ids,
	// Discord role ids), filled by the adapter. Not stored.
	Groups []string `json:"-"`
}

// String renders the person for humans.
func (p Person) String() string {
	s := p.Platform + ":" + p.ID
	if p.Name != "" {
		s = p.Name
	}
	if p.Via != "" {
		s += " (relayed by " + p.Via + ")"
	}
	return s
}

// Key is the person's identity as responders and votes name it:
// "<platform>:<id>".
func (p Person) Key() string { return p.Platform + ":" + p.ID }

// Resume configures webhook mode.
type Resume struct {
	URL string `json:"url,omitempty"`
	// Secret overrides the bridge's webhook secret for this question. It is
	// stored but never returned by the API.
	Secret string `json:"-"`
}

// Question is the record of one ask_user call (docs/openapi.yaml, Question).
type Question struct {
	ID           string              `json:"id"`
	ProjectID    string              `json:"project_id"`
	RunID        string              `json:"run_id"`
	AgentID      string              `json:"agent_id"`
	AgentName    string              `json:"agent_name,omitempty"`
	Kind         string              `json:"kind"`
	Status       Status              `json:"status"`
	Questions    []Item              `json:"questions"`
	Context      string              `json:"context,omitempty"`
	ContextImage *Image              `json:"context_image,omitempty"`
	Targets      []Target            `json:"targets"`
	Responders   Responders          `json:"responders"`
	Answers      map[string]string   `json:"answers,omitempty"`
	Selections   map[string][]string `json:"selections,omitempty"`
	Response     string              `json:"response,omitempty"`
	Skipped      []Skipped           `json:"skipped,omitempty"`   // items not asked, because their condition was not met
	FreeText     []string            `json:"free_text,omitempty"` // items (their text) answered in free text, not by an option; set on every record read
	RespondedBy  *Person             `json:"responded_by,omitempty"`
	RespondedAt  *time.Time          `json:"responded_at,omitempty"`
	CancelReason string              `json:"cancel_reason,omitempty"`
	CancelNote   string              `json:"cancel_note,omitempty"` // free text given with the cancel
	Reason       string              `json:"reason,omitempty"`      // the note given with Deny, exactly as typed (the answer is the Deny option)
	CreatedAt    time.Time           `json:"created_at"`
	UpdatedAt    time.Time           `json:"updated_at"`
	ExpiresAt    time.Time           `json:"expires_at"`
	ResumedRunID string              `json:"resumed_run_id,omitempty"`
	Resume       *Resume             `json:"resume,omitempty"`
	Route        string              `json:"route,omitempty"`
	Read         bool                `json:"-"` // notification read flag
	// On-call approvals.
	RequestedBy       string           `json:"requested_by,omitempty"` // "<platform>:<id>" of the person the agent acts for
	ApprovalsRequired int              `json:"approvals_required,omitempty"`
	Votes             []Vote           `json:"votes,omitempty"`
	OnTimeout         *OnTimeout       `json:"on_timeout,omitempty"`
	Defaulted         bool             `json:"defaulted,omitempty"` // answered by on_timeout
	Escalation        []EscalationStep `json:"escalation,omitempty"`
	EscalationLevel   int              `json:"escalation_level,omitempty"` // steps done
	// Remarks are what every copy of a pending question says happened to
	// it elsewhere (its page acknowledged), oldest first (domain.AddRemark).
	Remarks []Remark `json:"remarks,omitempty"`
	// History is what was answered the last few times the same agent asked
	// the same items, newest first, taken when the question was asked.
	History []PastAnswer `json:"history,omitempty"`
	// IdempotencyKey and Fingerprint support re-attaching repeated asks.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	Fingerprint    string `json:"-"`
	// BatchID names the batch of an approval: the approvals of one run
	// asked within BatchWindow of each other, decided together or one by
	// one (domain/batch.go). It is the id of the batch's first approval;
	// the store sets it. Empty on questions.
	BatchID string `json:"batch_id,omitempty"`
	// BatchWindow is how close to the run's latest approval a new one must
	// come to join its batch (0: a batch of its own), or, with BatchID set
	// on create, nothing: that batch is joined. Read by the store on create.
	BatchWindow time.Duration `json:"-"`
	// Approvals of a tool call (domain/action.go): the action asked about,
	// and once answered the decision the agent reads, the edited action if
	// a person changed the arguments, and the index of the chosen "always
	// allow" suggestion.
	Action       *Action       `json:"action,omitempty"`
	Decision     *Decision     `json:"decision,omitempty"`
	EditedAction *EditedAction `json:"edited_action,omitempty"`
	AppliedRule  *int          `json:"applied_rule,omitempty"`
	// TraceParent and TraceState are the W3C trace context of the ask
	// (internal/tracing): the answer's and the resume webhook's spans join
	// that trace. Kept with the record, never shown by the API.
	TraceParent string `json:"-"`
	TraceState  string `json:"-"`
}

// WebhookMode reports whether the run resumes through a webhook.
func (q *Question) WebhookMode() bool { return q.Resume != nil && q.Resume.URL != "" }

// Answer is a parsed, validated answer in the three forms of docs/openapi.yaml.
type Answer struct {
	Answers    map[string]string   `json:"answers"`
	Selections map[string][]string `json:"selections"`
	Response   string              `json:"response"`
	// Skipped lists the items not asked (their condition was not met).
	Skipped []Skipped `json:"skipped,omitempty"`
	// Reason is the note an approval was denied with, exactly as typed.
	Reason string `json:"reason,omitempty"`
	// Set on an approval with an action (domain/decide.go); stored with the
	// result.
	Decision    *Decision     `json:"-"`
	Edited      *EditedAction `json:"-"`
	AppliedRule *int          `json:"-"`
}

// Run is one execution of an agent.
type Run struct {
	ID          string    `json:"id"`
	ProjectID   string    `json:"project_id"`
	AgentID     string    `json:"agent_id"`
	Status      RunStatus `json:"status"`
	ResumedFrom string    `json:"resumed_from,omitempty"`
	ResumedBy   string    `json:"resumed_run_id,omitempty"` // the continuation, once resumed
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// Event types on the project event stream.
const (
	EventCreated      = "question.created"
	EventAnswered     = "question.answered"
	EventCancelled    = "question.cancelled"
	EventExpired      = "question.expired"
	EventRunPaused    = "run.paused"
	EventRunResumed   = "run.resumed"
	EventResumeFailed = "resume.failed"
	EventPostFailed   = "question.post_failed"
)

// Event is one entry of a project's event stream.
type Event struct {
	ID         string          `json:"id"` // stream id, usable as Last-Event-ID
	Type       string          `json:"type"`
	ProjectID  string          `json:"project_id"`
	QuestionID string          `json:"question_id,omitempty"`
	RunID      string          `json:"run_id,omitempty"`
	At         time.Time       `json:"at"`
	Data       json.RawMessage `json:"data,omitempty"`
}

// EventForStatus names the event of a transition into s.
func EventForStatus(s Status) string {
	switch s {
	case StatusAnswered:
		return EventAnswered
	case StatusCancelled:
		return EventCancelled
	case StatusExpired:
		return EventExpired
	}
	return EventCreated
}

// AuditEntry is one line of a project's audit trail. Types: asked, posted,
// post_failed, refused, voted, answered, expired, cancelled, resumed,
// reminded, escalated, webhook.delivered, webhook.failed.
type AuditEntry struct {
	ID         string    `json:"id"`
	Type       string    `json:"type"`
	ProjectID  string    `json:"project_id"`
	QuestionID string    `json:"question_id,omitempty"`
	RunID      string    `json:"run_id,omitempty"`
	By         *Person   `json:"by,omitempty"`
	Detail     string    `json:"detail,omitempty"`
	At         time.Time `json:"at"`
}

// Notification is the inbox entry of a question (docs/openapi.yaml).
type Notification struct {
	ID                  string               `json:"id"`
	Type                string               `json:"type"`
	Importance          string               `json:"importance"`
	Title               string               `json:"title"`
	Message             string               `json:"message"`
	SourceType          string               `json:"sourceType"`
	SourceID            string               `json:"sourceID"`
	RelatedResourceType string               `json:"relatedResourceType"`
	RelatedResourceID   string               `json:"relatedResourceID"`
	Actions             []NotificationAction `json:"actions"`
	ActionURL           string               `json:"actionURL"`
	Read                bool                 `json:"read"`
	ActionStatus        string               `json:"actionStatus"`
	CreatedAt           time.Time            `json:"created_at"`
}

// NotificationAction is one option offered by a notification.
type NotificationAction struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// AgentLabel names the asking agent for people: its name, else its id,
// else "An agent".
func (q *Question) AgentLabel() string {
	switch {
	case q.AgentName != "":
		return q.AgentName
	case q.AgentID != "":
		return q.AgentID
	}
	return "An agent"
}

// NotificationFor derives the notification of a question.
func NotificationFor(q *Question) Notification {
	name := q.AgentLabel()
	n := Notification{
		ID: q.ID, Type: "agent_question", Importance: "important",
		Title:      "Agent question from " + name,
		SourceType: "agent_run", SourceID: q.RunID,
		RelatedResourceType: "agent_question", RelatedResourceID: q.ID,
		Actions:   []NotificationAction{},
		ActionURL: "/questions/" + q.ID,
		Read:      q.Read || q.Status == StatusAnswered,
		CreatedAt: q.CreatedAt,
	}
	if len(q.Questions) > 0 {
		n.Message = q.Questions[0].Question
		for _, o := range q.Questions[0].Options {
			n.Actions = append(n.Actions, NotificationAction{Label: o.Label, Value: o.Value})
		}
	}
	switch q.Status {
	case StatusAnswered:
		n.ActionStatus = "completed"
	case StatusExpired:
		n.ActionStatus = "expired"
	case StatusCancelled:
		n.ActionStatus = "cancelled"
	default:
		n.ActionStatus = "pending"
	}
	return n
}

// Public returns a copy of q safe to show outside the bridge: platform
// secrets kept in copies' refs (interaction tokens) are dropped.
func (q *Question) Public() *Question {
	c := *q
	c.Targets = make([]Target, len(q.Targets))
	for i, t := range q.Targets {
		t.Refs = nil
		c.Targets[i] = t
	}
	return &c
}

// Places names where the question was posted, for people and agents:
// "Slack C0123, Discord channel 1122", or "the web inbox" when no chat copy
// was posted.
func (q *Question) Places() string {
	var where []string
	for _, t := range q.Targets {
		if t.Error == "" {
			where = append(where, TargetName(t))
		}
	}
	if len(where) == 0 {
		return "the web inbox"
	}
	return strings.Join(where, ", ")
}
