package main

import (
	"bufio"
	"encoding/json"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/server/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exposedMetrics returns the names of every series /metrics serves once
// each metric has a sample (histograms with _bucket, _sum and _count).
func exposedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	m := api.NewMetrics()
	now := time.Now()
	m.Asked("p")
	m.Transitioned(&domain.Question{ProjectID: "p", Status: domain.StatusAnswered, CreatedAt: now.Add(-time.Minute), RespondedAt: &now})
	m.Delivery("delivered")
	touchOps(t, m)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	names := map[string]bool{}
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			names[f[2]] = true
			switch f[3] {
			case "histogram":
				names[f[2]+"_bucket"], names[f[2]+"_sum"], names[f[2]+"_count"] = true, true, true
			case "summary":
				names[f[2]+"_sum"], names[f[2]+"_count"] = true, true
			}
		}
	}
	require.True(t, names["askbridge_questions_total"], "scraped the bridge's metrics")
	return names
}

// dashboardQueries returns every PromQL query of the dashboard: panel
// targets and template variables.
func dashboardQueries(t *testing.T, v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && (k == "expr" || k == "definition") {
				out = append(out, s)
			}
			if q, ok := e.(map[string]any); ok && k == "query" {
				if s, ok := q["query"].(string); ok {
					out = append(out, s)
				}
			}
			out = append(out, dashboardQueries(t, e)...)
		}
	case []any:
		for _, e := range v {
			out = append(out, dashboardQueries(t, e)...)
		}
	}
	return out
}

// TestGrafanaDashboardQueriesOnlyMetricsTheBridgeServes keeps
// deploy/grafana/askbridge.json valid JSON whose every metric exists.
func TestGrafanaDashboardQueriesOnlyMetricsTheBridgeServes(t *testing.T) {
	b, err := os.ReadFile("../../deploy/grafana/askbridge.json")
	require.NoError(t, err)
	var dash map[string]any
	require.NoError(t, json.Unmarshal(b, &dash), "the dashboard is valid JSON")
	assert.Equal(t, "askbridge", dash["uid"])
	panels, _ := dash["panels"].([]any)
	require.NotEmpty(t, panels)

	known := exposedMetrics(t)
	known["up"] = true // Prometheus's own, one per scrape target
	queries := dashboardQueries(t, dash)
	require.GreaterOrEqual(t, len(queries), 10)
	// A metric is a name followed by a selector or a range, or the first
	// argument of label_values; every one of ours starts askbridge_, go_ or process_.
	selected := regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\s*[{\[]`)
	labelValues := regexp.MustCompile(`label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)`)
	prefixed := regexp.MustCompile(`\b((?:askbridge|go|process)_[a-z0-9_]+)`)
	used := map[string]bool{}
	for _, q := range queries {
		for _, re := range []*regexp.Regexp{selected, labelValues, prefixed} {
			for _, m := range re.FindAllStringSubmatch(q, -1) {
				used[m[1]] = true
			}
		}
		if !strings.HasPrefix(q, "label_values") {
			assert.Contains(t, q, `job=~"$job"`, "every query is filtered by the job variable: %s", q)
		}
	}
	for name := range used {
		assert.True(t, known[name], "the dashboard queries %s, which /metrics does not serve", name)
	}
	for _, name := range []string{"askbridge_questions_asked_total", "askbridge_questions_total",
		"askbridge_time_to_answer_seconds_bucket", "askbridge_webhook_deliveries_total"} {
		assert.True(t, used[name], "the dashboard shows %s", name)
	}
}
