package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/redis/go-redis/v9"
)

// Events implements lifecycle.Store.
func (s *Store) Events(ctx context.Context, project, after string, limit int) ([]domain.Event, error) {
	if after == "$" {
		return nil, nil
	}
	if after == "" {
		after = "0-0"
	}
	if limit <= 0 {
		limit = 100
	}
	res, err := s.rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{s.base(project) + "events", after},
		Count: int64(limit), Block: -1}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		if strings.Contains(err.Error(), "Invalid stream ID") || strings.Contains(err.Error(), "invalid stream ID") {
			return nil, domain.Errorf(domain.EInvalid, "Last-Event-ID %q is not an event id", after)
		}
		return nil, s.wrap(err)
	}
	var out []domain.Event
	for _, st := range res {
		for _, m := range st.Messages {
			ev := domain.Event{ID: m.ID, ProjectID: project, Type: str(m.Values["type"]),
				QuestionID: unpackID(str(m.Values["question"])), RunID: str(m.Values["run"])}
			ev.At = parseStamp(str(m.Values["at"]))
			if d := str(m.Values["data"]); d != "" {
				ev.Data = json.RawMessage(d)
			}
			out = append(out, ev)
		}
	}
	return out, nil
}

// LastEventID returns the id of the newest event of a project ("0-0" when none).
func (s *Store) LastEventID(ctx context.Context, project string) (string, error) {
	res, err := s.rdb.XRevRangeN(ctx, s.base(project)+"events", "+", "-", 1).Result()
	if err != nil || len(res) == 0 {
		return "0-0", s.wrap(err)
	}
	return res[0].ID, nil
}

// AppendEvent implements lifecycle.Store.
func (s *Store) AppendEvent(ctx context.Context, ev domain.Event) error {
	if ev.At.IsZero() {
		ev.At = time.Now().UTC()
	}
	vals := []any{"type", ev.Type, "question", packID(ev.QuestionID), "run", ev.RunID, "at", stamp(ev.At)}
	if len(ev.Data) > 0 {
		vals = append(vals, "data", string(ev.Data))
	}
	pipe := s.rdb.Pipeline()
	pipe.XAdd(ctx, &redis.XAddArgs{Stream: s.base(ev.ProjectID) + "events", MaxLen: int64(s.maxLen), Approx: true, Values: vals})
	pipe.Publish(ctx, s.channel, ev.ProjectID+"\x1f"+ev.QuestionID)
	_, err := pipe.Exec(ctx)
	return s.wrap(err)
}
