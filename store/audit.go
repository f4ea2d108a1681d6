package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/redis/go-redis/v9"
)

// AppendAudit implements lifecycle.Store.
func (s *Store) AppendAudit(ctx context.Context, e domain.AuditEntry) error {
	if e.At.IsZero() {
		e.At = time.Now().UTC()
	}
	cutoff := minID(e.At.Add(-s.auditKeep))
	return s.wrap(s.rdb.XAdd(ctx, &redis.XAddArgs{Stream: s.base(e.ProjectID) + "audit", MinID: cutoff, Approx: true,
		Values: []any{"type", e.Type, "question", packID(e.QuestionID), "run", e.RunID, "by", personJSON(e.By),
			"detail", e.Detail, "at", stamp(e.At)}}).Err())
}

// Audit implements lifecycle.Store.
func (s *Store) Audit(ctx context.Context, project, question string, limit int) ([]domain.AuditEntry, error) {
	if limit <= 0 {
		limit = 1000
	}
	out := []domain.AuditEntry{}
	start := "-"
	for len(out) < limit {
		msgs, err := s.rdb.XRangeN(ctx, s.base(project)+"audit", start, "+", 1000).Result()
		if err != nil {
			return out, s.wrap(err)
		}
		for _, m := range msgs {
			qid := unpackID(str(m.Values["question"]))
			if question != "" && qid != question {
				continue
			}
			e := domain.AuditEntry{ID: m.ID, Type: str(m.Values["type"]), ProjectID: project,
				QuestionID: qid, RunID: str(m.Values["run"]), Detail: str(m.Values["detail"])}
			if b := str(m.Values["by"]); b != "" {
				var p domain.Person
				if json.Unmarshal([]byte(b), &p) == nil {
					e.By = &p
				}
			}
			e.At = parseStamp(str(m.Values["at"]))
			out = append(out, e)
			if len(out) >= limit {
				break
			}
		}
		if len(msgs) < 1000 {
			break
		}
		start = "(" + msgs[len(msgs)-1].ID
	}
	return out, nil
}
