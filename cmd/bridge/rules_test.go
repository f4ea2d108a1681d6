package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/server/api"
	"github.com/askbridge/askbridge/server/ops"
	"github.com/askbridge/askbridge/store"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// touchOps registers the operational metrics (package ops) on m's registry,
// with the embedded store's gauges, and gives each a sample.
func touchOps(t *testing.T, m *api.Metrics) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	o := ops.New(m.Registry(), nil)
	require.True(t, o.WatchStore(m.Registry(), st), "the store reports its backlog")
	now := time.Now().UTC()
	items := []domain.Item{{Question: "x?", Options: []domain.Option{{Label: "a"}, {Label: "b"}}}}
	_, err = st.Create(ctx, &domain.Question{ID: "q1", ProjectID: "p", RunID: "r", AgentID: "a", Kind: domain.KindQuestion,
		Status: domain.StatusPending, Questions: items, Targets: []domain.Target{}, CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(time.Hour), Fingerprint: domain.Fingerprint(items)})
	require.NoError(t, err)
	_, stop := st.Watch("p", "q1")
	t.Cleanup(stop)

	o.Call("slack", "chat.postMessage", "ok", time.Second)
	o.RetryAfter("slack", time.Second)
	st.Client().AddHook(o)
	require.NoError(t, st.Ping(ctx))
	_ = o.ProcessHook(func(context.Context, redis.Cmder) error { return errors.New("ERR broken") })(ctx, redis.NewStatusCmd(ctx, "ping"))
	o.Interacted("slack", "answered", "")
	o.Stepped("p", ops.EventReminder)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /slack/interactions", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(401) })
	h := o.Routes(mux, mux, func(string) (string, bool) { return "slack", true })
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/slack/interactions", nil))
}

// promqlMetrics returns the metric names a PromQL expression selects; it
// fails the test when the expression does not parse.
func promqlMetrics(t *testing.T, expr string) []string {
	t.Helper()
	e, err := parser.ParseExpr(expr)
	require.NoError(t, err, "PromQL: %s", expr)
	var out []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			name := vs.Name
			for _, m := range vs.LabelMatchers {
				if m.Name == "__name__" {
					name = m.Value
				}
			}
			out = append(out, name)
		}
		return nil
	})
	return out
}

// TestAlertRulesParseAndQueryServedMetrics validates
// deploy/prometheus/askbridge-rules.yaml as Prometheus loads it (rule
// names, durations, PromQL, templates) and checks every metric it queries
// is served, and that it alerts on what the issue lists.
func TestAlertRulesParseAndQueryServedMetrics(t *testing.T) {
	groups, errs := rulefmt.ParseFile("../../deploy/prometheus/askbridge-rules.yaml", false)
	require.Empty(t, errs, "Prometheus's rule parser accepts the file")
	known := exposedMetrics(t)
	alerts := map[string]bool{}
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			require.NotEmpty(t, r.Alert, "every rule is an alert")
			alerts[r.Alert] = true
			assert.NotEmpty(t, r.Annotations["summary"], "%s has a summary", r.Alert)
			names := promqlMetrics(t, r.Expr)
			require.NotEmpty(t, names, r.Alert)
			for _, n := range names {
				assert.True(t, known[n], "alert %s queries %s, which /metrics does not serve", r.Alert, n)
			}
		}
	}
	for _, a := range []string{"AskbridgeResumeWebhooksFailing", "AskbridgeResumeBacklogAging", "AskbridgeRateLimitedSustained",
		"AskbridgeAckNearBudget", "AskbridgeRedisErrors", "AskbridgeExpiredShareRising"} {
		assert.True(t, alerts[a], "the rules alert on %s", a)
	}
}

// TestGrafanaDashboardIsValidPromQL parses every panel query of the
// dashboard as PromQL (Grafana's variables put in) and checks each metric
// it selects is served, so a misspelt or removed metric fails here.
func TestGrafanaDashboardIsValidPromQL(t *testing.T) {
	b, err := os.ReadFile("../../deploy/grafana/askbridge.json")
	require.NoError(t, err)
	var dash map[string]any
	require.NoError(t, json.Unmarshal(b, &dash))
	known := exposedMetrics(t)
	known["up"] = true
	vars := strings.NewReplacer("$__rate_interval", "5m", "$job", ".*", "$project", ".*")
	shown := map[string]bool{}
	for _, q := range dashboardQueries(t, dash) {
		if strings.HasPrefix(q, "label_values") {
			continue
		}
		for _, n := range promqlMetrics(t, vars.Replace(q)) {
			shown[n] = true
			assert.True(t, known[n], "the dashboard queries %s, which /metrics does not serve", n)
		}
	}
	for _, n := range []string{"askbridge_questions_pending", "askbridge_waiters", "askbridge_webhook_queue_deliveries",
		"askbridge_webhook_queue_oldest_age_seconds", "askbridge_outbound_requests_total",
		"askbridge_outbound_request_duration_seconds_bucket", "askbridge_outbound_retry_after_seconds_sum",
		"askbridge_interactions_total", "askbridge_interaction_ack_seconds_bucket", "askbridge_http_requests_total",
		"askbridge_redis_command_duration_seconds_bucket", "askbridge_redis_errors_total", "askbridge_lifecycle_events_total"} {
		assert.True(t, shown[n], "the dashboard shows %s", n)
	}
}
