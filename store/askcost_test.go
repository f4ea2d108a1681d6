package store_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// roundTrips counts the commands and pipelines a client sends Redis for a
// context marked counted (not the store's own background work).
type roundTrips struct{ n atomic.Int64 }

type counted struct{}

func (r *roundTrips) count(ctx context.Context) {
	if ctx.Value(counted{}) != nil {
		r.n.Add(1)
	}
}
func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { r.count(ctx); return next(ctx, cmd) }
}
func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { r.count(ctx); return next(ctx, cmds) }
}

// TestAskIsOneRoundTrip: asking a question in a new run costs Redis one
// round trip, the create script, which returns what Create needs to give
// back the record (BENCHMARKS (c): each round trip is CPU of
// redis-server's per ask). It was two: the script, then a read of the
// record it had just written.
func TestAskIsOneRoundTrip(t *testing.T) {
	s := open(t, storetest.Redis(t).URL)
	var rt roundTrips
	s.Client().AddHook(&rt)
	p := "proj"
	ctx := context.WithValue(context.Background(), counted{}, true)
	// the project registered, the script loaded
	_, err := s.Create(ctx, askedQuestion(p, 0))
	require.NoError(t, err)
	for i := 1; i <= 3; i++ {
		before := rt.n.Load()
		res, err := s.Create(ctx, askedQuestion(p, i))
		require.NoError(t, err)
		require.False(t, res.Reattached)
		assert.EqualValues(t, 1, rt.n.Load()-before, "round trips to Redis for ask %d", i+1)
	}
}

// TestStubRunKeepsItsAgentAndCreation: a run whose one question ends
// becomes its hash in the same step (finalize), and a stub made a hash
// before (a second question) reads its agent and creation time from the
// question's record — by a pattern, or decoded when the agent's id needs
// JSON escapes. Either way the run is the agent's, created when asked.
func TestStubRunKeepsItsAgentAndCreation(t *testing.T) {
	s := open(t, storetest.Redis(t).URL)
	ctx := context.Background()
	p := "proj"
	for i, agent := range []string{"deploy-bot", `bot "quoted" \ back`, "ünï"} {
		for _, how := range []string{"answered", "superseded", "cancelled"} {
			q := askedQuestion(p, 100*i+len(how))
			q.AgentID = agent
			_, err := s.Create(ctx, q)
			require.NoError(t, err)
			switch how {
			case "answered":
				a := domain.Resolve(q.Questions, [][]string{{"ship"}})
				_, err = s.Transition(ctx, p, q.ID, lifecycle.Transition{To: domain.StatusAnswered, Answer: &a,
					By: &domain.Person{Platform: "api", ID: "u"}, At: time.Now().UTC()})
			case "cancelled":
				_, err = s.Transition(ctx, p, q.ID, lifecycle.Transition{To: domain.StatusCancelled, At: time.Now().UTC()})
			case "superseded":
				next := askedQuestion(p, 100*i+len(how))
				next.AgentID = agent
				next.Questions[0].Question += " again"
				next.Fingerprint = domain.Fingerprint(next.Questions)
				_, err = s.Create(ctx, next)
			}
			require.NoError(t, err, "%s, %s", agent, how)
			run, err := s.Run(ctx, p, q.RunID)
			require.NoError(t, err)
			assert.Equal(t, agent, run.AgentID, "%s, %s", agent, how)
			assert.True(t, q.CreatedAt.Equal(run.CreatedAt), "%s, %s: run created %v, question %v", agent, how, run.CreatedAt, q.CreatedAt)
			assert.Equal(t, domain.RunRunning, run.Status)
			other := askedQuestion(p, 100*i+len(how))
			other.AgentID = "someone-else"
			_, err = s.Create(ctx, other)
			assert.Equal(t, domain.EConflict, domain.ErrorCode(err), "%s, %s: the run is its agent's", agent, how)
		}
	}
}
