package store_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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

// TestRecordsOfTheLayoutBeforeRunStubsStayReadable writes questions as the
// layout before run stubs did (a run hash from the first question, the
// record's string with a TTL and a doc beginning {"v":2, the hash with
// updated_at and hex fingerprint and history key) and serves them with
// this one: read, listed, re-asked (re-attached), answered, re-asked
// within the window, superseded, their runs read and their history found.
func TestRecordsOfTheLayoutBeforeRunStubsStayReadable(t *testing.T) {
	srv := storetest.Redis(t)
	s := open(t, srv.URL)
	ctx := context.Background()
	rdb := s.Client()
	p := "stubless"
	base := "askbridge:{" + p + "}:"
	require.NoError(t, rdb.SAdd(ctx, "askbridge:projects", p).Err())
	created := time.Now().UTC().Add(-time.Minute)
	expires := created.Add(time.Hour)
	items := func(text string) []domain.Item {
		return []domain.Item{{Question: text, Options: []domain.Option{{Label: "Yes", Value: "yes"}, {Label: "No", Value: "no"}}}}
	}
	// write stores a pending question of run as createScript wrote it then.
	write := func(id, run, text string, seq int64) {
		t.Helper()
		ns := strconv.FormatInt(created.UnixNano(), 10)
		doc := `{"v":2,"a":"deploy-bot","q":[{"q":"` + text + `","o":[{"l":"Yes","v":"yes"},{"l":"No","v":"no"}]}],"c":` + ns +
			`,"e":` + strconv.FormatInt(int64(time.Hour), 10) + `}`
		fp := domain.Fingerprint(items(text))
		require.NoError(t, rdb.Set(ctx, base+"d:"+id, doc, 2*time.Hour).Err())
		require.NoError(t, rdb.HSet(ctx, base+"q:"+id, "status", "pending", "run", run, "fp", fp, "seq", seq,
			"updated_at", ns, "h", domain.HistoryKey("deploy-bot", items(text))).Err())
		require.NoError(t, rdb.ZAdd(ctx, base+"all", redisZ(float64(seq), id)).Err())
		require.NoError(t, rdb.ZAdd(ctx, base+"deadlines", redisZ(float64(expires.UnixMilli()), id)).Err())
		require.NoError(t, rdb.HSet(ctx, base+"run:"+run, "agent_id", "deploy-bot", "status", "running", "created_at", ns,
			"updated_at", ns, "pending", id, "fp:"+fp, id, fmt.Sprint("q:", seq), id).Err())
		require.NoError(t, rdb.PExpire(ctx, base+"run:"+run, 2*time.Hour).Err())
		require.NoError(t, rdb.Set(ctx, base+"seq", seq, 0).Err())
		require.NoError(t, rdb.XAdd(ctx, &redis.XAddArgs{Stream: base + "events", Values: []any{"type", domain.EventCreated,
			"question", id, "run", run, "at", ns}}).Err())
		require.NoError(t, rdb.XAdd(ctx, &redis.XAddArgs{Stream: base + "audit", Values: []any{"type", "asked",
			"question", id, "run", run, "by", "", "detail", "1 question(s) by deploy-bot", "at", ns}}).Err())
	}
	old, other := domain.NewQuestionID(p), domain.NewQuestionID(p)
	write(old, "run-a", "Ship build 7?", 1)
	write(other, "run-b", "Ship build 8?", 2)

	q, err := s.Get(ctx, p, old)
	require.NoError(t, err)
	assert.Equal(t, "Ship build 7?", q.Questions[0].Question)
	assert.Equal(t, domain.Fingerprint(items("Ship build 7?")), q.Fingerprint)
	assert.True(t, created.Equal(q.CreatedAt) && created.Equal(q.UpdatedAt), "%s %s", q.CreatedAt, q.UpdatedAt)
	pending, err := s.List(ctx, p, domain.StatusPending, 0)
	require.NoError(t, err)
	assert.Len(t, pending, 2)
	r, err := s.Run(ctx, p, "run-a")
	require.NoError(t, err)
	assert.Equal(t, "deploy-bot", r.AgentID)
	assert.Equal(t, domain.RunRunning, r.Status)

	ask := func(run, text string) lifecycle.CreateResult {
		t.Helper()
		now := time.Now().UTC()
		res, err := s.Create(ctx, &domain.Question{ID: domain.NewQuestionID(p), ProjectID: p, RunID: run, AgentID: "deploy-bot",
			Kind: domain.KindQuestion, Status: domain.StatusPending, Questions: items(text), CreatedAt: now, UpdatedAt: now,
			ExpiresAt: now.Add(time.Hour), Fingerprint: domain.Fingerprint(items(text))})
		require.NoError(t, err)
		return res
	}
	// The same question again re-attaches to the one asked before.
	res := ask("run-a", "Ship build 7?")
	assert.True(t, res.Reattached)
	assert.Equal(t, old, res.Question.ID)

	a := domain.Resolve(q.Questions, [][]string{{"Yes"}})
	q, err = s.Transition(ctx, p, old, lifecycle.Transition{To: domain.StatusAnswered, Answer: &a, By: &domain.Person{Platform: "api", ID: "x"}})
	require.NoError(t, err)
	assert.Equal(t, domain.StatusAnswered, q.Status)
	// Within the re-attach window the answered question is found again.
	res = ask("run-a", "Ship build 7?")
	assert.True(t, res.Reattached)
	assert.Equal(t, old, res.Question.ID)
	trail, err := s.Audit(ctx, p, old, 0)
	require.NoError(t, err)
	require.Len(t, trail, 2, "the entry written before ids were packed and the one after")
	assert.Equal(t, []string{"asked", "answered"}, []string{trail[0].Type, trail[1].Type})
	assert.Equal(t, []string{old, old}, []string{trail[0].QuestionID, trail[1].QuestionID})
	assert.True(t, created.Equal(trail[0].At))
	evs, err := s.Events(ctx, p, "", 100)
	require.NoError(t, err)
	var mine []string
	for _, e := range evs {
		if e.QuestionID == old {
			mine = append(mine, e.Type)
		}
	}
	assert.Equal(t, []string{domain.EventCreated, domain.EventAnswered}, mine)
	hist, err := s.History(ctx, p, domain.HistoryKey("deploy-bot", items("Ship build 7?")), 5)
	require.NoError(t, err)
	require.Len(t, hist, 1)
	assert.Equal(t, old, hist[0].ID)

	// A new question on the other run supersedes the one asked before.
	res = ask("run-b", "Ship build 9?")
	assert.False(t, res.Reattached)
	require.NotNil(t, res.Superseded)
	assert.Equal(t, other, res.Superseded.ID)
	assert.Equal(t, domain.StatusCancelled, res.Superseded.Status)
	qs, err := s.RunQuestions(ctx, p, "run-b")
	require.NoError(t, err)
	require.Len(t, qs, 2)
	assert.Equal(t, []string{other, res.Question.ID}, []string{qs[0].ID, qs[1].ID})
	pending, err = s.List(ctx, p, domain.StatusPending, 0)
	require.NoError(t, err)
	require.Len(t, pending, 1)
	assert.Equal(t, res.Question.ID, pending[0].ID)
}

// A run whose one question is pending is a stub (runKey in scripts.go):
// it reads as the run it stands for, and once something changes it — a
// pause here — it is the run's hash, living as long as its question may
// be pending plus retention, not only retention.
func TestRunStubReadsAsItsRunAndKeepsItsLifetime(t *testing.T) {
	srv := storetest.Redis(t)
	s := open(t, srv.URL)
	ctx := context.Background()
	q := pendingQuestion("stubs")
	q.ExpiresAt = q.CreatedAt.Add(30 * 24 * time.Hour) // beyond retention (7 days)
	_, err := s.Create(ctx, q)
	require.NoError(t, err)
	rk := "askbridge:{stubs}:run:" + q.RunID
	typ, err := s.Client().Type(ctx, rk).Result()
	require.NoError(t, err)
	assert.Equal(t, "string", typ, "a run of one pending question is a stub")
	r, err := s.Run(ctx, "stubs", q.RunID)
	require.NoError(t, err)
	assert.Equal(t, domain.Run{ID: q.RunID, ProjectID: "stubs", AgentID: "bot", Status: domain.RunRunning,
		CreatedAt: q.CreatedAt, UpdatedAt: q.CreatedAt}, *r)
	qs, err := s.RunQuestions(ctx, "stubs", q.RunID)
	require.NoError(t, err)
	require.Len(t, qs, 1)
	assert.Equal(t, q.ID, qs[0].ID)

	_, err = s.PauseRun(ctx, "stubs", q.RunID, "bot", time.Now())
	require.NoError(t, err)
	typ, _ = s.Client().Type(ctx, rk).Result()
	assert.Equal(t, "hash", typ)
	ttl, err := s.Client().PTTL(ctx, rk).Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, 30*24*time.Hour, "the run outlives its question's deadline")
	r, err = s.Run(ctx, "stubs", q.RunID)
	require.NoError(t, err)
	assert.Equal(t, domain.RunPaused, r.Status)
	assert.Equal(t, q.CreatedAt, r.CreatedAt)
	qs, err = s.RunQuestions(ctx, "stubs", q.RunID)
	require.NoError(t, err)
	require.Len(t, qs, 1)
	assert.Equal(t, q.ID, qs[0].ID)
}

// Question ids that are not canonical UUIDs (an upper-case one, any other
// string) are kept as they are where this layout packs ids, and read
// back, listed, answered and found in the streams like the others.
func TestIdsKeptUnpackedReadTheSame(t *testing.T) {
	srv := storetest.Redis(t)
	s := open(t, srv.URL)
	ctx := context.Background()
	for _, id := range []string{strings.ToUpper(uuid.NewString()), "question-7"} {
		q := pendingQuestion("odd")
		q.ID = id
		_, err := s.Create(ctx, q)
		require.NoError(t, err)
		pending, err := s.List(ctx, "odd", domain.StatusPending, 0)
		require.NoError(t, err)
		require.Len(t, pending, 1)
		assert.Equal(t, id, pending[0].ID)
		page, err := s.ListPage(ctx, "odd", lifecycle.ListQuery{Status: domain.StatusPending})
		require.NoError(t, err)
		require.Len(t, page.Questions, 1)
		assert.Equal(t, id, page.Questions[0].ID)
		due, err := s.Due(ctx, q.ExpiresAt.Add(time.Second), 10)
		require.NoError(t, err)
		assert.Contains(t, due, lifecycle.Ref{ProjectID: "odd", ID: id})
		q, err = s.Transition(ctx, "odd", id, lifecycle.Transition{To: domain.StatusCancelled, CancelReason: "test"})
		require.NoError(t, err)
		assert.Equal(t, domain.StatusCancelled, q.Status)
		trail, err := s.Audit(ctx, "odd", id, 0)
		require.NoError(t, err)
		assert.Len(t, trail, 2)
		pending, err = s.List(ctx, "odd", domain.StatusPending, 0)
		require.NoError(t, err)
		assert.Empty(t, pending)
	}
}
