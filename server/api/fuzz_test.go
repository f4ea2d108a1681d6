package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/server/api"
	"github.com/askbridge/askbridge/store"
)

// FuzzCreateAndRespond drives the HTTP API with arbitrary create and
// respond bodies on the embedded store: the API never answers 5xx, and
// every 4xx carries an error code (docs/openapi.yaml).
func FuzzCreateAndRespond(f *testing.F) {
	seeds := [][2]string{
		{`{"run_id":"r1","questions":[{"question":"Which auth method?","header":"Auth","options":[{"label":"OAuth 2.0","value":"oauth"},{"label":"API key"}]}]}`, `{"response":"oauth"}`},
		{`{"question":"Features?","multiSelect":true,"options":[{"label":"Login"},{"label":"Dashboard"}]}`, `{"answers":{"Features?":["Login","Dashboard"]}}`},
		{`{"question":"Anything else?","timeout":"10s"}`, `{"response":"ship it"}`},
		{`{"question":"Go?","resume":{"url":"http://127.0.0.1:1/resume"}}`, `{"response":"yes"}`},
		{`{"question":"Q","targets":[{"platform":"slack","channel":"C1"}]}`, `{}`},
		{`{"question":"Q","route":"nope","timeout":-5}`, `{"response":1}`},
		{`{"questions":[{"question":"A"},{"question":"B"}],"idempotency_key":"k"}`, `{"answers":{"A":"x","B":["y","z"]},"responded_by":{"platform":"slack","id":"U1"}}`},
		{`[]`, `null`}, {`{"questions":null}`, `"x"`}, {"\xff", "{"},
	}
	for _, s := range seeds {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	st, err := store.Open(context.Background(), store.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st, HasWebhookSecret: func(string) bool { return true }})
	mux := http.NewServeMux()
	api.New(api.Config{Router: router}).Register(mux)
	check := func(t *testing.T, rec *httptest.ResponseRecorder, what string, body []byte) map[string]any {
		t.Helper()
		if rec.Code >= 500 {
			t.Fatalf("%s answered %d for %q: %s", what, rec.Code, body, rec.Body)
		}
		var out map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s answered non-JSON %q", what, rec.Body)
		}
		if rec.Code >= 400 {
			e, _ := out["error"].(map[string]any)
			if e == nil || e["code"] == "" || e["code"] == nil {
				t.Fatalf("%s answered %d without an error code: %s", what, rec.Code, rec.Body)
			}
		}
		return out
	}
	jsonReq := func(path string, body []byte) *http.Request {
		r := httptest.NewRequest("POST", path, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		return r
	}
	f.Fuzz(func(t *testing.T, create, respond []byte) {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, jsonReq("/api/projects/fuzz/agent-questions", create))
		out := check(t, rec, "create", create)
		id, _ := out["id"].(string)
		if id == "" {
			return
		}
		if run, _ := out["run_id"].(string); run != "" && len(respond)%2 == 0 {
			rec = httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest("POST", "/api/projects/fuzz/agent-runs/"+run+"/pause", nil))
			check(t, rec, "pause", nil)
		}
		rec = httptest.NewRecorder()
		mux.ServeHTTP(rec, jsonReq("/api/projects/fuzz/agent-questions/"+id+"/respond", respond))
		check(t, rec, "respond", respond)
		rec = httptest.NewRecorder()
		mux.ServeHTTP(rec, jsonReq("/api/projects/fuzz/agent-questions/"+id+"/cancel", respond))
		check(t, rec, "cancel", respond)
	})
}
