package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// Route is a named set of targets, responders and defaults.
type Route struct {
	Name       string
	Default    bool
	Targets    []Target
	Responders Responders
	Thread     string // "" or "per-run"
	Timeout    time.Duration
	// ApprovalsRequired > 1 makes answers votes; the question resolves when
	// that many people chose the same option (or at a veto option's vote).
	ApprovalsRequired int
	// OnTimeout answers the question at its deadline instead of expiring it.
	OnTimeout *OnTimeout
	// Escalation runs in order, each step After the question was created.
	Escalation []EscalationStep
	// NoEdit refuses edited arguments on this route's approvals
	// (allow_edit: false in the config).
	NoEdit bool
	// AutoAllow approves, without asking, an approval whose action one of
	// these rules matches (core/autoallow.go), e.g. "Bash(git status*)".
	AutoAllow []string
}

// RouterConfig configures a Router.
type RouterConfig struct {
	Store    Store
	Channels []Channel
	Routes   []Route
	Clock    Clock
	Logger   *slog.Logger
	// DefaultTimeout applies when neither the ask nor its route sets one.
	DefaultTimeout time.Duration
	// Retention keeps final records this long (default 7 days).
	Retention time.Duration
	// HasWebhookSecret reports whether webhook mode can sign for an agent.
	HasWebhookSecret func(agentID string) bool
	// CheckResumeURL, if set, refuses resume urls the bridge may not reach
	// (an egress policy, DESIGN §7a).
	CheckResumeURL func(url string) error
	// PostTimeout bounds posting one copy (default 15s).
	PostTimeout time.Duration
	// CopyRetryFor is how long updating a copy (final state, tally) keeps
	// retrying through platform failures (default 10 min).
	CopyRetryFor time.Duration
	// CopyRetryBackoff is the first wait between those retries, doubled up
	// to 30 s (default 500 ms).
	CopyRetryBackoff time.Duration
	// Observe, if set, is called after every transition this replica makes.
	Observe func(q *Question)
}

// Router runs the question lifecycle: ask, answer, cancel, expire.
type Router struct {
	cfg      RouterConfig
	store    Store
	channels map[string]Channel
	routes   map[string]Route
	def      *Route
	clock    Clock
	log      *slog.Logger
	// bg counts work that must end before Close returns: transitions in
	// progress and the copy updates they start. closing refuses new work.
	bg       sync.WaitGroup
	bgMu     sync.Mutex
	closing  bool
	inflight atomic.Int64 // what bg counts, readable without waiting
	bgCtx    context.Context
	bgCancel context.CancelFunc
}

// NewRouter builds a Router.
func NewRouter(cfg RouterConfig) *Router {
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.DefaultTimeout == 0 {
		cfg.DefaultTimeout = DefaultTimeout
	}
	if cfg.Retention == 0 {
		cfg.Retention = 7 * 24 * time.Hour
	}
	if cfg.PostTimeout == 0 {
		cfg.PostTimeout = 15 * time.Second
	}
	if cfg.CopyRetryFor == 0 {
		cfg.CopyRetryFor = 10 * time.Minute
	}
	if cfg.CopyRetryBackoff == 0 {
		cfg.CopyRetryBackoff = 500 * time.Millisecond
	}
	if cfg.HasWebhookSecret == nil {
		cfg.HasWebhookSecret = func(string) bool { return false }
	}
	r := &Router{cfg: cfg, store: cfg.Store, clock: cfg.Clock, log: cfg.Logger,
		channels: map[string]Channel{}, routes: map[string]Route{}}
	for _, c := range cfg.Channels {
		r.channels[c.Platform()] = c
	}
	for _, rt := range cfg.Routes {
		r.routes[rt.Name] = rt
		if rt.Default && r.def == nil {
			rt := rt
			r.def = &rt
		}
	}
	r.bgCtx, r.bgCancel = context.WithCancel(context.Background())
	return r
}

// Store returns the router's store.
func (r *Router) Store() Store { return r.store }

// Clock returns the router's clock.
func (r *Router) Clock() Clock { return r.clock }

// Channel returns the adapter of a platform, if configured.
func (r *Router) Channel(platform string) (Channel, bool) {
	c, ok := r.channels[platform]
	return c, ok
}

// Route returns a route by name.
func (r *Router) Route(name string) (Route, bool) {
	rt, ok := r.routes[name]
	return rt, ok
}

// AddChannel registers an adapter after construction (adapters need the
// Router to deliver answers, the Router needs them to post).
func (r *Router) AddChannel(c Channel) { r.channels[c.Platform()] = c }

// Close waits for background work (finishing copies) to end, or ctx.
func (r *Router) Close(ctx context.Context) error {
	r.bgMu.Lock()
	r.closing = true
	r.bgMu.Unlock()
	done := make(chan struct{})
	go func() { r.bg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		r.bgCancel()
		<-done
		return ctx.Err()
	}
}

// AskResult is the outcome of Ask.
type AskResult struct {
	Question *Question
	Created  bool   // false: an earlier question was re-attached
	Message  string // a sentence for the agent's tool result
}

// Ask validates and stores a question, posts it to its targets and returns
// the record. agentRoute is the asking agent's default route, if any.
func (r *Router) Ask(ctx context.Context, project string, req *AskRequest, agentRoute string) (AskResult, error) {
	def := AskDefaults{Timeout: r.cfg.DefaultTimeout, CheckResumeURL: r.cfg.CheckResumeURL}
	routeName := req.Route
	if routeName == "" {
		routeName = agentRoute
	}
	var route *Route
	if routeName != "" {
		rt, ok := r.routes[routeName]
		if !ok {
			return AskResult{}, &Error{Code: EInvalid, Message: "the question is not valid",
				Details: []Detail{{Field: "route", Problem: fmt.Sprintf("no route named %q in the configuration", routeName)}}}
		}
		route = &rt
	} else if len(req.Targets) == 0 && r.def != nil {
		route = r.def
	}
	if route != nil {
		def.Targets, def.Responders = route.Targets, route.Responders
		if route.Timeout > 0 {
			def.Timeout = route.Timeout
		}
		def.ApprovalsRequired, def.OnTimeout, def.Escalation = route.ApprovalsRequired, route.OnTimeout, route.Escalation
		req.Route = route.Name
	}
	q, timeout, err := BuildQuestion(req, def, r.cfg.HasWebhookSecret(req.AgentID))
	if err != nil {
		return AskResult{}, err
	}
	var p problems
	for i, t := range q.Targets {
		if _, ok := r.channels[t.Platform]; !ok {
			p.add(fmt.Sprintf("targets[%d].platform", i), "%q is not configured on this bridge (configured: %s)", t.Platform, r.platforms())
		}
	}
	if err := p.err(EInvalid, "the question is not valid"); err != nil {
		return AskResult{}, err
	}
	if !r.track() {
		return AskResult{}, errClosing
	}
	defer r.done()
	now := r.clock.Now().UTC()
	q.ID = NewQuestionID(project)
	q.ProjectID = project
	if q.RunID == "" {
		q.RunID = "run-" + uuid.NewString()
	}
	q.CreatedAt, q.UpdatedAt, q.ExpiresAt = now, now, now.Add(timeout)
	rule := r.autoRule(ctx, project, q, route)
	res, err := r.store.Create(ctx, q)
	if err != nil {
		return AskResult{}, err
	}
	if res.Superseded != nil {
		r.afterTransition(res.Superseded)
	}
	if res.Reattached {
		return AskResult{Question: res.Question, Message: r.message(res.Question, true)}, nil
	}
	q = res.Question
	if rule != "" {
		if final, err := r.autoApprove(ctx, q, rule); err == nil {
			return AskResult{Question: final, Created: true, Message: fmt.Sprintf("Approved at once by the auto-allow rule %s; nobody was asked.", rule)}, nil
		}
	}
	r.post(ctx, q, q.Targets)
	if fresh, err := r.store.Get(ctx, project, q.ID); err == nil {
		q = fresh
	}
	return AskResult{Question: q, Created: true, Message: r.message(q, false)}, nil
}

func (r *Router) platforms() string {
	if len(r.channels) == 0 {
		return "none; the question can be answered in the web inbox or the API"
	}
	var names []string
	for n := range r.channels {
		names = append(names, n)
	}
	return strings.Join(names, ", ")
}

// post posts a copy on each target in parallel and records each on the
// question and in the audit trail. A question that cannot be posted
// anywhere is reported loudly.
func (r *Router) post(ctx context.Context, q *Question, targets []Target) {
	if len(targets) == 0 {
		return
	}
	var wg sync.WaitGroup
	results := make([]Target, len(targets))
	for i, t := range targets {
		if _, ok := r.channels[t.Platform]; !ok {
			results[i] = t
			results[i].Error = t.Platform + " is not configured on this bridge"
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.PostTimeout)
			defer cancel()
			posted, err := r.channels[t.Platform].Post(pctx, q, t)
			if err != nil {
				r.log.Error("posting question failed", "question", q.ID, "project", q.ProjectID,
					"platform", t.Platform, "channel", t.Channel, "err", err)
				posted = t
				posted.Error = err.Error()
			}
			results[i] = posted
		}()
	}
	wg.Wait()
	failed := 0
	for _, t := range results {
		if t.Error != "" {
			failed++
		}
		if err := r.store.AttachCopy(context.WithoutCancel(ctx), q.ProjectID, q.ID, t); err != nil {
			r.log.Error("recording posted copy failed", "question", q.ID, "err", err)
		}
		entry := AuditEntry{Type: "posted", Detail: targetName(t)}
		if t.Error != "" {
			entry = AuditEntry{Type: "post_failed", Detail: targetName(t) + ": " + t.Error}
		}
		r.audit(context.WithoutCancel(ctx), q, entry)
	}
	if failed == len(results) {
		r.log.Error("question could not be posted to any target", "question", q.ID, "project", q.ProjectID)
		_ = r.store.AppendEvent(context.WithoutCancel(ctx), Event{Type: EventPostFailed, ProjectID: q.ProjectID,
			QuestionID: q.ID, RunID: q.RunID, At: r.clock.Now().UTC()})
	}
}

func (r *Router) message(q *Question, reattached bool) string {
	short := ShortID(q.ID)
	if short != q.ID {
		short += "…"
	}
	place := q.Places()
	if place != "the web inbox" {
		place += " and the web inbox"
	}
	if reattached {
		switch q.Status {
		case StatusAnswered:
			return fmt.Sprintf("Question %s was already answered by %s.", short, personName(q.RespondedBy))
		case StatusPending:
			return fmt.Sprintf("Question %s is still waiting for an answer in %s (expires in %s).", short, place, HumanDuration(q.ExpiresAt.Sub(r.clock.Now())))
		}
		return fmt.Sprintf("Question %s is %s.", short, q.Status)
	}
	mode := "this run will pause until someone answers"
	if q.WebhookMode() {
		mode = "this run can pause; it resumes through the webhook when someone answers"
	}
	msg := fmt.Sprintf("Question %s sent to %s; %s (expires in %s).", short, place, mode, HumanDuration(q.ExpiresAt.Sub(q.CreatedAt)))
	for _, t := range q.Targets {
		if t.Error != "" {
			msg += fmt.Sprintf(" Posting to %s failed: %s.", targetName(t), t.Error)
		}
	}
	return msg
}

func targetName(t Target) string {
	switch t.Platform {
	case "slack":
		return "Slack " + t.Channel
	case "discord":
		return "Discord channel " + t.Channel
	}
	return t.Platform + " " + t.Channel
}

func personName(p *Person) string {
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

// track registers work Close must wait for; false once Close has begun.
func (r *Router) track() bool {
	r.bgMu.Lock()
	defer r.bgMu.Unlock()
	if r.closing {
		return false
	}
	r.add()
	return true
}

func (r *Router) add()  { r.inflight.Add(1); r.bg.Add(1) }
func (r *Router) done() { r.inflight.Add(-1); r.bg.Done() }

// Flush waits until no transition or copy update is in flight, without
// closing the router (tests and graceful hand-overs use it).
func (r *Router) Flush(ctx context.Context) error {
	for r.inflight.Load() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

var errClosing = Errorf(EUnavailable, "the bridge is shutting down; try again on another replica")

// Locate returns the project of a question id.
func (r *Router) Locate(ctx context.Context, id string) (string, error) {
	return r.store.Locate(ctx, id)
}

// ResolvePerson fills in p's groups through the channel of p's platform,
// when it can (see PersonResolver); otherwise p is returned unchanged and
// only responders naming p's user id admit them.
func (r *Router) ResolvePerson(ctx context.Context, q *Question, p Person) Person {
	if ch, ok := r.channels[p.Platform]; ok {
		if pr, ok := ch.(PersonResolver); ok {
			return pr.ResolvePerson(ctx, q, p)
		}
	}
	return p
}

// Check applies the responders policy (Permit) for a surface that must
// refuse someone before it has an answer (a chat click that would open a
// modal, a thread reply). A refusal is recorded in the audit trail, exactly
// as Answer records it.
func (r *Router) Check(ctx context.Context, q *Question, who Person) error {
	if err := Permit(q, who); err != nil {
		r.audit(ctx, q, AuditEntry{Type: "refused", By: &who, Detail: err.Error()})
		return err
	}
	return nil
}

// Answer records who's answer to a question, exactly once. It returns the
// final record. Errors: ENotFound, ENotAllowed, EInvalidAnswer, the
// StatusError of a question no longer pending, ERunNotPaused.
func (r *Router) Answer(ctx context.Context, project, id string, req RespondRequest, who Person) (*Question, error) {
	q, err := r.store.Get(ctx, project, id)
	if err != nil {
		return nil, err
	}
	return r.AnswerRead(ctx, q, req, who)
}

// AnswerRead is Answer for a caller that has just read q itself (the API's
// respond, which reads it to check who may see it): it saves reading it
// again. The store's transition still refuses a question that is no longer
// pending, so a record read a moment ago is safe; one read long before (a
// chat modal left open) should go through Answer.
func (r *Router) AnswerRead(ctx context.Context, q *Question, req RespondRequest, who Person) (*Question, error) {
	if q.Status != StatusPending {
		return q, StatusError(q)
	}
	if err := Permit(q, who); err != nil {
		r.audit(ctx, q, AuditEntry{Type: "refused", By: &who, Detail: err.Error()})
		return q, err
	}
	if err := prepareApproval(q, &req, !r.routes[q.Route].NoEdit); err != nil {
		return q, err
	}
	ans, err := ParseAnswer(q, req)
	if err != nil {
		return q, err
	}
	if err := decideApproval(q, req, &ans, &who); err != nil {
		return q, err
	}
	tr := Transition{To: StatusAnswered, Answer: &ans, By: &who}
	if q.WebhookMode() {
		tr.RequirePausedRun = true
	}
	if q.ApprovalsRequired > 1 {
		return r.vote(ctx, q, tr)
	}
	final, err := r.transition(ctx, q, tr)
	if err == nil {
		r.auditApproval(ctx, final, q, &ans)
	}
	return final, err
}

// vote counts who's choice on an approval that needs several. The question
// resolves when ApprovalsRequired people chose the same option, or at the
// first vote for a veto option; until then every copy shows the tally.
func (r *Router) vote(ctx context.Context, q *Question, tr Transition) (*Question, error) {
	if !r.track() {
		return q, errClosing
	}
	defer r.done()
	it := q.Questions[0]
	label := tr.Answer.Selections[it.Question][0]
	o, ok := MatchOption(it, label)
	if !ok {
		// A vote counts toward an option; free text cannot be tallied.
		return q, &Error{Code: EInvalidAnswer, Message: "this approval needs a vote for one of its options",
			Details: []Detail{{Field: "answers[" + it.Question + "]", Problem: fmt.Sprintf("%q is not an option; choose one of the options", label)}}}
	}
	r.prepare(q, &tr)
	v := Vote{By: *tr.By, Label: label, At: tr.At}
	final, resolved, err := r.store.Vote(ctx, q.ProjectID, q.ID, v, q.ApprovalsRequired, o.Veto, tr)
	if err != nil {
		return final, err
	}
	if resolved {
		r.afterTransition(final)
	} else {
		r.updateCopies(final)
	}
	return final, nil
}

// Cancel withdraws (reason agent) or dismisses (reason user) a question.
func (r *Router) Cancel(ctx context.Context, project, id, reason string, who *Person) (*Question, error) {
	return r.CancelWithNote(ctx, project, id, reason, "", who)
}

// CancelWithNote is Cancel with a free-text note kept on the record and
// shown on every copy.
func (r *Router) CancelWithNote(ctx context.Context, project, id, reason, note string, who *Person) (*Question, error) {
	q, err := r.store.Get(ctx, project, id)
	if err != nil {
		return nil, err
	}
	if q.Status != StatusPending {
		return q, StatusError(q)
	}
	if who != nil && reason == CancelUser {
		if err := Permit(q, *who); err != nil {
			r.audit(ctx, q, AuditEntry{Type: "refused", By: who, Detail: "dismiss: " + err.Error()})
			return q, err
		}
	}
	return r.transition(ctx, q, Transition{To: StatusCancelled, CancelReason: reason, CancelNote: note, By: who})
}

// transition applies tr to q, adding the continuation run and the resume
// delivery webhook mode needs, then finishes every copy in the background.
func (r *Router) transition(ctx context.Context, q *Question, tr Transition) (*Question, error) {
	if !r.track() {
		return q, errClosing
	}
	defer r.done()
	r.prepare(q, &tr)
	final, err := r.store.Transition(ctx, q.ProjectID, q.ID, tr)
	if err != nil {
		return final, err
	}
	r.afterTransition(final)
	return final, nil
}

// prepare stamps a transition and adds what webhook mode needs: the
// continuation run and the resume delivery, created in the same step.
func (r *Router) prepare(q *Question, tr *Transition) {
	tr.At = r.clock.Now().UTC()
	tr.Retention = r.cfg.Retention
	if q.WebhookMode() && (tr.To == StatusAnswered || tr.To == StatusExpired || (tr.To == StatusCancelled && tr.CancelReason == CancelUser)) {
		tr.ContinuationRunID = uuid.NewString()
		tr.DeliveryID = uuid.NewString()
	}
}

// audit appends to the audit trail; a failure is logged, never fatal.
func (r *Router) audit(ctx context.Context, q *Question, e AuditEntry) {
	e.ProjectID, e.QuestionID, e.RunID = q.ProjectID, q.ID, q.RunID
	if e.At.IsZero() {
		e.At = r.clock.Now().UTC()
	}
	if err := r.store.AppendAudit(context.WithoutCancel(ctx), e); err != nil {
		r.log.Warn("writing the audit trail failed", "question", q.ID, "type", e.Type, "err", err)
	}
}

func (r *Router) afterTransition(q *Question) {
	if r.cfg.Observe != nil {
		r.cfg.Observe(q)
	}
	r.finishCopies(q)
}

// finishCopies updates every posted copy to the final state, in tracked
// background work with retries.
func (r *Router) finishCopies(q *Question) {
	r.eachCopy(q, "updating a copy to its final state", func(ctx context.Context, ch Channel, t Target) error {
		return ch.Finish(ctx, q, t)
	})
}

// eachCopy runs f on every posted copy in tracked background work, with
// retries and backoff; what still fails is logged.
func (r *Router) eachCopy(q *Question, what string, f func(ctx context.Context, ch Channel, t Target) error) {
	for _, t := range q.Targets {
		if t.MessageTS == "" || t.Error != "" {
			continue
		}
		ch, ok := r.channels[t.Platform]
		if !ok {
			continue
		}
		r.add()
		go func() {
			defer r.done()
			// A platform outage or rate-limit storm delays the update, it
			// does not drop it: retry with capped backoff for CopyRetryFor.
			start := time.Now()
			backoff := r.cfg.CopyRetryBackoff
			for attempt := 1; ; attempt++ {
				ctx, cancel := context.WithTimeout(r.bgCtx, r.cfg.PostTimeout)
				err := f(ctx, ch, t)
				cancel()
				if err == nil {
					if attempt > 1 {
						r.log.Info(what+" succeeded after retries", "question", q.ID, "platform", t.Platform, "attempts", attempt)
					}
					return
				}
				if time.Since(start) >= r.cfg.CopyRetryFor || r.bgCtx.Err() != nil {
					r.log.Error(what+" failed; the copy may still show live controls", "question", q.ID,
						"platform", t.Platform, "channel", t.Channel, "attempts", attempt, "err", err)
					return
				}
				if attempt == 5 {
					r.log.Warn(what+" keeps failing; still retrying", "question", q.ID, "platform", t.Platform,
						"channel", t.Channel, "err", err)
				}
				select {
				case <-time.After(backoff):
				case <-r.bgCtx.Done():
				}
				backoff = min(backoff*2, 30*time.Second)
			}
		}()
	}
}

// ExpireDue expires every pending question past its deadline. Safe to run
// on every replica: each question expires exactly once.
func (r *Router) ExpireDue(ctx context.Context) (int, error) {
	refs, err := r.store.Due(ctx, r.clock.Now(), 500)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ref := range refs {
		q, err := r.store.Get(ctx, ref.ProjectID, ref.ID)
		if err != nil {
			continue
		}
		if q.Status != StatusPending {
			continue
		}
		tr := Transition{To: StatusExpired}
		if q.OnTimeout != nil {
			if ans, err := ParseAnswer(q, RespondRequest{Response: &q.OnTimeout.Answer}); err == nil {
				by := &Person{Platform: "system", ID: "timeout", Name: "system:timeout"}
				_ = decideApproval(q, RespondRequest{}, &ans, by)
				tr = Transition{To: StatusAnswered, Answer: &ans, Defaulted: true, By: by}
			}
		}
		if _, err := r.transition(ctx, q, tr); err == nil {
			n++
		} else if ErrorCode(err) == EInternal {
			r.log.Error("expiring question failed", "question", ref.ID, "err", err)
		}
	}
	return n, nil
}

// EscalateDue runs every escalation step that has come due: a reminder on
// every copy, and/or a copy on further targets with further responders.
// Safe on every replica: each step runs once.
func (r *Router) EscalateDue(ctx context.Context) (int, error) {
	now := r.clock.Now().UTC()
	refs, err := r.store.DueEscalations(ctx, now, 500)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ref := range refs {
		q, err := r.store.Get(ctx, ref.ProjectID, ref.ID)
		if err != nil || q.Status != StatusPending || q.EscalationLevel >= len(q.Escalation) {
			continue
		}
		level := q.EscalationLevel
		step := q.Escalation[level]
		var next time.Time
		if level+1 < len(q.Escalation) {
			next = q.CreatedAt.Add(time.Duration(q.Escalation[level+1].After))
		}
		ran, err := r.runStep(ctx, q, level, step, next, now)
		if err != nil {
			return n, err
		}
		if ran {
			n++
		}
	}
	return n, nil
}

// runStep runs escalation step level of q unless another replica already
// did.
func (r *Router) runStep(ctx context.Context, q *Question, level int, step EscalationStep, next, now time.Time) (bool, error) {
	if !r.track() {
		return false, errClosing
	}
	defer r.done()
	ok, err := r.store.Escalate(ctx, q.ProjectID, q.ID, level, next, describeStep(step), now)
	if err != nil || !ok {
		return false, nil // another replica ran this step, or the store failed (retried next sweep)
	}
	if fresh, err := r.store.Get(ctx, q.ProjectID, q.ID); err == nil {
		q = fresh
	}
	if step.Remind {
		r.remind(ctx, q)
	}
	if len(step.Targets) > 0 {
		r.post(ctx, q, step.Targets)
		if fresh, err := r.store.Get(ctx, q.ProjectID, q.ID); err == nil {
			q = fresh
		}
	}
	if step.Responders != nil {
		r.updateCopies(q) // copies name who may answer now
	}
	return true, nil
}

func describeStep(s EscalationStep) string {
	var parts []string
	if s.Remind {
		parts = append(parts, "reminder")
	}
	for _, t := range s.Targets {
		parts = append(parts, "copy to "+targetName(t))
	}
	if s.Responders != nil {
		parts = append(parts, "responders added: "+DescribeResponders(*s.Responders))
	}
	return fmt.Sprintf("after %s: %s", HumanDuration(time.Duration(s.After)), strings.Join(parts, ", "))
}

// Updater is implemented by adapters that can re-render a pending copy
// (vote tallies, responders added by escalation).
type Updater interface {
	Update(ctx context.Context, q *Question, t Target) error
}

// Reminder is implemented by adapters that can remind the responders on a
// copy (in its thread, mentioning them).
type Reminder interface {
	Remind(ctx context.Context, q *Question, t Target) error
}

// updateCopies re-renders every posted copy of a pending question.
func (r *Router) updateCopies(q *Question) {
	r.eachCopy(q, "updating a copy", func(ctx context.Context, ch Channel, t Target) error {
		u, ok := ch.(Updater)
		if !ok {
			return nil
		}
		// Render the latest state, not the one that triggered this update:
		// updates of quick successive votes may run in any order.
		fresh, err := r.store.Get(ctx, q.ProjectID, q.ID)
		if err != nil {
			return err
		}
		if fresh.Status != StatusPending {
			return nil // Finish shows the outcome
		}
		return u.Update(ctx, fresh, t)
	})
}

// remind reminds the responders on every posted copy.
func (r *Router) remind(ctx context.Context, q *Question) {
	reminded := 0
	for _, t := range q.Targets {
		if ch, ok := r.channels[t.Platform]; ok && t.MessageTS != "" && t.Error == "" {
			if rm, ok := ch.(Reminder); ok {
				pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.PostTimeout)
				err := rm.Remind(pctx, q, t)
				cancel()
				if err != nil {
					r.log.Warn("reminder failed", "question", q.ID, "platform", t.Platform, "channel", t.Channel, "err", err)
					continue
				}
				reminded++
				r.audit(ctx, q, AuditEntry{Type: "reminded", Detail: targetName(t) + ", asking " + DescribeResponders(q.Responders)})
			}
		}
	}
	if reminded == 0 {
		r.audit(ctx, q, AuditEntry{Type: "reminded", Detail: "no chat copy to remind on; asking " + DescribeResponders(q.Responders)})
	}
}

// Trimmer is a Store that drops what has outlived retention when asked
// (records, index entries, old events and audit entries); the sweeper asks
// on every cycle, on every replica.
type Trimmer interface {
	Trim(ctx context.Context, now time.Time) (int, error)
}

// Sweep runs ExpireDue, EscalateDue and the store's Trim every interval
// until ctx ends.
func (r *Router) Sweep(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := r.ExpireDue(ctx); err != nil && !errors.Is(err, context.Canceled) {
				r.log.Warn("deadline sweep failed", "err", err)
			}
			if _, err := r.EscalateDue(ctx); err != nil && !errors.Is(err, context.Canceled) {
				r.log.Warn("escalation sweep failed", "err", err)
			}
			if tr, ok := r.store.(Trimmer); ok {
				if _, err := tr.Trim(ctx, r.clock.Now()); err != nil && !errors.Is(err, context.Canceled) {
					r.log.Warn("retention sweep failed", "err", err)
				}
			}
		}
	}
}

// Wait blocks until the question is final, ctx ends, or timeout passes, and
// returns the latest record.
func (r *Router) Wait(ctx context.Context, project, id string, timeout time.Duration) (*Question, error) {
	wake, stop := r.store.Watch(project, id)
	defer stop()
	q, err := r.store.Get(ctx, project, id)
	if err != nil || q.Status.Final() || timeout <= 0 {
		return q, err
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	// Wake-ups travel over pub/sub, which can drop messages while a
	// connection is re-established; a slow re-read bounds that loss.
	recheck := time.NewTicker(10 * time.Second)
	defer recheck.Stop()
	for {
		select {
		case <-ctx.Done():
			return q, ctx.Err()
		case <-timer.C:
			return r.store.Get(context.WithoutCancel(ctx), project, id)
		case <-recheck.C:
		case <-wake:
		}
		fresh, err := r.store.Get(ctx, project, id)
		if ErrorCode(err) == EUnavailable {
			// The store is down for a while (a Redis restart or failover):
			// keep waiting; the subscriber wakes everyone when it is back.
			continue
		}
		if err != nil || fresh.Status.Final() {
			return fresh, err
		}
		q = fresh
	}
}
