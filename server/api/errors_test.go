package api_test

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/store/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goInternals matches what a person reading an error should never see: Go
// type names, source positions, internal addresses.
var goInternals = regexp.MustCompile(`core\.|domain\.|lifecycle\.|main\.|\[\]|map\[|struct \{|\.go:\d|dial tcp|\d+\.\d+\.\d+\.\d+:\d+|localhost:\d+`)

// TestBadBodiesAreNamedInPlainWords walks bad request bodies: each gets 400
// with every problem's full path, and no message shows a Go type.
func TestBadBodiesAreNamedInPlainWords(t *testing.T) {
	b := newBridge(t, opts{})
	id := b.ask("ops", "", yesNo("run-1"))
	ask := "/api/projects/ops/agent-questions"
	respond := ask + "/" + id + "/respond"
	cancel := ask + "/" + id + "/cancel"
	cases := []struct {
		name, path, body string
		want             map[string]string // field → words its problem contains
	}{
		{"responded_by a number", respond, `{"response":"y","responded_by":5}`,
			map[string]string{"responded_by": "must be a user id or an object with platform and id"}},
		{"options an object", ask, `{"question":"q","options":{"label":"a"}}`,
			map[string]string{"options": "must be a list of options"}},
		{"option a string", ask, `{"question":"q","options":["a","b"]}`,
			map[string]string{"options[0]": "must be an option", "options[1]": "must be an option"}},
		{"questions an object", ask, `{"questions":{"question":"q"}}`,
			map[string]string{"questions": "must be a list of questions"}},
		{"targets a string", ask, `{"question":"q","targets":"C1"}`,
			map[string]string{"targets": "must be a list of targets"}},
		{"responders a list", ask, `{"question":"q","responders":["slack:U1"]}`,
			map[string]string{"responders": "must be an object with users"}},
		{"resume a string", ask, `{"question":"q","resume":"https://x"}`,
			map[string]string{"resume": "must be an object with url"}},
		{"timeout a bool", ask, `{"question":"q","timeout":true}`,
			map[string]string{"timeout": "must be a duration"}},
		{"run_id a number", ask, `{"question":"q","run_id":42}`,
			map[string]string{"run_id": "must be text"}},
		{"multiSelect a string", ask, `{"question":"q","multiSelect":"yes"}`,
			map[string]string{"multiSelect": "must be true or false"}},
		{"approvals a string", ask, `{"question":"q","approvals_required":"2"}`,
			map[string]string{"approvals_required": "must be a whole number"}},
		{"every unknown field with its path", ask,
			`{"questions":[{"question":"a"},{"question":"b","options":[{"label":"x","icon":"i"},{"label":"y"}]}],"colour":"red","size":2}`,
			map[string]string{"questions[1].options[0].icon": "unknown field", "colour": "unknown field", "size": "unknown field"}},
		{"answers a number", respond, `{"answers":{"Deploy run-1?":5}}`,
			map[string]string{`answers["Deploy run-1?"]`: "must be a string or a list of strings"}},
		{"cancel reason a number", cancel, `{"reason":5}`,
			map[string]string{"reason": "must be text"}},
		{"a list for a body", ask, `[]`, map[string]string{"body": "must be a JSON object"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := b.do("POST", c.path, "", c.body)
			require.Equal(t, 400, r.status, string(r.raw))
			assert.Equal(t, "invalid", r.code())
			assert.NotRegexp(t, goInternals, string(r.raw))
			problems := map[string]string{}
			e, _ := r.body["error"].(map[string]any)
			ds, _ := e["details"].([]any)
			for _, d := range ds {
				d := d.(map[string]any)
				problems[d["field"].(string)], _ = d["problem"].(string)
			}
			for field, words := range c.want {
				assert.Contains(t, problems[field], words, "field %s in %s", field, r.raw)
			}
			assert.Len(t, problems, len(c.want), string(r.raw))
		})
	}
}

// TestOneJSONObjectPerBody: data after the object, a second object, or
// broken JSON are refused; nothing is created.
func TestOneJSONObjectPerBody(t *testing.T) {
	b := newBridge(t, opts{})
	for _, body := range []string{`{"question":"q"} xyz`, `{"question":"a"}{"question":"b"}`, `{"question":"q"`, ``, `{"question":"q"},`} {
		r := b.do("POST", "/api/projects/ops/agent-questions", "", body)
		assert.Equal(t, 400, r.status, "%q → %s", body, r.raw)
		assert.Equal(t, "invalid", r.code())
		assert.NotRegexp(t, goInternals, string(r.raw))
	}
	r := b.do("GET", "/api/projects/ops/agent-questions", "", nil)
	assert.Empty(t, r.body["questions"], "a refused body created nothing")
}

// TestBodyOverTheLimitIs413: the documented 1 MiB limit, with its figure.
func TestBodyOverTheLimitIs413(t *testing.T) {
	b := newBridge(t, opts{})
	big := `{"question":"q","context":"` + strings.Repeat("x", 5<<20) + `"}`
	r := b.do("POST", "/api/projects/ops/agent-questions", "", big)
	assert.Equal(t, 413, r.status, string(r.raw))
	assert.Equal(t, "too_large", r.code())
	assert.Contains(t, string(r.raw), "1048576 bytes")
}

// TestWrongMethodIs405WithAllow: an endpoint that exists answers 405 with
// the methods it takes; an unknown path stays 404.
func TestWrongMethodIs405WithAllow(t *testing.T) {
	b := newBridge(t, opts{})
	cases := []struct{ method, path, allow string }{
		{"DELETE", "/api/projects/ops/agent-questions", "GET, HEAD, POST"},
		{"OPTIONS", "/api/projects/ops/agent-questions/abc", "GET, HEAD"},
		{"PUT", "/api/projects/ops/agent-questions/abc/respond", "POST"},
		{"DELETE", "/api/projects/ops/notifications/abc/read", "POST"},
	}
	for _, c := range cases {
		res := b.raw(c.method, c.path, "")
		assert.Equal(t, 405, res.StatusCode, "%s %s", c.method, c.path)
		assert.Equal(t, c.allow, res.Header.Get("Allow"), "%s %s", c.method, c.path)
	}
	r := b.do("DELETE", "/api/projects/ops/nothing-here", "", nil)
	assert.Equal(t, 404, r.status)
}

// TestStoreOutageHidesTheAddress: with Redis down the API answers 503 in
// plain words; the address stays in the log.
func TestStoreOutageHidesTheAddress(t *testing.T) {
	srv := storetest.Redis(t)
	b := newBridge(t, opts{redisURL: srv.URL})
	b.ask("ops", "", yesNo("run-1"))
	srv.Kill()
	for _, req := range []struct{ method, path string }{
		{"GET", "/api/projects/ops/agent-questions"},
		{"POST", "/api/projects/ops/agent-questions"},
	} {
		var body any
		if req.method == "POST" {
			body = yesNo("run-2")
		}
		r := b.do(req.method, req.path, "", body)
		assert.Equal(t, 503, r.status, string(r.raw))
		assert.Equal(t, "unavailable", r.code())
		assert.NotRegexp(t, goInternals, string(r.raw))
		assert.NotContains(t, string(r.raw), "connection refused")
	}
}

// raw sends a bodiless request and returns the response itself.
func (b *bridge) raw(method, path, token string) *http.Response {
	b.t.Helper()
	req, _ := http.NewRequest(method, b.srv.URL+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(b.t, err)
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	checkSpec(b.t, req, res, raw)
	return res
}
