package lifecycle

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/tracing"

	"go.opentelemetry.io/otel/trace"
)

// DefaultPauseWait is how long a person's answer waits for a webhook-mode
// run to pause unless RouterConfig.PauseWait says otherwise.
const DefaultPauseWait = 10 * time.Second

// RouterConfig configures a Router.
type RouterConfig struct {
	Store    Store
	Channels []Channel
	Routes   []domain.Route
	Clock    Clock
	Logger   *slog.Logger
	// DefaultTimeout applies when neither the ask nor its route sets one.
	DefaultTimeout time.Duration
	// BatchWindow: approvals of a run asked this close together form one
	// batch, unless their route says otherwise (default
	// domain.DefaultBatchWindow).
	BatchWindow time.Duration
	// Retention keeps final records this long (default 7 days).
	Retention time.Duration
	// HasWebhookSecret reports whether webhook mode can sign for an agent.
	HasWebhookSecret func(agentID string) bool
	// CheckResumeURL, if set, refuses resume urls the bridge may not reach
	// (an egress policy, docs/security.md).
	CheckResumeURL func(url string) error
	// PostTimeout bounds posting one copy (default 15s).
	PostTimeout time.Duration
	// CopyRetryFor is how long updating a copy (final state, tally) keeps
	// retrying through platform failures (default 10 min).
	CopyRetryFor time.Duration
	// CopyRetryBackoff is the first wait between those retries, doubled up
	// to 30 s (default 500 ms).
	CopyRetryBackoff time.Duration
	// Observers are told of every transition this replica makes.
	Observers []Observer
	// TracerProvider records the lifecycle's spans (nil: none recorded;
	// internal/tracing).
	TracerProvider trace.TracerProvider
	// GroupResolvers are directories of responder groups no chat platform
	// owns (whoever is on call for a schedule).
	GroupResolvers []GroupResolver
	// PauseWait is how long a person's answer to a webhook-mode question
	// waits for the agent's run to report its pause before it is refused
	// with ERunNotPaused (0: DefaultPauseWait; negative: no wait; see
	// AnswerRead).
	PauseWait time.Duration
}

// Router runs the question lifecycle: ask, answer, cancel, expire.
type Router struct {
	cfg      RouterConfig
	store    Store
	channels map[string]Channel
	// resolvers are the channels with the PersonResolver ability.
	resolvers map[string]PersonResolver
	// batchers are the channels with the BatchChannel ability, and
	// batchLocks serialise the re-renders of one batch message.
	batchers   map[string]BatchChannel
	batchLocks batchLocks
	// groups are the directories of responder groups, by kind.
	groups map[string]GroupResolver
	routes map[string]domain.Route
	def    *domain.Route
	clock  Clock
	log    *slog.Logger
	// bg counts work that must end before Close returns: transitions in
	// progress and the copy updates they start. closing refuses new work.
	bg       sync.WaitGroup
	bgMu     sync.Mutex
	closing  bool
	inflight atomic.Int64 // what bg counts, readable without waiting
	bgCtx    context.Context
	bgCancel context.CancelFunc

	// steps are the observers with the StepObserver ability.
	steps  []StepObserver
	tracer trace.Tracer
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
		cfg.DefaultTimeout = domain.DefaultTimeout
	}
	if cfg.Retention == 0 {
		cfg.Retention = 7 * 24 * time.Hour
	}
	if cfg.BatchWindow <= 0 {
		cfg.BatchWindow = domain.DefaultBatchWindow
	}
	if cfg.PauseWait == 0 {
		cfg.PauseWait = DefaultPauseWait
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
		channels: map[string]Channel{}, resolvers: map[string]PersonResolver{}, batchers: map[string]BatchChannel{}, routes: map[string]domain.Route{},
		groups: map[string]GroupResolver{}}
	for _, c := range cfg.Channels {
		r.AddChannel(c)
	}
	r.tracer = tracing.Tracer(cfg.TracerProvider)
	for _, o := range cfg.Observers {
		if so, ok := o.(StepObserver); ok {
			r.steps = append(r.steps, so)
		}
	}
	for _, g := range cfg.GroupResolvers {
		r.AddGroupResolver(g)
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
func (r *Router) Route(name string) (domain.Route, bool) {
	rt, ok := r.routes[name]
	return rt, ok
}

// RouteNames returns the names of the configured routes, sorted, and the
// default route's name ("" without one).
func (r *Router) RouteNames() (names []string, def string) {
	names = slices.Sorted(maps.Keys(r.routes))
	if r.def != nil {
		def = r.def.Name
	}
	return names, def
}

// AddChannel registers an adapter after construction (adapters need the
// Router to deliver answers, the Router needs them to post).
func (r *Router) AddChannel(c Channel) {
	r.channels[c.Platform()] = c
	if pr, ok := c.(PersonResolver); ok {
		r.resolvers[c.Platform()] = pr
	}
	if bc, ok := c.(BatchChannel); ok {
		r.batchers[c.Platform()] = bc
	}
}

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

var errClosing = domain.Errorf(domain.EUnavailable, "the bridge is shutting down; try again on another replica")

// stepped tells the StepObservers of a step.
func (r *Router) stepped(project, step string) {
	for _, o := range r.steps {
		o.Stepped(project, step)
	}
}

// interacted tells the StepObservers of a person's answer, vote or click
// and returns its result (err: nil, a refusal, or the question no longer
// pending).
func (r *Router) interacted(platform string, q *domain.Question, err error, voted bool) (result, reason string) {
	result = InteractionAnswered
	switch code := domain.ErrorCode(err); {
	case err == nil && voted && q != nil && q.Status == domain.StatusPending:
		result = InteractionVoted
	case err == nil:
	case code == domain.EAlreadyAnswered || code == domain.EQuestionCancelled || code == domain.EQuestionExpired:
		result = InteractionStale
	default:
		result, reason = InteractionRefused, code
	}
	for _, o := range r.steps {
		o.Interacted(platform, result, reason)
	}
	return result, reason
}
