package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/server/api"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/native"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bigStores are the stores a large backlog is tested on: Redis and the
// embedded (native) store.
func bigStores(t *testing.T) map[string]func(t *testing.T) lifecycle.Store {
	return map[string]func(t *testing.T) lifecycle.Store{
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
}

func apiOn(t *testing.T, st lifecycle.Store) *httptest.Server {
	router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st, HasWebhookSecret: func(string) bool { return true }})
	mux := http.NewServeMux()
	api.New(api.Config{Router: router, Auth: api.NewAuth(nil, nil)}).Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

type listPage struct {
	Questions []struct {
		ID        string    `json:"id"`
		Status    string    `json:"status"`
		CreatedAt time.Time `json:"created_at"`
	} `json:"questions"`
	NextCursor string `json:"next_cursor"`
}

// TestEveryPendingQuestionIsListed: with 10,000 pending questions, the
// list pages through every one of them, oldest first, each once, and the
// oldest (the nearest deadline) is on the first page.
func TestEveryPendingQuestionIsListed(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 10,000 questions")
	}
	for name, open := range bigStores(t) {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			qs := storetest.FillPending(t, st, "ops", 10000)
			srv := apiOn(t, st)
			seen := map[string]bool{}
			var order []string
			cursor, pages := "", 0
			for {
				v := url.Values{"status": {"pending"}}
				if cursor != "" {
					v.Set("cursor", cursor)
				}
				res, err := http.Get(srv.URL + "/api/projects/ops/agent-questions?" + v.Encode())
				require.NoError(t, err)
				var p listPage
				require.Equal(t, 200, res.StatusCode)
				require.NoError(t, json.NewDecoder(res.Body).Decode(&p))
				res.Body.Close()
				pages++
				for _, q := range p.Questions {
					assert.False(t, seen[q.ID], "listed twice: %s", q.ID)
					seen[q.ID] = true
					order = append(order, q.ID)
				}
				if pages == 1 {
					t.Logf("page 1: %d questions, next_cursor %q", len(p.Questions), p.NextCursor)
				}
				if cursor = p.NextCursor; cursor == "" || pages > 1000 {
					break
				}
			}
			t.Logf("%d pages, %d questions listed", pages, len(seen))
			assert.Equal(t, len(qs), len(seen), "every pending question is listed")
			require.NotEmpty(t, order)
			assert.Equal(t, qs[0].ID, order[0], "the oldest question (nearest deadline) comes first")
			assert.True(t, seen[qs[0].ID], "the oldest question is listed")
		})
	}
}

// TestListPagesWithLimitAndCursor: limit sizes a page, next_cursor leads
// to the next one and is null on the last; a wrong limit or cursor is
// refused naming the field. Every response is checked against
// docs/openapi.yaml.
func TestListPagesWithLimitAndCursor(t *testing.T) {
	b := newBridge(t, opts{})
	var ids []string
	for i := range 7 {
		ids = append(ids, b.ask("ops", "", yesNo(fmt.Sprintf("run-%d", i))))
	}
	base := "/api/projects/ops/agent-questions?status=pending&limit=3"
	var got []string
	path := base
	for pages := 1; ; pages++ {
		r := b.do("GET", path, "", nil)
		require.Equal(t, 200, r.status, string(r.raw))
		require.Contains(t, r.body, "next_cursor", "next_cursor is always there")
		for _, q := range r.body["questions"].([]any) {
			got = append(got, q.(map[string]any)["id"].(string))
		}
		next, _ := r.body["next_cursor"].(string)
		if next == "" {
			assert.Nil(t, r.body["next_cursor"], "null on the last page")
			assert.Equal(t, 3, pages)
			break
		}
		path = base + "&cursor=" + url.QueryEscape(next)
	}
	assert.Equal(t, ids, got, "every question once, oldest first")

	r := b.do("GET", "/api/projects/ops/agent-questions", "", nil)
	assert.Len(t, r.body["questions"], 7, "without limit, a page of up to 500")
	assert.Nil(t, r.body["next_cursor"])
	for _, bad := range []string{"limit=0", "limit=1001", "limit=ten"} {
		r := b.do("GET", "/api/projects/ops/agent-questions?"+bad, "", nil)
		assert.Equal(t, 400, r.status, bad)
		assert.Equal(t, []string{"limit"}, r.fields(), bad)
		assert.Contains(t, string(r.raw), "a whole number from 1 to 1000")
	}
	r = b.do("GET", "/api/projects/ops/agent-questions?cursor=abc", "", nil)
	assert.Equal(t, 400, r.status)
	assert.Equal(t, []string{"cursor"}, r.fields())
	assert.Contains(t, string(r.raw), "pass next_cursor exactly as received")
}
