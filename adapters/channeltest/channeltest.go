// Package channeltest holds the conformance suites every surface passes.
//
// Outbound (Run, this file and cases.go): each Channel adapter's tests call
// Run with a factory that builds the adapter against its fake platform, and
// the suite checks what a person and the Router see — every question shape
// posts within the platform's limits, every outcome shows on the copy with
// its controls gone, a deleted copy is never retried, rate limits and
// server errors are ridden out, and no secret appears in an error or a log
// line.
//
// Inbound (RunInbound, inbound.go): Slack, Discord and the web inbox each
// implement a Driver that acts as the suite's people — clicks, submits,
// free text, dismissals — and reads back what they were told privately and
// what the copy shows; the suite checks that a click becomes an answer,
// a refusal, a vote, a late notice or a dismissal the same way everywhere,
// in the words of domain.Words.
//
// Outbound behaviour every adapter shares (decided here, asserted by Run):
//   - A 429 with a short Retry-After, and a few 5xx answers, are retried
//     inside the adapter: Post and Finish succeed, and a post leaves
//     exactly one message.
//   - A failure that outlasts those retries is returned as transient
//     (lifecycle.IsPermanent false), so the Router retries it later.
//   - Network failures are transient too, and their errors carry no
//     token (Discord's webhook URLs hold interaction tokens).
//   - Finishing a copy that was deleted, or posting to a channel that does
//     not exist, returns a permanent error (lifecycle.IsPermanent true).
package channeltest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
)

// Op names a Channel call a hook injects failures into.
type Op string

// The calls hooks inject failures into.
const (
	OpPost   Op = "post"   // Channel.Post
	OpFinish Op = "finish" // Channel.Finish
)

// Env is one adapter under test, built by the adapter's factory against
// its fake platform. Every field is required.
type Env struct {
	// Router has the adapter added as a channel and uses the clock and
	// logger the suite gave the factory.
	Router  *lifecycle.Router
	Channel lifecycle.Channel
	// Channel is a channel the fake knows; Missing one it does not.
	Target  domain.Target
	Missing string
	// Delete deletes a posted copy on the fake, as a person would.
	Delete func(t domain.Target)
	// RateLimit makes the next call of op answer 429 with a Retry-After
	// of about a second or less.
	RateLimit func(op Op)
	// Fail makes the next n calls of op answer HTTP status.
	Fail func(op Op, status, n int)
	// Text is every text of the copy as the fake holds it, as a person
	// reads it; Live reports whether it still shows enabled controls;
	// Count is how many messages the fake holds in t's channel.
	Text  func(t domain.Target) string
	Live  func(t domain.Target) bool
	Count func(t domain.Target) int
	// Unreachable builds another adapter on Router whose platform API
	// address refuses connections, logging where Logs reads.
	Unreachable func() lifecycle.Channel
	// Secrets must never appear in an error or in Logs (bot token,
	// signing secret or public key, app token).
	Secrets []string
	// Logs is everything the adapter logged so far.
	Logs func() string
}

// Factory builds an Env; it passes rc (Clock and Logger set by the suite)
// to lifecycle.NewRouter after adding its Store.
type Factory func(t *testing.T, rc lifecycle.RouterConfig) *Env

// Clock is the suite's settable clock.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// Now implements lifecycle.Clock.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

// Add moves the clock forward.
func (c *Clock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// suite is one case's adapter, clock and the errors seen.
type suite struct {
	t     *testing.T
	env   *Env
	clock *Clock
	logs  *logBuffer
	errs  []error
}

func start(t *testing.T, newEnv Factory) *suite {
	t.Helper()
	clock := &Clock{now: time.Now().UTC()}
	logs := &logBuffer{}
	rc := lifecycle.RouterConfig{Clock: clock, Logger: logs.logger(),
		CopyRetryBackoff: 5 * time.Millisecond, CopyRetryFor: time.Second,
		HasWebhookSecret: func(string) bool { return true }}
	s := &suite{t: t, env: newEnv(t, rc), clock: clock, logs: logs}
	t.Cleanup(s.checkSecrets)
	return s
}

// checkSecrets: no secret in any error the case saw, the router's log or
// the adapter's log.
func (s *suite) checkSecrets() {
	all := s.env.Logs() + "\n" + s.logs.String()
	for _, err := range s.errs {
		all += "\n" + err.Error()
	}
	for _, secret := range s.env.Secrets {
		if secret != "" && strings.Contains(all, secret) {
			s.t.Errorf("a secret (%d characters, starting %.4q) appears in an error or log line", len(secret), secret)
		}
	}
}

// ask asks req on the env's target and returns the posted question.
func (s *suite) ask(req domain.AskRequest) *domain.Question {
	s.t.Helper()
	if req.AgentID == "" {
		req.AgentID, req.AgentName = "deploy-bot", "Deploy bot"
	}
	if req.RunID == "" {
		req.RunID = "run-1"
	}
	if req.Targets == nil {
		req.Targets = []domain.Target{s.env.Target}
	}
	res, err := s.env.Router.Ask(context.Background(), "ops", &req, "")
	if err != nil {
		s.t.Fatalf("ask: %v", err)
	}
	q := res.Question
	for _, tg := range q.Targets {
		if tg.Error != "" {
			s.t.Fatalf("posting to %s failed: %s", tg.Channel, tg.Error)
		}
		if tg.MessageTS == "" {
			s.t.Fatalf("posting to %s left no message reference", tg.Channel)
		}
	}
	return q
}

// copyOf returns the question's one posted copy.
func (s *suite) copyOf(q *domain.Question) domain.Target {
	s.t.Helper()
	if len(q.Targets) != 1 {
		s.t.Fatalf("want one copy, got %+v", q.Targets)
	}
	return q.Targets[0]
}

// settle waits for the router's background copy updates.
func (s *suite) settle() {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.env.Router.Flush(ctx); err != nil {
		s.t.Fatalf("flush: %v", err)
	}
}

// person is someone on the adapter's platform.
func (s *suite) person(name string) domain.Person {
	return domain.Person{Platform: s.env.Channel.Platform(), ID: "U-" + name, Name: name}
}

// Run runs every case against adapters newEnv builds, one env per case.
func Run(t *testing.T, newEnv Factory) {
	t.Run("PostEveryShape", func(t *testing.T) { postEveryShape(t, newEnv) })
	t.Run("FinishEveryOutcome", func(t *testing.T) { finishEveryOutcome(t, newEnv) })
	t.Run("FinishDeletedCopy", func(t *testing.T) { finishDeletedCopy(t, newEnv) })
	t.Run("PostToMissingChannel", func(t *testing.T) { postToMissingChannel(t, newEnv) })
	t.Run("RateLimitAndServerErrors", func(t *testing.T) { rateLimitAndServerErrors(t, newEnv) })
	t.Run("LastingOutage", func(t *testing.T) { lastingOutage(t, newEnv) })
	t.Run("PlatformUnreachable", func(t *testing.T) { platformUnreachable(t, newEnv) })
}

// RunQueued runs the cases that apply to a surface whose Post and Finish
// only queue a delivery on the durable outbox (email): every shape is
// posted and every outcome shown. Its platform's failures are the
// deliverer's (retries, refusals, give-up), tested with the surface's
// sender. Env.Text, Live and Count wait for the queued deliveries; Delete,
// RateLimit, Fail, Missing and Unreachable are not used.
func RunQueued(t *testing.T, newEnv Factory) {
	t.Run("PostEveryShape", func(t *testing.T) { postEveryShape(t, newEnv) })
	t.Run("FinishEveryOutcome", func(t *testing.T) { finishEveryOutcome(t, newEnv) })
}
