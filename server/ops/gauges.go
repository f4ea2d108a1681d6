package ops

import (
	"context"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/prometheus/client_golang/prometheus"
)

// statsTimeout bounds reading the store's backlog during one scrape.
const statsTimeout = 3 * time.Second

var (
	pendingDesc = prometheus.NewDesc("askbridge_questions_pending",
		"Questions waiting for an answer, by project (read from the store: the same on every replica).", []string{"project"}, nil)
	queuedDesc = prometheus.NewDesc("askbridge_webhook_queue_deliveries",
		"Resume webhooks queued (due, in flight or waiting for a retry), by project (read from the store).", []string{"project"}, nil)
	bySenderDesc = prometheus.NewDesc("askbridge_delivery_queue_deliveries",
		"Deliveries queued (due, in flight or waiting for a retry), by project and sender: webhook for resume webhooks, else the surface or pager sending pages and mails (email, pagerduty, …); read from the store.",
		[]string{"project", "sender"}, nil)
	oldestDesc = prometheus.NewDesc("askbridge_webhook_queue_oldest_age_seconds",
		"Age of the oldest queued resume webhook, by project (0 when none is queued).", []string{"project"}, nil)
	waitersDesc = prometheus.NewDesc("askbridge_waiters",
		"Callers parked on this replica waiting for a question (long-polls, MCP calls: kind question) or a project's events (SSE, WebSocket: kind stream), by project.",
		[]string{"project", "kind"}, nil)
	statsUpDesc = prometheus.NewDesc("askbridge_store_stats_up",
		"1 when this scrape read the store's backlog, 0 when reading it failed.", nil, nil)
)

// stats exports a lifecycle.Stats as gauges, read at each scrape.
type stats struct {
	s   lifecycle.Stats
	now func() time.Time
	m   *Metrics
}

// WatchStore exports the store's backlog and this replica's waiters as
// gauges, when the store has the lifecycle.Stats ability; it reports
// whether it does. Without it those gauges are not exported.
func (m *Metrics) WatchStore(reg prometheus.Registerer, st lifecycle.Store) bool {
	s, ok := st.(lifecycle.Stats)
	if !ok {
		return false
	}
	reg.MustRegister(&stats{s: s, now: time.Now, m: m})
	return true
}

func (c *stats) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{pendingDesc, queuedDesc, bySenderDesc, oldestDesc, waitersDesc, statsUpDesc} {
		ch <- d
	}
}

func (c *stats) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), statsTimeout)
	defer cancel()
	backlog, err := c.s.Backlog(ctx)
	up := 1.0
	if err != nil {
		up = 0
		c.m.log.Warn("reading the store's backlog for /metrics failed", "err", err)
	}
	ch <- prometheus.MustNewConstMetric(statsUpDesc, prometheus.GaugeValue, up)
	now := c.now()
	for _, b := range backlog {
		ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(b.Pending), b.ProjectID)
		ch <- prometheus.MustNewConstMetric(queuedDesc, prometheus.GaugeValue, float64(b.Deliveries), b.ProjectID)
		// webhook is always served (0 when none is queued), so a rule on
		// it sees an empty queue rather than no data.
		if _, ok := b.BySender[lifecycle.SenderWebhook]; !ok {
			ch <- prometheus.MustNewConstMetric(bySenderDesc, prometheus.GaugeValue, 0, b.ProjectID, lifecycle.SenderWebhook)
		}
		for sender, n := range b.BySender {
			ch <- prometheus.MustNewConstMetric(bySenderDesc, prometheus.GaugeValue, float64(n), b.ProjectID, sender)
		}
		age := 0.0
		if !b.OldestDelivery.IsZero() {
			age = max(now.Sub(b.OldestDelivery).Seconds(), 0)
		}
		ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, age, b.ProjectID)
	}
	for _, w := range c.s.Waiters() {
		ch <- prometheus.MustNewConstMetric(waitersDesc, prometheus.GaugeValue, float64(w.Question), w.ProjectID, "question")
		ch <- prometheus.MustNewConstMetric(waitersDesc, prometheus.GaugeValue, float64(w.Stream), w.ProjectID, "stream")
	}
}

// WatchAccepts exports how often, and how long in all, the server held
// back accepting new connections while a burst of them was being worked
// on (internal/admit): waits reads both.
func (m *Metrics) WatchAccepts(reg prometheus.Registerer, waits func() (int64, time.Duration)) {
	reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "askbridge_accept_waits_total",
			Help: "Times this replica held back accepting a new connection because every place among new connections busy with their first request was taken (128 per core by default; a burst of connects; rising without one: connections that send their request slowly)."},
			func() float64 { n, _ := waits(); return float64(n) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "askbridge_accept_wait_seconds_total",
			Help: "Time this replica spent holding back accepting new connections (askbridge_accept_waits_total), in all."},
			func() float64 { _, d := waits(); return d.Seconds() }))
}
