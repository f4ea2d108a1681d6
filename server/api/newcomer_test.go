package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/server/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRoutesNamesTheConfiguredRoutes: a client configured with a route can
// learn whether the bridge has it; the bridge of the README (no
// configuration file) has none.
func TestRoutesNamesTheConfiguredRoutes(t *testing.T) {
	b := newBridge(t, opts{})
	r := b.do("GET", "/api/projects/demo/routes", "", nil)
	require.Equal(t, 200, r.status, string(r.raw))
	assert.JSONEq(t, `{"routes": []}`, string(r.raw))

	b = newBridge(t, opts{routes: []domain.Route{{Name: "oncall", Default: true}, {Name: "eng"}}})
	r = b.do("GET", "/api/projects/demo/routes", "", nil)
	require.Equal(t, 200, r.status, string(r.raw))
	assert.JSONEq(t, `{"routes": [{"name": "eng", "default": false}, {"name": "oncall", "default": true}]}`, string(r.raw))
}

// notices sends a request and returns its status and Askbridge-Notice
// values. token "" sends no Authorization header.
func notices(t *testing.T, b *bridge, method, path, token string, body any) (int, []string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, b.srv.URL+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	checkSpec(t, req, res, raw)
	return res.StatusCode, res.Header.Values(api.NoticeHeader)
}

// TestOpenModeSaysWhatItIgnored: a bridge without tokens serves a request
// that carries a token, or names a project that looks like a typo of one
// in use, and says so in the Askbridge-Notice header; nothing more once
// that project has questions of its own.
func TestOpenModeSaysWhatItIgnored(t *testing.T) {
	b := newBridge(t, opts{})
	const ignored = "the token was ignored (the bridge runs without tokens)"

	// The first question of the first project: nothing to say.
	code, got := notices(t, b, "POST", "/api/projects/demo/agent-questions", "", yesNo("r1"))
	require.Equal(t, 201, code)
	assert.Empty(t, got)

	// Tokens sent to a bridge that has none: served, and told.
	for _, token := range []string{"nope", "…"} {
		code, got = notices(t, b, "GET", "/api/projects/demo/agent-questions", token, nil)
		assert.Equal(t, 200, code)
		assert.Equal(t, []string{ignored}, got, "token %q", token)
	}

	// A typo of demo: served (the list is empty), and told which project is near.
	code, got = notices(t, b, "GET", "/api/projects/dmeo/agent-questions", "", nil)
	assert.Equal(t, 200, code)
	assert.Equal(t, []string{"project dmeo had no questions before; did you mean demo?"}, got)
	code, got = notices(t, b, "POST", "/api/projects/dmeo/agent-questions", "nope", yesNo("r2"))
	require.Equal(t, 201, code, "asking is not refused")
	assert.Equal(t, []string{ignored, "project dmeo had no questions before; did you mean demo?"}, got)
	// Now dmeo has a question: it is a project like any other.
	_, got = notices(t, b, "GET", "/api/projects/dmeo/agent-questions", "", nil)
	assert.Empty(t, got)

	// A new project with a name unlike any: a project, not a typo.
	_, got = notices(t, b, "POST", "/api/projects/staging/agent-questions", "", yesNo("r3"))
	assert.Empty(t, got)

	// With tokens, a wrong token is refused (401), never ignored.
	tb := newBridge(t, opts{operators: []api.Operator{{ID: "alice", Projects: []string{"*"}, Token: "op-secret"}}})
	_, got = notices(t, tb, "GET", "/api/projects/demo/agent-questions", "op-secret", nil)
	assert.Empty(t, got)
}
