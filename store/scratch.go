package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// PutDraft implements lifecycle.Store. A question's drafts are one hash,
// draft:<id> (a field per person), so they go with the question when it
// becomes final; ttl bounds the hash in any case.
func (s *Store) PutDraft(ctx context.Context, project, id, person string, draft map[string][]string, ttl time.Duration) error {
	if ttl <= 0 {
		ttl = s.retention
	}
	b := marshal(draft)
	pipe := s.rdb.TxPipeline()
	pipe.HSet(ctx, s.base(project)+"draft:"+id, person, b)
	pipe.PExpire(ctx, s.base(project)+"draft:"+id, ttl)
	_, err := pipe.Exec(ctx)
	return s.wrap(err)
}

// GetDraft implements lifecycle.Store (drafts of the earlier layout, one
// string key draft:<id>:<person>, are read too).
func (s *Store) GetDraft(ctx context.Context, project, id, person string) (map[string][]string, error) {
	pipe := s.rdb.Pipeline()
	hc := pipe.HGet(ctx, s.base(project)+"draft:"+id, person)
	lc := pipe.Get(ctx, s.base(project)+"draft:"+id+":"+person)
	out := map[string][]string{}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return out, s.wrap(err)
	}
	b := hc.Val()
	if b == "" {
		b = lc.Val()
	}
	if b != "" {
		_ = json.Unmarshal([]byte(b), &out)
	}
	return out, nil
}

// Once implements lifecycle.Store. The key lives for ttl (retention when ttl
// is not positive).
// Marked reports whether Once has seen key within its ttl.
func (s *Store) Marked(ctx context.Context, key string) (bool, error) {
	n, err := s.rdb.Exists(ctx, s.prefix+":once:"+key).Result()
	return n > 0, s.wrap(err)
}

func (s *Store) Once(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		ttl = s.retention
	}
	ok, err := s.rdb.SetNX(ctx, s.prefix+":once:"+key, 1, ttl).Result()
	return ok, s.wrap(err)
}
