package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/askbridge/askbridge/docs"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// spec is the validator of docs/openapi.yaml, built once per test binary.
var spec = sync.OnceValues(func() (validator.Validator, error) {
	doc, err := libopenapi.NewDocument(docs.OpenAPI)
	if err != nil {
		return nil, err
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return v, nil
})

// checkSpec fails the test when a response does not match the OpenAPI
// document: every response of the API tests goes through it, so the
// document cannot drift from the code. Requests to paths the API does not
// have (404, 405 tests) have nothing to match.
func checkSpec(t *testing.T, req *http.Request, res *http.Response, raw []byte) {
	t.Helper()
	v, err := spec()
	require.NoError(t, err)
	copyRes := *res
	copyRes.Body = io.NopCloser(bytes.NewReader(raw))
	ok, errs := v.ValidateHttpResponse(req, &copyRes)
	if ok {
		return
	}
	var msgs []string
	for _, e := range errs {
		if e.ValidationType == "path" && (res.StatusCode == http.StatusNotFound || res.StatusCode == http.StatusMethodNotAllowed) {
			continue
		}
		m := e.Message + ": " + e.Reason
		for _, se := range e.SchemaValidationErrors {
			m += "\n    " + se.FieldPath + ": " + se.Reason
		}
		msgs = append(msgs, m)
	}
	if len(msgs) > 0 {
		t.Errorf("%s %s → %d does not match docs/openapi.yaml:\n  %s\nbody: %s", req.Method, req.URL.Path, res.StatusCode,
			strings.Join(msgs, "\n  "), raw)
	}
}

// TestOpenAPIDocumentIsValidAndServed: the document is valid OpenAPI 3.1,
// served as JSON at /api/openapi.json, and names every route the API
// registers.
func TestOpenAPIDocumentIsValidAndServed(t *testing.T) {
	v, err := spec()
	require.NoError(t, err)
	ok, errs := v.ValidateDocument()
	for _, e := range errs {
		t.Errorf("%s: %s", e.Message, e.Reason)
	}
	assert.True(t, ok)

	b := newBridge(t, opts{})
	r := b.do("GET", "/api/openapi.json", "", nil)
	require.Equal(t, 200, r.status)
	assert.Equal(t, "3.1.0", r.body["openapi"])
	var fromYAML map[string]any
	require.NoError(t, yaml.Unmarshal(docs.OpenAPI, &fromYAML))
	j, _ := json.Marshal(fromYAML)
	assert.JSONEq(t, string(j), string(r.raw))

	paths := r.body["paths"].(map[string]any)
	for _, route := range []string{
		"POST /api/projects/{p}/agent-questions", "GET /api/projects/{p}/agent-questions",
		"GET /api/projects/{p}/agent-questions/{id}", "GET /api/projects/{p}/agent-questions/{id}/wait",
		"POST /api/projects/{p}/agent-questions/{id}/respond", "POST /api/projects/{p}/agent-questions/{id}/cancel",
		"GET /api/projects/{p}/agent-runs/{run}", "POST /api/projects/{p}/agent-runs/{run}/pause",
		"GET /api/projects/{p}/agent-runs/{run}/questions", "GET /api/projects/{p}/agents/{agent}/tools",
		"GET /api/projects/{p}/events", "GET /api/projects/{p}/live", "GET /api/projects/{p}/notifications",
		"POST /api/projects/{p}/notifications/{id}/read", "GET /api/projects/{p}/audit",
		"GET /healthz", "GET /readyz", "GET /metrics", "GET /api/openapi.json",
	} {
		method, path, _ := strings.Cut(route, " ")
		item, ok := paths[path].(map[string]any)
		if assert.True(t, ok, "no path %s", path) {
			assert.Contains(t, item, strings.ToLower(method), route)
		}
	}
	assert.Contains(t, r.body["webhooks"], "resume")
}

// TestSpecCheckCatchesDrift: a record with a field the document does not
// name, or an error code it does not list, fails the check the API tests'
// helper runs on every response.
func TestSpecCheckCatchesDrift(t *testing.T) {
	v, err := spec()
	require.NoError(t, err)
	check := func(path string, status int, body string) bool {
		req, _ := http.NewRequest("GET", "http://127.0.0.1:8080"+path, nil)
		res := &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: req}
		ok, _ := v.ValidateHttpResponse(req, res)
		return ok
	}
	run := `{"id":"r","project_id":"ops","agent_id":"bot","status":"running","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}`
	assert.True(t, check("/api/projects/ops/agent-runs/r", 200, run))
	assert.False(t, check("/api/projects/ops/agent-runs/r", 200, strings.Replace(run, `"id"`, `"colour":"red","id"`, 1)), "an undocumented field")
	assert.False(t, check("/api/projects/ops/agent-runs/r", 200, strings.Replace(run, `running`, `sleeping`, 1)), "an undocumented status")
	assert.True(t, check("/api/projects/ops/agent-runs/r", 404, `{"error":{"code":"not_found","message":"no run r"}}`))
	assert.False(t, check("/api/projects/ops/agent-runs/r", 404, `{"error":{"code":"gone","message":"no run r"}}`), "an undocumented code")
	q := `{"id":"q","project_id":"ops","run_id":"r","agent_id":"bot","kind":"question","status":"pending","questions":[],"targets":[],"responders":{},"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","expires_at":"2026-01-01T00:00:00Z"}`
	assert.True(t, check("/api/projects/ops/agent-questions/q", 200, q))
	assert.False(t, check("/api/projects/ops/agent-questions/q", 200, strings.Replace(q, `"id"`, `"secret":"x","id"`, 1)), "an undocumented record field")
}
