package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/server/api"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/native"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuestionsListShowsEveryPendingQuestion: with 10,000 pending
// questions, `askbridge questions list` lists every one (the oldest, whose
// deadline is nearest, first) and says how many there are, on Redis and
// on the embedded store.
func TestQuestionsListShowsEveryPendingQuestion(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 10,000 questions")
	}
	stores := map[string]func(t *testing.T) lifecycle.Store{
		"redis": func(t *testing.T) lifecycle.Store {
			st, err := store.Open(context.Background(), store.Options{URL: storetest.Redis(t).URL})
			require.NoError(t, err)
			t.Cleanup(func() { st.Close() })
			return st
		},
		"native": func(t *testing.T) lifecycle.Store {
			st, err := native.Open(native.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			qs := storetest.FillPending(t, st, "ops", 10000)
			router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st})
			mux := http.NewServeMux()
			api.New(api.Config{Router: router, Auth: api.NewAuth(nil, nil)}).Register(mux)
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			env := map[string]string{"BRIDGE_URL": srv.URL, "BRIDGE_PROJECT": "ops"}

			r := runBridge(t, env, "questions", "list")
			require.Equal(t, 0, r.code, r.stderr)
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			t.Logf("%d lines; stderr %q", len(lines), r.stderr)
			assert.Equal(t, 1+len(qs), len(lines), "a heading and one line per pending question")
			require.Greater(t, len(lines), 1)
			assert.Contains(t, lines[1], "Deploy build 00000?", "the oldest question (nearest deadline) comes first")
			assert.Contains(t, r.stderr, "10000 pending questions", "says how many")

			// The oldest question can be shown by the short id list printed.
			short := strings.Fields(lines[1])[0]
			r = runBridge(t, env, "questions", "show", short)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Contains(t, r.stdout, qs[0].ID)
		})
	}
}
