package store

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/redis/go-redis/v9"
)

// Transition implements lifecycle.Store.
func (s *Store) Transition(ctx context.Context, project, id string, tr lifecycle.Transition) (*domain.Question, error) {
	if !tr.To.Final() {
		return nil, domain.Errorf(domain.EInvalid, "cannot move a question to %q", tr.To)
	}
	at := tr.At
	if at.IsZero() {
		at = time.Now().UTC()
	}
	resJSON := resultJSON(tr, at)
	requirePaused := "0"
	if tr.RequirePausedRun {
		requirePaused = "1"
	}
	args := append(s.common(project, at, tr.Retention), id, string(tr.To), resJSON, domain.EventForStatus(tr.To),
		requirePaused, tr.ContinuationRunID, tr.DeliveryID, personJSON(tr.By), transitionDetail(tr), s.deliveryKeep.Milliseconds())
	out, err := transitionScript.Run(ctx, s.rdb, []string{s.qkey(project, id)}, args...).StringSlice()
	if err != nil {
		return nil, s.wrap(err)
	}
	return s.outcome(ctx, project, id, out)
}

// outcome turns the reply of the transition or vote script into what the
// caller gets: the question as it now is, or the refusal. Both scripts
// answer {"notfound"}, {"final", status} or {"run_not_paused", runStatus}
// when they change nothing; any other reply (ok, voted, resolved) changed
// the question. A reply that made it final carries the final record
// (finalize in scripts.go), which saves reading it back.
func (s *Store) outcome(ctx context.Context, project, id string, out []string) (*domain.Question, error) {
	if len(out) == 4 && out[2] != "" {
		if q, ok := s.carried(project, id, out[2], out[3]); ok {
			return q, nil
		}
	}
	switch out[0] {
	case "notfound":
		return nil, domain.Errorf(domain.ENotFound, "no question %s in project %s", id, project)
	case "run_not_paused":
		q, _ := s.Get(ctx, project, id)
		state := "its state is unknown" // the run's record is gone (expired or evicted)
		if len(out) > 1 && out[1] != "" {
			state = "it is " + out[1]
		}
		return q, domain.Errorf(domain.ERunNotPaused, "the question's run is not paused (%s): a webhook-mode question "+
			"takes an answer only after its run has reported its pause", state)
	case "final":
		q, err := s.Get(ctx, project, id)
		if err != nil {
			return nil, err
		}
		return q, domain.StatusError(q)
	}
	return s.Get(ctx, project, id)
}

// carried decodes a final record a script returned or published: its
// hash as JSON and its d:<id>. ok is false when it does not decode or is
// not final (the caller reads the record instead).
func (s *Store) carried(project, id, hash, doc string) (*domain.Question, bool) {
	var h map[string]string
	if err := json.Unmarshal([]byte(hash), &h); err != nil {
		s.log.Warn("a final record from a script did not decode; reading it instead", "question", id, "err", err)
		return nil, false
	}
	q, _, err := decode(project, id, h, doc)
	if err != nil || !q.Status.Final() {
		return nil, false
	}
	return q, true
}

func resultJSON(tr lifecycle.Transition, at time.Time) string {
	res := result{RespondedBy: tr.By, CancelReason: tr.CancelReason, CancelNote: tr.CancelNote, Defaulted: tr.Defaulted}
	if tr.Answer != nil {
		res.Answers, res.Selections, res.Response, res.Skipped = tr.Answer.Answers, tr.Answer.Selections, tr.Answer.Response, tr.Answer.Skipped
		res.setApproval(tr.Answer)
	}
	if tr.To == domain.StatusAnswered || (tr.To == domain.StatusCancelled && tr.By != nil) {
		res.RespondedAt = &at
	}
	b := marshal(res)
	return string(b)
}

// transitionDetail is the audit trail's one-line account of a transition.
func transitionDetail(tr lifecycle.Transition) string {
	switch {
	case tr.Answer != nil && tr.Defaulted:
		return "default on timeout: " + tr.Answer.Response
	case tr.Answer != nil && tr.Answer.Reason != "":
		return tr.Answer.Response + " (reason: " + tr.Answer.Reason + ")"
	case tr.Answer != nil:
		return tr.Answer.Response
	case tr.CancelReason != "" && tr.CancelNote != "":
		return tr.CancelReason + ": " + tr.CancelNote
	case tr.CancelReason != "":
		return tr.CancelReason
	}
	return ""
}

// Due implements lifecycle.Store.
func (s *Store) Due(ctx context.Context, now time.Time, limit int) ([]lifecycle.Ref, error) {
	return s.dueIn(ctx, "deadlines", now, limit)
}

// dueIn lists, across projects, the members of a per-project time index
// whose time has come.
func (s *Store) dueIn(ctx context.Context, index string, now time.Time, limit int) ([]lifecycle.Ref, error) {
	projects, err := s.Projects(ctx)
	if err != nil {
		return nil, err
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.StringSliceCmd, len(projects))
	for i, p := range projects {
		cmds[i] = pipe.ZRangeByScore(ctx, s.base(p)+index, &redis.ZRangeBy{Min: "-inf",
			Max: strconv.FormatInt(ms(now), 10), Count: int64(limit)})
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, s.wrap(err)
	}
	var refs []lifecycle.Ref
	for i, c := range cmds {
		for _, id := range c.Val() {
			refs = append(refs, lifecycle.Ref{ProjectID: projects[i], ID: unpackID(id)})
		}
	}
	return refs, nil
}

// Vote implements lifecycle.Store.
func (s *Store) Vote(ctx context.Context, project, id string, v domain.Vote, required int, veto bool, tr lifecycle.Transition) (*domain.Question, bool, error) {
	if v.At.IsZero() {
		v.At = time.Now().UTC()
	}
	at := v.At
	if tr.At.IsZero() {
		tr.At = at
	}
	vote := marshal(v)
	vetoArg, requirePaused := "0", "0"
	if veto {
		vetoArg = "1"
	}
	if tr.RequirePausedRun {
		requirePaused = "1"
	}
	args := append(s.common(project, at, tr.Retention), id, v.By.Platform+":"+v.By.ID, vote, v.Label, required, vetoArg,
		resultJSON(tr, tr.At), requirePaused, tr.ContinuationRunID, tr.DeliveryID, personJSON(&v.By), s.deliveryKeep.Milliseconds())
	out, err := voteScript.Run(ctx, s.rdb, []string{s.qkey(project, id)}, args...).StringSlice()
	if err != nil {
		return nil, false, s.wrap(err)
	}
	q, err := s.outcome(ctx, project, id, out)
	return q, out[0] == "resolved", err
}

// DueEscalations implements lifecycle.Store.
func (s *Store) DueEscalations(ctx context.Context, now time.Time, limit int) ([]lifecycle.Ref, error) {
	return s.dueIn(ctx, "escal", now, limit)
}

// Escalate implements lifecycle.Store.
func (s *Store) Escalate(ctx context.Context, project, id string, level int, next time.Time, detail string, at time.Time) (bool, error) {
	nextMS := int64(0)
	if !next.IsZero() {
		nextMS = ms(next)
	}
	args := append(s.common(project, at, 0), id, level, nextMS, detail)
	n, err := escalateScript.Run(ctx, s.rdb, []string{s.qkey(project, id)}, args...).Int()
	return n == 1, s.wrap(err)
}
