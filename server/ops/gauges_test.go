package ops

import (
	"context"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type backlogOf []lifecycle.Backlog

func (b backlogOf) Backlog(context.Context) ([]lifecycle.Backlog, error) { return b, nil }
func (b backlogOf) Waiters() []lifecycle.Waiters                         { return nil }

// TestQueuedDeliveriesBySender: the pages and mails queued are served by
// sender next to the resume webhooks; a project with nothing queued still
// serves webhook 0.
func TestQueuedDeliveriesBySender(t *testing.T) {
	now := time.Now()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(&stats{s: backlogOf{
		{ProjectID: "ops", Pending: 2, Deliveries: 4, OldestDelivery: now.Add(-time.Minute),
			BySender: map[string]int{"webhook": 1, "email": 2, "pagerduty": 1}},
		{ProjectID: "quiet"},
	}, now: func() time.Time { return now }, m: New(prometheus.NewRegistry(), nil)})
	fams, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, f := range fams {
		if f.GetName() != "askbridge_delivery_queue_deliveries" {
			continue
		}
		require.Equal(t, dto.MetricType_GAUGE, f.GetType())
		for _, m := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			got[l["project"]+" "+l["sender"]] = m.GetGauge().GetValue()
		}
	}
	assert.Equal(t, map[string]float64{"ops email": 2, "ops pagerduty": 1, "ops webhook": 1, "quiet webhook": 0}, got)
	problems, err := promlint.NewWithMetricFamilies(fams).Lint()
	require.NoError(t, err)
	assert.Empty(t, problems)
}
