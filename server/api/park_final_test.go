package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/server/api"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/stretchr/testify/require"
)

// countingStore counts the question reads of a replica's store, and the
// reads of a question's status alone (a parked wait's checks).
type countingStore struct {
	*store.Store
	gets, checks atomic.Int32
}

func (s *countingStore) StillPending(ctx context.Context, project, id string) (bool, error) {
	s.checks.Add(1)
	return s.Store.StillPending(ctx, project, id)
}

func (s *countingStore) Get(ctx context.Context, project, id string) (*domain.Question, error) {
	s.gets.Add(1)
	return s.Store.Get(ctx, project, id)
}

// rereadStore is a store whose wake-ups carry no record (as from a
// replica of an earlier release): a parked wait re-reads the question when
// woken.
type rereadStore struct {
	lifecycle.Store
	st *store.Store
}

func (s rereadStore) StillPending(ctx context.Context, project, id string) (bool, error) {
	return s.Store.(interface {
		StillPending(ctx context.Context, project, id string) (bool, error)
	}).StillPending(ctx, project, id)
}

func (s rereadStore) WatchFinal(project, id string, f func(*domain.Question)) func() {
	return s.st.WatchFinal(project, id, func(*domain.Question) { f(nil) })
}

func serveStore(t *testing.T, st lifecycle.Store) string {
	t.Helper()
	mux := http.NewServeMux()
	api.New(api.Config{Router: lifecycle.NewRouter(lifecycle.RouterConfig{Store: st}), Auth: api.NewAuth(nil, nil)}).Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func openStore(t *testing.T, url string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), store.Options{URL: url})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

// TestWokenWaitIsAnsweredWithTheRecordTheWakeUpCarries: a question
// answered (or dismissed) on one replica wakes a wait parked on another
// with the final record carried in the wake-up, so that replica answers
// its agent without reading Redis again; and the agent gets exactly the
// bytes a wait that re-reads the question gets.
func TestWokenWaitIsAnsweredWithTheRecordTheWakeUpCarries(t *testing.T) {
	srv := storetest.Redis(t)
	b := newBridge(t, opts{redisURL: srv.URL})
	carried := &countingStore{Store: openStore(t, srv.URL)}
	aURL := serveStore(t, carried)
	reread := &countingStore{Store: openStore(t, srv.URL)}
	cURL := serveStore(t, rereadStore{Store: reread, st: reread.Store})

	for _, tc := range []struct {
		name   string
		finish func(id string) resp
	}{
		{"answered", func(id string) resp {
			return b.do("POST", "/api/projects/ops/agent-questions/"+id+"/respond", "",
				map[string]any{"answers": map[string]any{"Which auth method?": []string{"OAuth 2.0"}}, "responded_by": "alice"})
		}},
		{"dismissed", func(id string) resp {
			return b.do("POST", "/api/projects/ops/agent-questions/"+id+"/cancel", "", map[string]any{"reason": "user", "note": "Not this release"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := b.ask("ops", "", map[string]any{
				"run_id": "run-" + tc.name, "agent_id": "deploy-bot", "agent_name": "Deploy bot", "context": "Release 1.2 <b>&</b> \"quotes\" / ünïcode",
				"questions": []map[string]any{{"question": "Which auth method?", "header": "Auth", "multiSelect": true,
					"options": []map[string]any{{"label": "OAuth 2.0", "description": "Standard", "value": "oauth"}, {"label": "API key"}}}},
				"timeout": "30m",
			})
			bodies := map[string]chan []byte{}
			for name, u := range map[string]string{"carried": aURL, "reread": cURL} {
				ch := make(chan []byte, 1)
				bodies[name] = ch
				go func() {
					res, err := http.Get(u + "/api/projects/ops/agent-questions/" + id + "/wait?timeout=30s")
					if err != nil {
						ch <- []byte(err.Error())
						return
					}
					defer res.Body.Close()
					body, _ := io.ReadAll(res.Body)
					ch <- body
				}()
			}
			// Parked: the handler has read the question, and the parker's
			// first check its status.
			for _, s := range []*countingStore{carried, reread} {
				require.Eventually(t, func() bool { return s.gets.Load() >= 1 && s.checks.Load() >= 1 }, 5*time.Second, time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond)
			carried.gets.Store(0)
			reread.gets.Store(0)

			r := tc.finish(id)
			require.Less(t, r.status, 300, string(r.raw))
			got := map[string][]byte{}
			for name, ch := range bodies {
				select {
				case got[name] = <-ch:
				case <-time.After(5 * time.Second):
					t.Fatalf("the %s wait was not answered", name)
				}
			}
			require.Equal(t, string(got["reread"]), string(got["carried"]), "a wait answered from the wake-up must get the bytes a re-read gives")
			var q map[string]any
			require.NoError(t, json.Unmarshal(got["carried"], &q), string(got["carried"]))
			require.Equal(t, map[string]string{"answered": "answered", "dismissed": "cancelled"}[tc.name], q["status"])
			require.JSONEq(t, string(b.do("GET", "/api/projects/ops/agent-questions/"+id, "", nil).raw), string(got["carried"]))
			require.Zero(t, carried.gets.Load(), "the replica of the carried wait read the question again after the wake-up")
			require.Positive(t, reread.gets.Load(), "the re-reading replica must have read it (or the comparison proves nothing)")
		})
	}
}
