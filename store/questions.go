package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/redis/go-redis/v9"
)

// Create implements lifecycle.Store.
func (s *Store) Create(ctx context.Context, q *domain.Question) (lifecycle.CreateResult, error) {
	if err := s.register(ctx, q.ProjectID); err != nil {
		return lifecycle.CreateResult{}, s.wrap(err)
	}
	supJSON := marshal(result{CancelReason: domain.CancelSuperseded})
	now := q.CreatedAt
	// Keys live while the question may be pending, plus retention; once
	// final, retention from then (finalize in scripts.go).
	ttl := q.ExpiresAt.Sub(now) + s.retention
	esc := int64(0)
	if len(q.Escalation) > 0 {
		esc = ms(q.CreatedAt.Add(time.Duration(q.Escalation[0].After)))
	}
	asked := fmt.Sprintf("%d question(s) by %s", len(q.Questions), q.AgentID)
	doc := encodeDoc(q)
	args := append(s.common(q.ProjectID, now, 0), q.ID, q.RunID, q.AgentID, doc,
		ms(q.ExpiresAt), packHex(q.Fingerprint), q.IdempotencyKey, supJSON, ttl.Milliseconds(), esc, asked, boolArg(q.Kind == domain.KindApproval),
		packHex(domain.HistoryKey(q.AgentID, q.Questions)), q.BatchWindow.Milliseconds(), q.BatchID, q.Fingerprint, packID(q.ID))
	res, err := createScript.Run(ctx, s.rdb, []string{s.qkey(q.ProjectID, q.ID)}, args...).StringSlice()
	if err != nil {
		return lifecycle.CreateResult{}, s.wrap(err)
	}
	if res[0] == "run_owned" {
		return lifecycle.CreateResult{}, errRunOwned(q.RunID)
	}
	out := lifecycle.CreateResult{}
	id := res[1]
	if res[0] == "reattach" {
		out.Reattached = true
	} else if len(res) > 2 && res[2] != "" {
		if sup, err := s.Get(ctx, q.ProjectID, res[2]); err == nil {
			out.Superseded = sup
		}
	}
	if res[0] == "created" && len(res) > 3 {
		// The record as the script wrote it (createScript's HSET of the
		// question's hash, and doc), decoded as Get decodes it: reading it
		// back cost redis-server a round trip per ask.
		h := map[string]string{"status": string(domain.StatusPending), "run": q.RunID, "fp": packHex(q.Fingerprint)}
		if res[3] != "" {
			h["b"] = res[3]
		}
		out.Question, _, err = decode(q.ProjectID, id, h, doc)
		return out, err
	}
	out.Question, err = s.Get(ctx, q.ProjectID, id)
	return out, err
}

// Locate implements lifecycle.Store. There is no id→project index: ids made by
// domain.NewQuestionID carry a hash of their project, so Locate first looks
// in the projects with that hash (one round trip, usually one key), then,
// for other ids (an older release's) or a miss, in every project.
func (s *Store) Locate(ctx context.Context, id string) (string, error) {
	hint, hinted := domain.ProjectHint(id)
	tried := map[string]bool{}
	for pass := range 3 {
		// 0: hinted projects as known; 1: the same after reading the
		// projects set; 2: every project.
		ps, err := s.projectList(ctx, pass == 1)
		if err != nil {
			return "", err
		}
		var cands []string
		for _, p := range ps {
			if !tried[p] && (pass == 2 || !hinted || domain.ProjectHash(p) == hint) {
				cands = append(cands, p)
				tried[p] = true
			}
		}
		if len(cands) == 0 {
			continue
		}
		pipe := s.rdb.Pipeline()
		cmds := make([]*redis.IntCmd, len(cands))
		for i, p := range cands {
			cmds[i] = pipe.Exists(ctx, s.qkey(p, id))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return "", s.wrap(err)
		}
		for i, c := range cmds {
			if c.Val() == 1 {
				return cands[i], nil
			}
		}
	}
	return "", domain.Errorf(domain.ENotFound, "no question %s", id)
}

// Get implements lifecycle.Store. Unlike a list, which skips a corrupt record,
// Get reports it as the error it is rather than as "not found".
func (s *Store) Get(ctx context.Context, project, id string) (*domain.Question, error) {
	pipe := s.rdb.Pipeline()
	hc, dc := pipe.HGetAll(ctx, s.qkey(project, id)), pipe.Get(ctx, s.base(project)+"d:"+id)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, s.wrap(err)
	}
	if len(hc.Val()) == 0 || dc.Err() != nil {
		return nil, domain.Errorf(domain.ENotFound, "no question %s in project %s", id, project)
	}
	q, _, err := decode(project, id, hc.Val(), dc.Val())
	return q, err
}

// StillPending reports whether a question is pending from the status
// field of its hash alone (false for one that is gone): the parked waits'
// checks read this, not the record.
func (s *Store) StillPending(ctx context.Context, project, id string) (bool, error) {
	st, err := s.rdb.HGet(ctx, s.qkey(project, id), "status").Result()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, s.wrap(err)
	}
	return st == string(domain.StatusPending), nil
}

// StillPendingEach is StillPending for each question (projects[i], ids[i])
// in one round trip.
func (s *Store) StillPendingEach(ctx context.Context, projects, ids []string) ([]bool, error) {
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.StringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGet(ctx, s.qkey(projects[i], id), "status")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, s.wrap(err)
	}
	out := make([]bool, len(ids))
	for i, c := range cmds {
		out[i] = c.Val() == string(domain.StatusPending)
	}
	return out, nil
}

// List implements lifecycle.Store.
func (s *Store) List(ctx context.Context, project string, status domain.Status, limit int) ([]*domain.Question, error) {
	if limit <= 0 {
		limit = 500
	}
	if status == domain.StatusPending {
		return s.listPending(ctx, project, limit)
	}
	// Non-pending filters scan more of the index to fill the page.
	scan := limit
	if status != "" {
		scan = limit * 4
	}
	ids, err := s.rdb.ZRevRange(ctx, s.base(project)+"all", 0, int64(scan-1)).Result()
	if err != nil {
		return nil, s.wrap(err)
	}
	unpackIDs(ids)
	qs, _, err := s.getMany(ctx, project, "all", ids)
	if err != nil {
		return nil, err
	}
	out := make([]*domain.Question, 0, len(qs))
	for i := len(qs) - 1; i >= 0; i-- { // oldest first
		if status == "" || qs[i].Status == status {
			out = append(out, qs[i])
		}
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, nil
}

// listPending lists the newest limit pending questions, oldest first. The
// deadlines index holds exactly the pending questions, so no index of its
// own is kept for them; creation order is each record's sequence number.
func (s *Store) listPending(ctx context.Context, project string, limit int) ([]*domain.Question, error) {
	ids, err := s.rdb.ZRange(ctx, s.base(project)+"deadlines", 0, -1).Result()
	if err != nil {
		return nil, s.wrap(err)
	}
	unpackIDs(ids)
	if len(ids) > limit { // keep the newest: read only the sequence numbers first
		pipe := s.rdb.Pipeline()
		cmds := make([]*redis.StringCmd, len(ids))
		for i, id := range ids {
			cmds[i] = pipe.HGet(ctx, s.qkey(project, id), "seq")
		}
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return nil, s.wrap(err)
		}
		seqs := make(map[string]int64, len(ids))
		for i, c := range cmds {
			seqs[ids[i]], _ = strconv.ParseInt(c.Val(), 10, 64)
		}
		sort.Slice(ids, func(i, j int) bool { return seqs[ids[i]] > seqs[ids[j]] })
		ids = ids[:limit]
	}
	qs, seqs, err := s.getMany(ctx, project, "deadlines", ids)
	if err != nil {
		return nil, err
	}
	order := make(map[*domain.Question]int64, len(qs))
	out := qs[:0]
	for i, q := range qs {
		if q.Status == domain.StatusPending {
			order[q] = seqs[i]
			out = append(out, q)
		}
	}
	sort.Slice(out, func(i, j int) bool { return order[out[i]] < order[out[j]] })
	return out, nil
}

// getMany reads questions in one round trip, with their sequence numbers,
// and drops index entries whose record has expired.
func (s *Store) getMany(ctx context.Context, project, index string, ids []string) ([]*domain.Question, []int64, error) {
	if len(ids) == 0 {
		return nil, nil, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	docs := make([]*redis.StringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGetAll(ctx, s.qkey(project, id))
		docs[i] = pipe.Get(ctx, s.base(project)+"d:"+id)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, nil, s.wrap(err)
	}
	out := make([]*domain.Question, 0, len(ids))
	seqs := make([]int64, 0, len(ids))
	var gone []any
	for i, c := range cmds {
		h := c.Val()
		if len(h) == 0 || docs[i].Err() != nil {
			gone = append(gone, packID(ids[i]), ids[i]) // as either layout indexed it
			continue
		}
		q, seq, err := decode(project, ids[i], h, docs[i].Val())
		if err != nil {
			s.log.Warn("skipping corrupt question record", "project", project, "question", ids[i], "err", err)
			continue
		}
		out = append(out, q)
		seqs = append(seqs, seq)
	}
	if len(gone) > 0 && index != "" {
		s.rdb.ZRem(ctx, s.base(project)+index, gone...)
	}
	return out, seqs, nil
}

// HistKeep is how many questions asked the same way the history index keeps
// (the newest): what history shows is the newest few answered among them.
const HistKeep = 64

// History implements lifecycle.QuestionReader: the newest HistKeep entries
// of the index, their statuses read first so only the answered ones (at
// most limit) are decoded.
func (s *Store) History(ctx context.Context, project, key string, limit int) ([]*domain.Question, error) {
	if limit <= 0 {
		return []*domain.Question{}, nil
	}
	index := "hist:" + key
	ids, err := s.rdb.ZRevRange(ctx, s.base(project)+index, 0, HistKeep-1).Result()
	if err != nil || len(ids) == 0 {
		return []*domain.Question{}, s.wrap(err)
	}
	pipe := s.rdb.Pipeline()
	sts := make([]*redis.StringCmd, len(ids))
	for i, id := range ids {
		sts[i] = pipe.HGet(ctx, s.qkey(project, id), "status")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, s.wrap(err)
	}
	var pick, gone []string
	for i, c := range sts {
		switch st := c.Val(); {
		case st == "":
			gone = append(gone, ids[i])
		case st == string(domain.StatusAnswered) && len(pick) < limit:
			pick = append(pick, ids[i])
		}
	}
	if len(gone) > 0 {
		s.rdb.ZRem(ctx, s.base(project)+index, toAny(gone)...)
	}
	qs, _, err := s.getMany(ctx, project, index, pick)
	if qs == nil {
		qs = []*domain.Question{}
	}
	return qs, err
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// RunQuestions implements lifecycle.Store. A run's questions are fields
// q:<seq> of its hash (runs of the earlier layout: the zset runq:<run>), or
// the one question of a run stub.
func (s *Store) RunQuestions(ctx context.Context, project, run string) ([]*domain.Question, error) {
	pipe := s.rdb.Pipeline()
	hc := pipe.HGetAll(ctx, s.base(project)+"run:"+run)
	zc := pipe.ZRangeWithScores(ctx, s.base(project)+"runq:"+run, 0, -1)
	_, _ = pipe.Exec(ctx)
	h, stub, err := hc.Val(), "", hc.Err()
	if isWrongType(err) {
		h, stub, err = s.runHash(ctx, project, run)
	}
	if err == nil {
		err = zc.Err()
	}
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, s.wrap(err)
	}
	zs := zc.Val()
	type entry struct {
		seq int64
		id  string
	}
	var es []entry
	if stub != "" {
		es = append(es, entry{0, stub})
	}
	for k, v := range h {
		if n, ok := strings.CutPrefix(k, "q:"); ok {
			seq, _ := strconv.ParseInt(n, 10, 64)
			es = append(es, entry{seq, v})
		}
	}
	for _, z := range zs {
		es = append(es, entry{int64(z.Score), fmt.Sprint(z.Member)})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].seq < es[j].seq })
	ids := make([]string, 0, len(es))
	for i, e := range es {
		if i == 0 || e.id != es[i-1].id {
			ids = append(ids, e.id)
		}
	}
	qs, _, err := s.getMany(ctx, project, "", ids)
	if qs == nil && err == nil {
		qs = []*domain.Question{}
	}
	return qs, err
}

// AttachCopy implements lifecycle.Store: the copy's line in d:<id> replaces the
// line of the same target, or is added.
func (s *Store) AttachCopy(ctx context.Context, project, id string, t domain.Target) error {
	n, err := attachScript.Run(ctx, s.rdb, []string{s.qkey(project, id), s.base(project) + "d:" + id},
		t.Platform, t.Channel, t.ThreadTS, copyLine(t)).Int()
	if err != nil {
		return s.wrap(err)
	}
	if n == 0 {
		return domain.Errorf(domain.ENotFound, "no question %s in project %s", id, project)
	}
	return nil
}

// MarkRead implements lifecycle.Store.
func (s *Store) MarkRead(ctx context.Context, project, id string) (*domain.Question, error) {
	n, err := markReadScript.Run(ctx, s.rdb, []string{s.qkey(project, id)}).Int()
	if err != nil {
		return nil, s.wrap(err)
	}
	if n == 0 {
		return nil, domain.Errorf(domain.ENotFound, "no notification %s in project %s", id, project)
	}
	return s.Get(ctx, project, id)
}
