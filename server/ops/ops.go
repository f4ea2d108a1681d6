// Package ops is what the person on call for the bridge sees of it beyond
// questions and answers, as Prometheus metrics: what waits (pending
// questions, parked waiters, the resume webhook queue and its age), every
// call to the outside by platform, method and outcome (through
// outbound.Transport), Redis commands (a go-redis hook), inbound chat
// interactions and how fast they were acknowledged, API requests by route
// and status class, and lifecycle steps (reminders, escalations, defaults,
// supersedes, vetoes). Labels are few-valued: never a question id, a
// person or free text. docs/operations.md lists every metric.
package ops

import (
	"context"
	"errors"
	"go.opentelemetry.io/otel/trace"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/outbound"
	"github.com/askbridge/askbridge/lifecycle"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// Metrics are the operational metrics, registered on one registry. It is
// an outbound.Observer, a lifecycle.Observer and StepObserver, and a
// go-redis hook.
type Metrics struct {
	log *slog.Logger

	inboundTracer trace.Tracer // TraceInbound

	calls      *prometheus.CounterVec
	callTime   *prometheus.HistogramVec
	retryAfter *prometheus.HistogramVec

	redisTime   *prometheus.HistogramVec
	redisErrors *prometheus.CounterVec

	interactions *prometheus.CounterVec
	ackTime      *prometheus.HistogramVec
	requests     *prometheus.CounterVec

	events *prometheus.CounterVec
}

var (
	_ outbound.Observer      = (*Metrics)(nil)
	_ lifecycle.Observer     = (*Metrics)(nil)
	_ lifecycle.StepObserver = (*Metrics)(nil)
	_ redis.Hook             = (*Metrics)(nil)
)

// Lifecycle events counted by askbridge_lifecycle_events_total.
const (
	EventReminder   = lifecycle.StepReminder
	EventEscalation = lifecycle.StepEscalation
	EventDefault    = "default_applied"
	EventSupersede  = "superseded"
	EventVeto       = "vetoed"
)

// New registers the metrics on reg. log (nil: none) hears of failures to
// read the store's backlog.
func New(reg prometheus.Registerer, log *slog.Logger) *Metrics {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Metrics{log: log}
	m.calls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "askbridge_outbound_requests_total",
		Help: "Calls to the outside (chat platforms, pagers, mail, resume webhooks) by platform, method and outcome (ok, rate_limited, client_error, server_error, network)."},
		[]string{"platform", "method", "outcome"})
	m.callTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "askbridge_outbound_request_duration_seconds",
		Help:    "Time until the response headers of calls to the outside, by platform and method.",
		Buckets: []float64{.025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20}}, []string{"platform", "method"})
	m.retryAfter = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "askbridge_outbound_retry_after_seconds",
		Help:    "Waits the outside asked for with Retry-After (429 or 503), by platform.",
		Buckets: []float64{.1, .5, 1, 2, 5, 10, 30, 60, 300}}, []string{"platform"})
	m.redisTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "askbridge_redis_command_duration_seconds",
		Help:    "Redis round trips, by kind (command or pipeline).",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1}}, []string{"kind"})
	m.redisErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "askbridge_redis_errors_total",
		Help: "Redis commands that failed (not a missing key), by command."}, []string{"command"})
	m.interactions = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "askbridge_interactions_total",
		Help: "People's answers, votes and clicks by platform and result (answered, voted, stale, refused with the error code as reason, bad_signature)."},
		[]string{"platform", "result", "reason"})
	m.ackTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "askbridge_interaction_ack_seconds",
		Help:    "Time to acknowledge an inbound platform request (Slack and Discord allow 3 s), by platform.",
		Buckets: []float64{.05, .1, .25, .5, 1, 1.5, 2, 2.5, 3, 5}}, []string{"platform"})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "askbridge_http_requests_total",
		Help: "HTTP requests served, by route and status class (2xx, 4xx, …; hijacked for parked long-polls)."},
		[]string{"route", "code"})
	m.events = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "askbridge_lifecycle_events_total",
		Help: "Lifecycle steps by project and event (reminder, escalation, default_applied, superseded, vetoed)."},
		[]string{"project", "event"})
	reg.MustRegister(m.calls, m.callTime, m.retryAfter, m.redisTime, m.redisErrors, m.interactions, m.ackTime,
		m.requests, m.events)
	return m
}

// Call implements outbound.Observer.
func (m *Metrics) Call(platform, method, outcome string, took time.Duration) {
	m.calls.WithLabelValues(platform, method, outcome).Inc()
	m.callTime.WithLabelValues(platform, method).Observe(took.Seconds())
}

// RetryAfter implements outbound.Observer.
func (m *Metrics) RetryAfter(platform string, wait time.Duration) {
	m.retryAfter.WithLabelValues(platform).Observe(wait.Seconds())
}

// Transport wraps next (nil: http.DefaultTransport) so its calls count as
// platform's, methods named by method (nil: outbound.PathMethod). This is
// the one line a new surface needs (see outbound).
func (m *Metrics) Transport(next http.RoundTripper, platform string, method outbound.MethodFunc) http.RoundTripper {
	return outbound.Transport(next, platform, m, method)
}

// Transitioned implements lifecycle.Observer: defaults, supersedes and
// vetoes.
func (m *Metrics) Transitioned(q *domain.Question) {
	switch {
	case q.Status == domain.StatusAnswered && q.Defaulted:
		m.events.WithLabelValues(q.ProjectID, EventDefault).Inc()
	case q.Status == domain.StatusCancelled && q.CancelReason == domain.CancelSuperseded:
		m.events.WithLabelValues(q.ProjectID, EventSupersede).Inc()
	case q.Status == domain.StatusAnswered && q.ApprovalsRequired > 1 && len(q.Questions) > 0:
		if o, ok := domain.MatchOption(q.Questions[0], q.Answers[q.Questions[0].Question]); ok && o.Veto {
			m.events.WithLabelValues(q.ProjectID, EventVeto).Inc()
		}
	}
}

// Stepped implements lifecycle.StepObserver.
func (m *Metrics) Stepped(project, step string) { m.events.WithLabelValues(project, step).Inc() }

// Interacted implements lifecycle.StepObserver.
func (m *Metrics) Interacted(platform, result, reason string) {
	m.interactions.WithLabelValues(platform, result, reason).Inc()
}

// BadSignature counts an inbound request refused for its signature.
func (m *Metrics) BadSignature(platform string) {
	m.interactions.WithLabelValues(platform, "bad_signature", "").Inc()
}

// Acked observes the time an inbound platform request took to answer.
func (m *Metrics) Acked(platform string, took time.Duration) {
	m.ackTime.WithLabelValues(platform).Observe(took.Seconds())
}

// DialHook implements redis.Hook.
func (m *Metrics) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook: each command's latency and errors.
func (m *Metrics) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmd)
		m.redisTime.WithLabelValues("command").Observe(time.Since(start).Seconds())
		if redisFailed(err) {
			m.redisErrors.WithLabelValues(cmd.Name()).Inc()
		}
		return err
	}
}

// ProcessPipelineHook implements redis.Hook: a pipeline is one round trip;
// its failed commands count each.
func (m *Metrics) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmds)
		m.redisTime.WithLabelValues("pipeline").Observe(time.Since(start).Seconds())
		for _, c := range cmds {
			if redisFailed(c.Err()) {
				m.redisErrors.WithLabelValues(c.Name()).Inc()
			}
		}
		return err
	}
}

// redisFailed: a missing key is an answer, NOSCRIPT is answered by
// loading the script, and a caller that went away is not Redis's fault.
func redisFailed(err error) bool {
	return err != nil && !errors.Is(err, redis.Nil) && !errors.Is(err, context.Canceled) &&
		!strings.HasPrefix(err.Error(), "NOSCRIPT")
}
