package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/native"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// countedNative and countedRedis count the question reads of a real
// store, keeping every other method (the embedded store's Pending too).
type countedNative struct {
	*native.Store
	gets atomic.Int32
}

func (s *countedNative) Get(ctx context.Context, project, id string) (*domain.Question, error) {
	s.gets.Add(1)
	return s.Store.Get(ctx, project, id)
}

type countedRedis struct {
	*store.Store
	gets, statuses   atomic.Int32
	batches, batched atomic.Int32 // StillPendingEach's calls and the statuses they read
	deaf             atomic.Value // the id of a question whose wake-ups are lost
}

func (s *countedRedis) Get(ctx context.Context, project, id string) (*domain.Question, error) {
	s.gets.Add(1)
	return s.Store.Get(ctx, project, id)
}

func (s *countedRedis) StillPending(ctx context.Context, project, id string) (bool, error) {
	s.statuses.Add(1)
	return s.Store.StillPending(ctx, project, id)
}

func (s *countedRedis) StillPendingEach(ctx context.Context, projects, ids []string) ([]bool, error) {
	s.batches.Add(1)
	s.batched.Add(int32(len(ids)))
	return s.Store.StillPendingEach(ctx, projects, ids)
}

func (s *countedRedis) WatchFinal(project, id string, f func(*domain.Question)) func() {
	if s.deaf.Load() == id {
		return func() {} // as if pub/sub dropped its wake-ups
	}
	return s.Store.WatchFinal(project, id, f)
}

// TestParkedWaitsOnEitherStore: on both stores a parked wait is answered
// when its question is answered or expires, when its own time is up, and
// when the server drains. The sweeps meant to catch a lost wake-up read
// every wait's question's status on Redis, whose pub/sub can drop one (not
// its record: 17,000 records read and decoded on parking and every 10 s
// left garbage between the waits' own memory, 4.3 KB of RSS per waiter
// against 3.4 without), and nothing on the embedded store, whose wake-ups
// are in-process and which tells a pending question from memory: each
// read of its record maps a page of the data file into the bridge (17,000
// waits read every 10 s kept 351 MB of it resident).
func TestParkedWaitsOnEitherStore(t *testing.T) {
	type counts struct{ gets, statuses, batches, batched *atomic.Int32 }
	stores := map[string]func(t *testing.T) (lifecycle.Store, parkStore, counts){
		"redis": func(t *testing.T) (lifecycle.Store, parkStore, counts) {
			st, err := store.Open(context.Background(), store.Options{URL: storetest.Redis(t).URL})
			require.NoError(t, err)
			t.Cleanup(func() { st.Close() })
			c := &countedRedis{Store: st}
			return st, c, counts{&c.gets, &c.statuses, &c.batches, &c.batched}
		},
		"embedded": func(t *testing.T) (lifecycle.Store, parkStore, counts) {
			st, err := native.Open(native.Options{Dir: t.TempDir()})
			require.NoError(t, err)
			t.Cleanup(func() { st.Close() })
			c := &countedNative{Store: st}
			return st, c, counts{gets: &c.gets}
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			st, ps, n := open(t)
			gets := n.gets
			ctx := context.Background()
			ids := map[string]string{}
			for _, role := range []string{"answered", "expired", "timeout", "drain", "lost"} {
				ids[role] = createPending(t, st, role)
			}
			if c, ok := ps.(*countedRedis); ok {
				c.deaf.Store(ids["lost"])
			}
			const every = 50 * time.Millisecond
			p := startParker(ps, slog.New(slog.DiscardHandler), every)
			drained := false
			defer func() {
				if !drained {
					p.drain()
				}
			}()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				d, _ := time.ParseDuration(r.URL.Query().Get("timeout"))
				if !p.park(w, r, "ops", r.URL.Query().Get("id"), d) {
					http.Error(w, "not parked", http.StatusInternalServerError)
				}
			}))
			defer srv.Close()
			waits := map[string]net.Conn{}
			for role, id := range ids {
				timeout := "60s"
				if role == "timeout" {
					timeout = "1s"
				}
				c, err := net.Dial("tcp", srv.Listener.Addr().String())
				require.NoError(t, err)
				defer c.Close()
				fmt.Fprintf(c, "GET /?id=%s&timeout=%s HTTP/1.1\r\nHost: x\r\n\r\n", id, timeout)
				waits[role] = c
			}
			require.Eventually(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return len(p.waits) == len(ids) },
				5*time.Second, 10*time.Millisecond, "every wait parked")
			if n.statuses != nil {
				// Each wait's first check, made once it is parked, is done.
				require.Eventually(t, func() bool { return n.statuses.Load() >= int32(len(ids)) },
					5*time.Second, 10*time.Millisecond, "every parked wait checked")
				n.statuses.Store(0)
			}
			gets.Store(0)
			time.Sleep(8 * every) // several sweeps
			require.Zero(t, gets.Load(), "records read by the sweeps of %d pending waits", len(ids))
			if name == "redis" {
				// In a round trip for each step of a sweep, not one a wait.
				require.Zero(t, n.statuses.Load(), "statuses read one by one by the sweeps")
				require.GreaterOrEqual(t, n.batches.Load(), int32(2), "Redis re-reads the waits' statuses in case a wake-up was lost")
				require.Equal(t, n.batches.Load()*int32(len(ids)), n.batched.Load(), "each sweep's round trip reads every wait's status")
			}
			_, err := st.Transition(ctx, "ops", ids["lost"], lifecycle.Transition{To: domain.StatusAnswered,
				Answer: answerOf("yes"), By: &domain.Person{Platform: "api", ID: "alice"}, At: time.Now().UTC()})
			require.NoError(t, err)
			require.Equal(t, "answered", waitStatus(t, waits["lost"]), "a sweep answers a wait whose wake-up was lost")

			began := time.Now()
			_, err = st.Transition(ctx, "ops", ids["answered"], lifecycle.Transition{To: domain.StatusAnswered,
				Answer: answerOf("yes"), By: &domain.Person{Platform: "api", ID: "alice"}, At: time.Now().UTC()})
			require.NoError(t, err)
			require.Equal(t, "answered", waitStatus(t, waits["answered"]))
			_, err = st.Transition(ctx, "ops", ids["expired"], lifecycle.Transition{To: domain.StatusExpired, At: time.Now().UTC()})
			require.NoError(t, err)
			require.Equal(t, "expired", waitStatus(t, waits["expired"]))
			require.Equal(t, "pending", waitStatus(t, waits["timeout"]), "the wait's own time is up")
			require.GreaterOrEqual(t, time.Since(began), 500*time.Millisecond, "the 1 s wait answered before its time")

			p.drain()
			drained = true
			require.Equal(t, "pending", waitStatus(t, waits["drain"]), "the server drains")
		})
	}
}

// createPending asks a new question, in a run of its own (a question asked
// in a run supersedes the one pending there).
func createPending(t *testing.T, st lifecycle.Store, text string) string {
	t.Helper()
	items := []domain.Item{{Question: text, Options: []domain.Option{{Label: "Yes", Value: "yes"}, {Label: "No", Value: "no"}}}}
	now := time.Now().UTC().Truncate(time.Millisecond)
	res, err := st.Create(context.Background(), &domain.Question{ID: uuid.NewString(), ProjectID: "ops", RunID: "run-" + text, AgentID: "bot",
		Kind: domain.KindQuestion, Status: domain.StatusPending, Questions: items, Targets: []domain.Target{},
		CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour), Fingerprint: domain.Fingerprint(items)})
	require.NoError(t, err)
	return res.Question.ID
}

func answerOf(v string) *domain.Answer {
	a := domain.Resolve([]domain.Item{{Question: "Deploy?"}}, [][]string{{v}})
	return &a
}

// waitStatus reads a parked wait's response and returns the question's
// status in it.
func waitStatus(t *testing.T, c net.Conn) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, string(body))
	var q struct{ Status string }
	require.NoError(t, json.Unmarshal(body, &q))
	return q.Status
}
