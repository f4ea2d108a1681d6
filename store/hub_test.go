package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestFinalWakeUpCarriesTheRecordAGetReads: a watcher on another replica
// is handed the final record in the wake-up — the same record, field for
// field, that reading the question back gives — for every way a question
// becomes final (an answer resuming a paused run, the deciding vote of an
// approval, a dismissal with a note, a question superseded by the run's
// next one), on real Redis and on the embedded store. The replica that
// made the change gets that record back from its script too, and sends no
// command besides the script (it used to read the question back: 2 more).
func TestFinalWakeUpCarriesTheRecordAGetReads(t *testing.T) {
	for _, mode := range []string{"redis", "embedded"} {
		t.Run(mode, func(t *testing.T) {
			var a, b *store.Store
			if mode == "redis" {
				srv := storetest.Redis(t)
				a, b = open(t, srv.URL), open(t, srv.URL)
			} else {
				a = open(t, "")
				b = open(t, a.EmbeddedURL())
			}
			testFinalWakeUps(t, a, b)
		})
	}
}

func testFinalWakeUps(t *testing.T, a, b *store.Store) {
	ctx := context.Background()
	p := "p" + uuid.NewString()[:8]
	newQ := func(run string) *domain.Question {
		items := []domain.Item{{Question: "Ship \"1.2\" <now> / ü?", Header: "Ship", MultiSelect: true,
			Options: []domain.Option{{Label: "Yes", Value: "yes", Description: "go"}, {Label: "No", Value: "no", Veto: true}}}}
		now := time.Now().UTC().Truncate(time.Millisecond)
		q := &domain.Question{ID: domain.NewQuestionID(p), ProjectID: p, RunID: run, AgentID: "bot", Kind: domain.KindQuestion,
			Status: domain.StatusPending, Questions: items, Targets: []domain.Target{}, CreatedAt: now, UpdatedAt: now,
			ExpiresAt: now.Add(time.Hour), Fingerprint: domain.Fingerprint(items), Context: "line 1\nline 2\t\x1f\x1e"}
		_, err := a.Create(ctx, q)
		require.NoError(t, err)
		return q
	}
	by := &domain.Person{Platform: "api", ID: "alice", Name: "Alice"}
	yes := domain.Resolve(newQ("run-x").Questions, [][]string{{"Yes"}})
	var cmds commandCounter
	b.Client().AddHook(&cmds)

	for _, tc := range []struct {
		name   string
		status domain.Status
		// finish makes q final on replica b; it returns the record b's
		// call returned and the commands that call sent (nil, 0: the call
		// returns no record).
		finish func(q *domain.Question) (*domain.Question, int64)
	}{
		{"answer resuming a paused run", domain.StatusAnswered, func(q *domain.Question) (*domain.Question, int64) {
			_, err := b.PauseRun(ctx, p, q.RunID, "bot", time.Now())
			require.NoError(t, err)
			n := cmds.n.Load()
			got, err := b.Transition(ctx, p, q.ID, lifecycle.Transition{To: domain.StatusAnswered, Answer: &yes, By: by, At: time.Now().UTC(),
				RequirePausedRun: true, ContinuationRunID: "cont-" + q.RunID, DeliveryID: uuid.NewString()})
			require.NoError(t, err)
			return got, cmds.n.Load() - n
		}},
		{"deciding vote", domain.StatusAnswered, func(q *domain.Question) (*domain.Question, int64) {
			var got *domain.Question
			var n int64
			for _, who := range []string{"bob", "carol"} {
				v := domain.Vote{By: domain.Person{Platform: "slack", ID: who}, Label: "Yes", At: time.Now().UTC()}
				n = cmds.n.Load()
				var err error
				got, _, err = b.Vote(ctx, p, q.ID, v, 2, false, lifecycle.Transition{To: domain.StatusAnswered, Answer: &yes, By: &v.By})
				require.NoError(t, err)
			}
			return got, cmds.n.Load() - n
		}},
		{"dismissed with a note", domain.StatusCancelled, func(q *domain.Question) (*domain.Question, int64) {
			n := cmds.n.Load()
			got, err := b.Transition(ctx, p, q.ID, lifecycle.Transition{To: domain.StatusCancelled, CancelReason: domain.CancelUser,
				CancelNote: "not now", By: by, At: time.Now().UTC()})
			require.NoError(t, err)
			return got, cmds.n.Load() - n
		}},
		{"superseded", domain.StatusCancelled, func(q *domain.Question) (*domain.Question, int64) {
			next := newQ(q.RunID)
			next.Questions[0].Question = "Something else?"
			next.Fingerprint = domain.Fingerprint(next.Questions)
			_, err := b.Create(ctx, next)
			require.NoError(t, err)
			return nil, 0
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newQ("run-" + uuid.NewString()[:6])
			got := make(chan *domain.Question, 10)
			stop := a.WatchFinal(p, q.ID, func(q *domain.Question) { got <- q })
			defer stop()
			raw := a.Client().PSubscribe(ctx, "*")
			defer raw.Close()
			_, err := raw.Receive(ctx)
			require.NoError(t, err)
			returned, sent := tc.finish(q)
			// An earlier release splits every wake-up at its first \x1f and
			// wakes "project\x1fid" and "project\x1f": the record must wake
			// nothing there, and the plain wake-up must still follow it.
			var plain bool
			for !plain {
				m, err := raw.ReceiveTimeout(ctx, 3*time.Second)
				require.NoError(t, err, "no plain wake-up for the question")
				msg, ok := m.(*redis.Message)
				if !ok {
					continue
				}
				if strings.HasPrefix(msg.Payload, "\x1e") {
					// Read by an earlier release as a project named
					// "\x1e…", which nobody watches.
					require.NotContains(t, msg.Payload, "\x1f", "the record holds a raw \\x1f")
				}
				plain = msg.Payload == p+"\x1f"+q.ID
			}
			var final *domain.Question
			for final == nil {
				select {
				case final = <-got:
				case <-time.After(3 * time.Second):
					t.Fatal("no wake-up carried the final record")
				}
			}
			read, err := a.Get(ctx, p, q.ID)
			require.NoError(t, err)
			require.Equal(t, tc.status, final.Status)
			want, _ := json.Marshal(read)
			have, _ := json.Marshal(final)
			require.JSONEq(t, string(want), string(have))
			require.Equal(t, read, final)
			if returned != nil {
				require.Equal(t, read, returned, "the record the change returned")
				require.Zero(t, sent, "commands the change sent besides its script (a read back)")
			}
		})
	}
}

// commandCounter counts the commands other than scripts (EVALSHA, and EVAL
// after NOSCRIPT) a client sends, one per command of a pipeline.
type commandCounter struct{ n atomic.Int64 }

func (c *commandCounter) count(cmds ...redis.Cmder) {
	for _, cmd := range cmds {
		if name := cmd.Name(); name != "evalsha" && name != "eval" {
			c.n.Add(1)
		}
	}
}

func (c *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.count(cmd)
		return next(ctx, cmd)
	}
}

func (c *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.count(cmds...)
		return next(ctx, cmds)
	}
}
