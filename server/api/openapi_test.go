package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/askbridge/askbridge/docs"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// spec is the validator of docs/openapi.yaml, built once per test binary.
// Whether a status is listed at all is checkStatus's to say, so the
// validator checks bodies and headers only.
var spec = sync.OnceValues(func() (validator.Validator, error) {
	doc, err := libopenapi.NewDocument(docs.OpenAPI)
	if err != nil {
		return nil, err
	}
	v, errs := validator.NewValidator(doc, config.WithoutResponseStatusValidation())
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return v, nil
})

// operation is one operation of docs/openapi.yaml: its path template, a
// pattern matching the paths it serves, and the statuses it lists.
type operation struct {
	method, path string
	re           *regexp.Regexp
	statuses     []string
}

var operations = sync.OnceValues(func() ([]operation, error) {
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(docs.OpenAPI, &doc); err != nil {
		return nil, err
	}
	var ops []operation
	for path, item := range doc.Paths {
		segs := strings.Split(path, "/")
		for i, s := range segs {
			if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
				segs[i] = "[^/]+"
			} else {
				segs[i] = regexp.QuoteMeta(s)
			}
		}
		re := regexp.MustCompile("^" + strings.Join(segs, "/") + "$")
		for key, v := range item {
			op, ok := v.(map[string]any)
			responses, _ := op["responses"].(map[string]any)
			if !ok || responses == nil {
				continue // the path's parameters, not an operation
			}
			ops = append(ops, operation{method: strings.ToUpper(key), path: path, re: re,
				statuses: slices.Sorted(maps.Keys(responses))})
		}
	}
	return ops, nil
})

// seen counts the responses the API tests checked, by method, path
// template and status (see TestMain).
var seen = struct {
	sync.Mutex
	m map[string]int
}{m: map[string]int{}}

// operationFor finds the operation of docs/openapi.yaml that serves method
// and path.
func operationFor(method, path string) (operation, error) {
	ops, err := operations()
	if err != nil {
		return operation{}, err
	}
	for _, op := range ops {
		if op.method == method && op.re.MatchString(path) {
			return op, nil
		}
	}
	return operation{}, nil
}

// undocumentedStatus says what is wrong when the document does not list
// status for the operation that serves method and path: neither the code
// itself nor its range (5XX); a default response lists no status. "" when
// it is listed, or when the document has no such operation (paths and
// methods the API does not have: the 404 and 405 tests).
func undocumentedStatus(method, path string, status int) string {
	op, err := operationFor(method, path)
	switch {
	case err != nil:
		return "docs/openapi.yaml: " + err.Error()
	case op.path == "":
		return ""
	}
	code := strconv.Itoa(status)
	if slices.Contains(op.statuses, code) || slices.Contains(op.statuses, code[:1]+"XX") {
		return ""
	}
	return fmt.Sprintf("%s %s → %d: docs/openapi.yaml does not list %d for %s %s (it lists %s)",
		method, path, status, status, op.method, op.path, strings.Join(op.statuses, ", "))
}

// checkStatus fails the test when the API answered with a status the
// document does not list for the operation, and counts the response in
// seen: every response of the API tests goes through it (through
// checkSpec, or alone for streams whose bodies it cannot read).
func checkStatus(t interface {
	Helper()
	Error(args ...any)
}, method, path string, status int) {
	t.Helper()
	if op, _ := operationFor(method, path); op.path != "" {
		seen.Lock()
		seen.m[fmt.Sprintf("%s %s %d", op.method, op.path, status)]++
		seen.Unlock()
	}
	if msg := undocumentedStatus(method, path, status); msg != "" {
		t.Error(msg)
	}
}

// TestMain reports, with -v, each documented status of each operation that
// no test answered with: a place where the document may claim what the
// code does not do.
func TestMain(m *testing.M) {
	code := m.Run()
	if testing.Verbose() && code == 0 {
		ops, _ := operations()
		var missing []string
		for _, op := range ops {
			for _, s := range op.statuses {
				if s != "default" && !strings.HasSuffix(s, "XX") && seen.m[op.method+" "+op.path+" "+s] == 0 {
					missing = append(missing, op.method+" "+op.path+" "+s)
				}
			}
		}
		slices.Sort(missing)
		fmt.Printf("openapi: %d (method, path, status) answered by the tests; documented but never answered:\n  %s\n",
			len(seen.m), strings.Join(missing, "\n  "))
	}
	os.Exit(code)
}

// checkSpec fails the test when a response does not match the OpenAPI
// document, in its status (checkStatus), body or headers: every response
// of the API tests goes through it, so the document cannot drift from the
// code. Requests to paths the API does not have (404, 405 tests) have
// nothing to match.
func checkSpec(t *testing.T, req *http.Request, res *http.Response, raw []byte) {
	t.Helper()
	checkStatus(t, req.Method, req.URL.Path, res.StatusCode)
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
		"GET /api/projects/{p}/agent-runs/{run}/questions", "GET /api/projects/{p}/agents/{agent}/tools", "GET /api/projects/{p}/routes",
		"GET /api/projects/{p}/events", "GET /api/projects/{p}/live", "GET /api/projects/{p}/notifications",
		"POST /api/projects/{p}/notifications/{id}/read", "GET /api/projects/{p}/audit",
		"GET /healthz", "GET /readyz", "GET /metrics", "GET /api/openapi.json", "GET /api/admin/backup",
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

	// A status the operation does not list fails checkSpec, though its
	// body is a well-formed error.
	respond := "/api/projects/ops/agent-questions/q/respond"
	assert.Empty(t, undocumentedStatus("POST", respond, 409))
	assert.Empty(t, undocumentedStatus("POST", respond, 503))
	assert.Contains(t, undocumentedStatus("POST", respond, 410), "does not list 410 for POST /api/projects/{p}/agent-questions/{id}/respond")
	assert.NotEmpty(t, undocumentedStatus("GET", "/api/projects/ops/agent-questions", 404), "list answers no 404")
	assert.NotEmpty(t, undocumentedStatus("GET", "/api/projects/ops/agents/bot/tools", 503), "tools reads no store")
	assert.NotEmpty(t, undocumentedStatus("GET", "/api/openapi.json", 401))
	assert.Empty(t, undocumentedStatus("DELETE", respond, 405), "no such operation: nothing to list")
	var failed fakeT
	checkStatus(&failed, "POST", respond, 410)
	assert.NotEmpty(t, failed.errors, "checkStatus fails the test")
}

// fakeT records the errors a check reports.
type fakeT struct{ errors []string }

func (f *fakeT) Helper()           {}
func (f *fakeT) Error(args ...any) { f.errors = append(f.errors, fmt.Sprint(args...)) }
