package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
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
	// PostTimeout bounds posting one copy (default 15s).
	PostTimeout time.Duration
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
	bg       sync.WaitGroup
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
	def := AskDefaults{Timeout: r.cfg.DefaultTimeout}
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
	now := r.clock.Now().UTC()
	q.ID = uuid.NewString()
	q.ProjectID = project
	if q.RunID == "" {
		q.RunID = "run-" + uuid.NewString()
	}
	q.CreatedAt, q.UpdatedAt, q.ExpiresAt = now, now, now.Add(timeout)
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
	r.post(ctx, q)
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

// post posts every copy in parallel and records each on the question. A
// question that cannot be posted anywhere is reported loudly.
func (r *Router) post(ctx context.Context, q *Question) {
	if len(q.Targets) == 0 {
		return
	}
	var wg sync.WaitGroup
	results := make([]Target, len(q.Targets))
	for i, t := range q.Targets {
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
	}
	if failed == len(results) {
		r.log.Error("question could not be posted to any target", "question", q.ID, "project", q.ProjectID)
		_ = r.store.AppendEvent(context.WithoutCancel(ctx), Event{Type: EventPostFailed, ProjectID: q.ProjectID,
			QuestionID: q.ID, RunID: q.RunID, At: r.clock.Now().UTC()})
	}
}

func (r *Router) message(q *Question, reattached bool) string {
	short := q.ID
	if len(short) > 8 {
		short = short[:8] + "…"
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

// Locate returns the project of a question id.
func (r *Router) Locate(ctx context.Context, id string) (string, error) {
	return r.store.Locate(ctx, id)
}

// Answer records who's answer to a question, exactly once. It returns the
// final record. Errors: ENotFound, ENotAllowed, EInvalidAnswer, the
// StatusError of a question no longer pending, ERunNotPaused.
func (r *Router) Answer(ctx context.Context, project, id string, req RespondRequest, who Person) (*Question, error) {
	q, err := r.store.Get(ctx, project, id)
	if err != nil {
		return nil, err
	}
	if q.Status != StatusPending {
		return q, StatusError(q)
	}
	if !Allowed(q.Responders, who) {
		return q, Errorf(ENotAllowed, "%s may not answer this question; who may answer: %s", who.String(), DescribeResponders(q.Responders))
	}
	ans, err := ParseAnswer(q, req)
	if err != nil {
		return q, err
	}
	tr := Transition{To: StatusAnswered, Answer: &ans, By: &who}
	if q.WebhookMode() {
		tr.RequirePausedRun = true
	}
	return r.transition(ctx, q, tr)
}

// Cancel withdraws (reason agent) or dismisses (reason user) a question.
func (r *Router) Cancel(ctx context.Context, project, id, reason string, who *Person) (*Question, error) {
	q, err := r.store.Get(ctx, project, id)
	if err != nil {
		return nil, err
	}
	if q.Status != StatusPending {
		return q, StatusError(q)
	}
	if who != nil && reason == CancelUser && !Allowed(q.Responders, *who) {
		return q, Errorf(ENotAllowed, "%s may not dismiss this question; who may answer: %s", who.String(), DescribeResponders(q.Responders))
	}
	return r.transition(ctx, q, Transition{To: StatusCancelled, CancelReason: reason, By: who})
}

// transition applies tr to q, adding the continuation run and the resume
// delivery webhook mode needs, then finishes every copy in the background.
func (r *Router) transition(ctx context.Context, q *Question, tr Transition) (*Question, error) {
	tr.At = r.clock.Now().UTC()
	tr.Retention = r.cfg.Retention
	if q.WebhookMode() && (tr.To == StatusAnswered || tr.To == StatusExpired || (tr.To == StatusCancelled && tr.CancelReason == CancelUser)) {
		tr.ContinuationRunID = uuid.NewString()
		tr.DeliveryID = uuid.NewString()
	}
	final, err := r.store.Transition(ctx, q.ProjectID, q.ID, tr)
	if err != nil {
		return final, err
	}
	r.afterTransition(final)
	return final, nil
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
	for _, t := range q.Targets {
		if t.MessageTS == "" || t.Error != "" {
			continue
		}
		ch, ok := r.channels[t.Platform]
		if !ok {
			continue
		}
		r.bg.Add(1)
		go func() {
			defer r.bg.Done()
			backoff := 500 * time.Millisecond
			for attempt := 1; ; attempt++ {
				ctx, cancel := context.WithTimeout(r.bgCtx, r.cfg.PostTimeout)
				err := ch.Finish(ctx, q, t)
				cancel()
				if err == nil {
					return
				}
				if attempt >= 5 || r.bgCtx.Err() != nil {
					r.log.Error("updating a copy to its final state failed", "question", q.ID,
						"platform", t.Platform, "channel", t.Channel, "err", err)
					return
				}
				select {
				case <-time.After(backoff):
				case <-r.bgCtx.Done():
				}
				backoff *= 2
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
		if _, err := r.transition(ctx, q, Transition{To: StatusExpired}); err == nil {
			n++
		} else if ErrorCode(err) == EInternal {
			r.log.Error("expiring question failed", "question", ref.ID, "err", err)
		}
	}
	return n, nil
}

// Sweep runs ExpireDue every interval until ctx ends.
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
