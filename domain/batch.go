package domain

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Approvals of parallel tool calls (docs/approvals.md, "Parallel tool
// calls: batches"):
//
//   - a question (kind "question", ask_user) supersedes the run's pending
//     question: one conversation asks one thing at a time;
//   - an approval never supersedes anything and is never superseded: it is
//     keyed by its tool call (action.call_id, else idempotency_key, else
//     its items and action digest), asking about the same call again
//     re-attaches to its record, and approvals of distinct calls coexist;
//   - the approvals of a run asked within a window of each other (sliding:
//     each new one measured from the latest) form a batch, named by its
//     first approval's id (Question.BatchID); a batch is decided call by
//     call or all at once (Allow all / Deny all), each call's decision its
//     own record.

// Batch limits and defaults.
const (
	// DefaultBatchWindow is how close to the run's latest approval a new
	// one must come to join its batch, unless the route says otherwise.
	DefaultBatchWindow = 1500 * time.Millisecond
	// MaxBatchWindow bounds a route's batch_window.
	MaxBatchWindow = time.Minute
	// MaxBatchApprovals bounds the approvals asked in one batch request.
	MaxBatchApprovals = 50
)

// Batch decisions.
const (
	DecideAllow = "allow"
	DecideDeny  = "deny"
)

const callKeyPrefix = "call:"

// CallKey is the re-ask key (Question.Fingerprint) of an approval that
// names its tool call: the call id alone, so the same call asked again
// with other words still finds its record.
func CallKey(callID string) string { return callKeyPrefix + callID }

// IsCallKey reports whether a re-ask key names a tool call (CallKey): its
// record is re-attached whatever became of it, as an idempotency key's.
func IsCallKey(fp string) bool { return strings.HasPrefix(fp, callKeyPrefix) }

// BatchRequest asks several approvals of one run at once (POST
// …/approval-batches): what they share at the top, one entry per tool
// call in Approvals.
type BatchRequest struct {
	RunID       string         `json:"run_id,omitempty"`
	AgentID     string         `json:"agent_id,omitempty"`
	AgentName   string         `json:"agent_name,omitempty"`
	ParentRunID string         `json:"parent_run_id,omitempty"`
	Context     string         `json:"context,omitempty"`
	Targets     []Target       `json:"targets,omitempty"`
	Route       string         `json:"route,omitempty"`
	Responders  *Responders    `json:"responders,omitempty"`
	Timeout     *Duration      `json:"timeout,omitempty"`
	Resume      *ResumeRequest `json:"resume,omitempty"`
	RequestedBy string         `json:"requested_by,omitempty"`
	Approvals   []BatchCall    `json:"approvals"`
}

// BatchCall is one tool call of a BatchRequest. Question and Options
// default to "Allow <tool>: <main argument>?" with Allow and Deny.
type BatchCall struct {
	Question       string   `json:"question,omitempty"`
	Header         string   `json:"header,omitempty"`
	Options        []Option `json:"options,omitempty"`
	Context        string   `json:"context,omitempty"`
	Action         *Action  `json:"action,omitempty"`
	IdempotencyKey string   `json:"idempotency_key,omitempty"`
}

// Asks turns the request into one ask per call, in order. Problems of the
// batch itself are returned here; each ask is validated as any other
// (BuildQuestion), its problems named under approvals[i].
func (b *BatchRequest) Asks() ([]*AskRequest, error) {
	var p problems
	switch n := len(b.Approvals); {
	case n == 0:
		p.add("approvals", "required: one entry per tool call to approve, each with its action")
	case n > MaxBatchApprovals:
		p.add("approvals", "at most %d in one batch (got %d); ask the rest in another batch", MaxBatchApprovals, n)
	}
	calls := map[string]int{}
	for i, c := range b.Approvals {
		if c.Action == nil && strings.TrimSpace(c.Question) == "" {
			p.add(fmt.Sprintf("approvals[%d]", i), "needs an action (the tool call to approve) or a question")
		}
		if c.Action != nil && c.Action.CallID != "" {
			if j, dup := calls[c.Action.CallID]; dup {
				p.add(fmt.Sprintf("approvals[%d].action.call_id", i), "%q is the call id of approvals[%d] too: each call once", c.Action.CallID, j)
			}
			calls[c.Action.CallID] = i
		}
	}
	if err := p.err(EInvalid, "the batch is not valid"); err != nil {
		return nil, err
	}
	out := make([]*AskRequest, len(b.Approvals))
	for i, c := range b.Approvals {
		ctx := b.Context
		if c.Context != "" {
			ctx = strings.TrimSpace(ctx + "\n\n" + c.Context)
		}
		req := &AskRequest{RunID: b.RunID, AgentID: b.AgentID, AgentName: b.AgentName, ParentRunID: b.ParentRunID,
			Kind: KindApproval, Question: c.Question, Header: c.Header, Options: c.Options, Context: ctx,
			Targets: b.Targets, Route: b.Route, Responders: b.Responders, Timeout: b.Timeout, Resume: b.Resume,
			RequestedBy: b.RequestedBy, IdempotencyKey: c.IdempotencyKey, Action: c.Action}
		if strings.TrimSpace(req.Question) == "" {
			req.Question = CallQuestion(c.Action)
			if req.Header == "" {
				req.Header = "Approval"
			}
		}
		if len(req.Options) == 0 {
			req.Options = []Option{{Label: "Allow", Description: "Let the agent run it"},
				{Label: "Deny", Description: "Refuse; the agent is told"}}
		}
		out[i] = req
	}
	return out, nil
}

// CallQuestion is the default text of an approval of a tool call:
// "Allow <tool>: <main argument>?".
func CallQuestion(a *Action) string {
	if a == nil {
		return "Allow?"
	}
	tool := strings.TrimSpace(a.Tool)
	arg := ""
	if len(a.Input) > 0 && string(a.Input) != "{}" {
		arg = strings.Join(strings.Fields(MainArgument(a.Input)), " ")
	}
	if arg == "" {
		return Shorten("Allow "+tool+"?", MaxQuestionLen)
	}
	return "Allow " + Shorten(tool, MaxToolLen) + ": " + Shorten(arg, 300) + "?"
}

// Batch is the approvals of one batch, in the order they were asked.
type Batch struct {
	ID        string `json:"batch_id"`
	ProjectID string `json:"project_id"`
	RunID     string `json:"run_id"`
	AgentID   string `json:"agent_id"`
	// Status is "pending" while any call waits for a decision, else
	// "decided".
	Status    string      `json:"status"`
	Pending   int         `json:"pending"`
	Questions []*Question `json:"questions"`
}

// Batch statuses.
const (
	BatchPending = "pending"
	BatchDecided = "decided"
)

// NewBatch gathers the batch id out of a run's questions (in creation
// order); nil when none belongs to it.
func NewBatch(id string, runQuestions []*Question) *Batch {
	var b *Batch
	for _, q := range runQuestions {
		if q.BatchID != id {
			continue
		}
		if b == nil {
			b = &Batch{ID: id, ProjectID: q.ProjectID, RunID: q.RunID, AgentID: q.AgentID, Questions: []*Question{}}
		}
		b.Questions = append(b.Questions, q)
		if q.Status == StatusPending {
			b.Pending++
		}
	}
	if b != nil {
		b.Status = BatchDecided
		if b.Pending > 0 {
			b.Status = BatchPending
		}
	}
	return b
}

// BatchRespondRequest decides every still-pending call of a batch at once
// (POST …/approval-batches/{id}/respond).
type BatchRespondRequest struct {
	Decision string  `json:"decision"`
	Reason   *string `json:"reason,omitempty"`
	// Questions, when given, limits the decision to these calls: the ones
	// the person saw. A call that joined the batch since is left pending.
	Questions []string `json:"questions,omitempty"`
	// RespondedBy names the person an operator relays the decision for,
	// under the rules of an answer's responded_by.
	RespondedBy *PersonRef `json:"responded_by,omitempty"`
}

// Validate checks the request's fields.
func (r *BatchRespondRequest) Validate() error {
	var p problems
	switch r.Decision {
	case DecideAllow, DecideDeny:
	case "":
		p.add("decision", "required: allow or deny")
	default:
		p.add("decision", "must be allow or deny, got %q", r.Decision)
	}
	if r.Reason != nil {
		reason := strings.TrimSpace(*r.Reason)
		switch {
		case r.Decision == DecideAllow:
			p.add("reason", "goes with deny only; leave it out to allow")
		case reason == "":
			p.add("reason", "required when given: say why the calls are refused")
		case utf8.RuneCountInString(reason) > MaxAnswerLen:
			p.add("reason", "at most %d characters", MaxAnswerLen)
		}
	}
	for i, id := range r.Questions {
		if strings.TrimSpace(id) == "" {
			p.add(fmt.Sprintf("questions[%d]", i), "must be a question id of the batch")
		}
	}
	return p.err(EInvalid, "the batch decision is not valid")
}

// Includes reports whether the request decides the call id (every call
// when Questions is empty).
func (r *BatchRespondRequest) Includes(id string) bool {
	return len(r.Questions) == 0 || slices.Contains(r.Questions, id)
}

// BatchAnswer is the answer "Allow all" or "Deny all" gives one call of a
// batch: its allow option, its deny option, or the reason (a denial). An
// approval whose options say neither is refused: it is decided on its own.
func BatchAnswer(q *Question, decision string, reason *string) (RespondRequest, error) {
	if q.Kind != KindApproval || len(q.Questions) != 1 {
		return RespondRequest{}, Errorf(EInvalidAnswer, "this is not an approval; answer it on its own")
	}
	if decision == DecideDeny && reason != nil {
		r := strings.TrimSpace(*reason)
		return RespondRequest{Reason: &r}, nil
	}
	want := ToneAllow
	if decision == DecideDeny {
		want = ToneDeny
	}
	it := q.Questions[0]
	for j, t := range ItemTones(it) {
		if t == want {
			label := it.Options[j].Label
			return RespondRequest{Response: &label}, nil
		}
	}
	return RespondRequest{}, Errorf(EInvalidAnswer, "no option of this approval says %s; decide it on its own", decision)
}

// IsStatusError reports whether err says a question is no longer pending
// (StatusError: answered, cancelled or expired).
func IsStatusError(err error) bool {
	switch ErrorCode(err) {
	case EAlreadyAnswered, EQuestionCancelled, EQuestionExpired:
		return true
	}
	return false
}
