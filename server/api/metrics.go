package api

import (
	"net/http"

	"github.com/askbridge/askbridge/domain"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the bridge's Prometheus metrics. Each replica counts what it
// did itself; sum across replicas.
type Metrics struct {
	reg        *prometheus.Registry
	asked      *prometheus.CounterVec
	finished   *prometheus.CounterVec
	toAnswer   *prometheus.HistogramVec
	deliveries *prometheus.CounterVec
	senders    *prometheus.CounterVec
}

// NewMetrics registers the metrics on a fresh registry.
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.asked = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "askbridge_questions_asked_total",
		Help: "Questions created, by project."}, []string{"project"})
	m.finished = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "askbridge_questions_total",
		Help: "Questions that reached a final state, by project and outcome (answered, expired, cancelled_user, cancelled_agent, superseded)."},
		[]string{"project", "outcome"})
	m.toAnswer = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "askbridge_time_to_answer_seconds",
		Help:    "Time from asking to the answer.",
		Buckets: []float64{5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600}}, []string{"project"})
	m.deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "askbridge_webhook_deliveries_total",
		Help: "Resume webhook delivery attempts, by outcome (delivered, retried, failed)."}, []string{"outcome"})
	m.senders = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "askbridge_sender_deliveries_total",
		Help: "Attempts of the deliveries that surfaces and pagers queue (pages, mails), by sender and outcome (sent, retried, failed, dropped)."},
		[]string{"sender", "outcome"})
	m.reg.MustRegister(m.asked, m.finished, m.toAnswer, m.deliveries, m.senders,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry is where the bridge's other metrics register (package ops), so
// /metrics serves them all.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves /metrics.
func (m *Metrics) Handler() http.Handler { return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}) }

// Asked counts a new question.
func (m *Metrics) Asked(project string) { m.asked.WithLabelValues(project).Inc() }

// Transitioned counts a transition: Metrics is a lifecycle.Observer.
func (m *Metrics) Transitioned(q *domain.Question) {
	outcome := string(q.Status)
	if q.Status == domain.StatusCancelled {
		outcome = "cancelled_" + q.CancelReason
		if q.CancelReason == domain.CancelSuperseded {
			outcome = "superseded"
		}
	}
	m.finished.WithLabelValues(q.ProjectID, outcome).Inc()
	if q.Status == domain.StatusAnswered && q.RespondedAt != nil {
		m.toAnswer.WithLabelValues(q.ProjectID).Observe(q.RespondedAt.Sub(q.CreatedAt).Seconds())
	}
}

// Delivery counts a webhook delivery attempt.
func (m *Metrics) Delivery(outcome string) { m.deliveries.WithLabelValues(outcome).Inc() }

// SenderDelivery counts an attempt of a page or a mail (resume.Config.ObserveSender).
func (m *Metrics) SenderDelivery(sender, outcome string) {
	m.senders.WithLabelValues(sender, outcome).Inc()
}
