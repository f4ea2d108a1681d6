package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRecordsOfTheEarlierLayoutStayReadable writes a question as the first
// Redis layout did (long JSON doc, copies as hash fields, RFC 3339 times,
// the run's questions in runq:<run>, an id→project key) and reads it with
// this one, then answers it and attaches a copy.
func TestRecordsOfTheEarlierLayoutStayReadable(t *testing.T) {
	srv := storetest.Redis(t)
	s := open(t, srv.URL)
	ctx := context.Background()
	rdb := s.Client()
	p, id, run := "legacy", uuid.NewString(), "run-old"
	base := "askbridge:{" + p + "}:"
	created := time.Date(2026, 11, 1, 9, 0, 0, 5, time.UTC)
	doc := `{"agent_id":"deploy-bot","agent_name":"Deploy bot","kind":"question","questions":[{"question":"Ship?","header":"Deploy","multiSelect":false,"options":[{"label":"Yes","value":"yes"},{"label":"No","value":"no"}]}],"targets":[{"platform":"slack","channel":"C1"}],"responders":{"users":["slack:U1"]},"created_at":"2026-11-01T09:00:00.000000005Z","expires_at":"2099-11-01T09:30:00Z"}`
	require.NoError(t, rdb.SAdd(ctx, "askbridge:projects", p).Err())
	require.NoError(t, rdb.Set(ctx, "askbridge:loc:"+id, p, time.Hour).Err())
	require.NoError(t, rdb.Set(ctx, base+"d:"+id, doc, time.Hour).Err())
	require.NoError(t, rdb.HSet(ctx, base+"q:"+id, "status", "pending", "run", run, "fp", "f1", "seq", 7,
		"updated_at", "2026-11-01T09:00:01Z", "esc_level", 0,
		"copy:slack:C1:", `{"p":"slack","c":"C1","m":"171.1","u":"https://x/p171"}`).Err())
	require.NoError(t, rdb.ZAdd(ctx, base+"pending", redisZ(7, id)).Err())
	require.NoError(t, rdb.ZAdd(ctx, base+"all", redisZ(7, id)).Err())
	require.NoError(t, rdb.ZAdd(ctx, base+"deadlines", redisZ(float64(time.Date(2099, 11, 1, 9, 30, 0, 0, time.UTC).UnixMilli()), id)).Err())
	require.NoError(t, rdb.ZAdd(ctx, base+"runq:"+run, redisZ(7, id)).Err())
	require.NoError(t, rdb.HSet(ctx, base+"run:"+run, "id", run, "agent_id", "deploy-bot", "status", "paused",
		"created_at", "2026-11-01T09:00:00Z", "updated_at", "2026-11-01T09:00:02Z", "pending", id, "fp:f1", id).Err())

	loc, err := s.Locate(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, p, loc)
	q, err := s.Get(ctx, p, id)
	require.NoError(t, err)
	assert.Equal(t, "Ship?", q.Questions[0].Question)
	assert.Equal(t, "Deploy bot", q.AgentName)
	assert.Equal(t, []string{"slack:U1"}, q.Responders.Users)
	assert.True(t, created.Equal(q.CreatedAt))
	assert.Equal(t, time.Date(2026, 11, 1, 9, 0, 1, 0, time.UTC), q.UpdatedAt)
	require.Len(t, q.Targets, 1)
	assert.Equal(t, "171.1", q.Targets[0].MessageTS)
	pending, err := s.List(ctx, p, domain.StatusPending, 0)
	require.NoError(t, err)
	require.Len(t, pending, 1)
	qs, err := s.RunQuestions(ctx, p, run)
	require.NoError(t, err)
	require.Len(t, qs, 1)
	r, err := s.Run(ctx, p, run)
	require.NoError(t, err)
	assert.Equal(t, time.Date(2026, 11, 1, 9, 0, 2, 0, time.UTC), r.UpdatedAt)

	// A newer copy of the same target (attached by this layout) wins over the old field.
	require.NoError(t, s.AttachCopy(ctx, p, id, domain.Target{Platform: "slack", Channel: "C1", MessageTS: "171.9"}))
	a := domain.Resolve(q.Questions, [][]string{{"Yes"}})
	q, err = s.Transition(ctx, p, id, lifecycle.Transition{To: domain.StatusAnswered, Answer: &a, By: &domain.Person{Platform: "api", ID: "x"}})
	require.NoError(t, err)
	assert.Equal(t, domain.StatusAnswered, q.Status)
	require.Len(t, q.Targets, 1)
	assert.Equal(t, "171.9", q.Targets[0].MessageTS)
	pending, _ = s.List(ctx, p, domain.StatusPending, 0)
	assert.Empty(t, pending)
}

func redisZ(score float64, member string) redis.Z { return redis.Z{Score: score, Member: member} }

// A record whose immutable part cannot be read is an error on Get, not a
// question that does not exist; a list skips it and shows the rest.
func TestCorruptRecordIsAnErrorNotAbsent(t *testing.T) {
	srv := storetest.Redis(t)
	s := open(t, srv.URL)
	ctx := context.Background()
	p := "corrupt"
	good, bad := domain.NewQuestionID(p), domain.NewQuestionID(p)
	for _, id := range []string{good, bad} {
		now := time.Now().UTC()
		items := []domain.Item{{Question: "Ship " + id + "?", Options: []domain.Option{{Label: "Yes", Value: "yes"}, {Label: "No", Value: "no"}}}}
		_, err := s.Create(ctx, &domain.Question{ID: id, ProjectID: p, RunID: "run-" + id, AgentID: "bot", Kind: domain.KindQuestion,
			Status: domain.StatusPending, Questions: items, CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour),
			Fingerprint: domain.Fingerprint(items)})
		require.NoError(t, err)
	}
	require.NoError(t, s.Client().Set(ctx, "askbridge:{"+p+"}:d:"+bad, `{"v":2,"q":[`, redis.KeepTTL).Err())
	_, err := s.Get(ctx, p, bad)
	require.Error(t, err)
	assert.NotEqual(t, domain.ENotFound, domain.ErrorCode(err), "a corrupt record is not reported as missing: %v", err)
	assert.Contains(t, err.Error(), "corrupt question record")
	list, err := s.List(ctx, p, domain.StatusPending, 0)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, good, list[0].ID)
}
