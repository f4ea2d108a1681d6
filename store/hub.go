package store

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store/internal/wakehub"
	"github.com/redis/go-redis/v9"
)

// The replica's one Redis subscription is fanned out to every in-process
// watcher through a wakehub.Hub, so a replica holds a fixed number of Redis
// connections however many callers wait.

// Watch implements lifecycle.Store.
func (s *Store) Watch(project, id string) (<-chan struct{}, func()) {
	return s.hub.Watch(wakehub.Key(project, id))
}

// WatchFinal is Watch with a callback, for a caller that parks many waits
// without a goroutine each and only needs the question once
// it is final (a parked long-poll): when the question becomes final, f is
// given the final record as the script that finalized it left it, carried
// in the wake-up itself, so the caller need not read it back from Redis.
// Every other wake-up (and one after the record, since an earlier replica
// publishes only those) calls f(nil): re-read the question. f runs on the
// replica's subscriber loop and must not block; the record is shared with
// the question's other watchers on this replica: do not modify it.
func (s *Store) WatchFinal(project, id string, f func(q *domain.Question)) (stop func()) {
	return s.hub.WatchFinal(wakehub.Key(project, id), f)
}

// finalPrefix starts a wake-up that carries a final record (finalize in
// scripts.go): "\x1e" project "\x1e" id "\x1e" hash-as-JSON "\x1e" d:<id>.
// An earlier release, which splits a wake-up at its first "\x1f", reads
// it as a project name (they never hold "\x1e") nobody watches.
const finalPrefix = "\x1e"

// wakeFinal hands the record a final wake-up carries to the question's
// final watchers. It decodes the record only when someone on this replica
// waits for it; a record that does not decode is dropped (the plain
// wake-up published after it makes the watchers re-read).
func (s *Store) wakeFinal(payload string) {
	parts := strings.SplitN(payload[len(finalPrefix):], finalPrefix, 4)
	if len(parts) != 4 {
		return
	}
	project, id, hash, doc := parts[0], parts[1], parts[2], parts[3]
	fs := s.hub.FinalWatchers(wakehub.Key(project, id))
	if len(fs) == 0 {
		return
	}
	q, ok := s.carried(project, id, hash, doc)
	if !ok {
		return
	}
	for _, f := range fs {
		f(q)
	}
}

// subscribe is the replica's single subscriber loop. It reconnects on
// failure and then wakes everyone, since messages may have been missed.
func (s *Store) subscribe(ctx context.Context, ready chan struct{}) {
	defer close(s.done)
	once := sync.Once{}
	for ctx.Err() == nil {
		ps := s.rdb.Subscribe(ctx, s.channel)
		if _, err := ps.Receive(ctx); err != nil {
			ps.Close()
			if ctx.Err() == nil {
				s.log.Warn("event subscription failed; retrying", "err", err)
				select {
				case <-time.After(500 * time.Millisecond):
				case <-ctx.Done():
				}
			}
			continue
		}
		once.Do(func() { close(ready) })
		s.hub.WakeAll()
		// go-redis re-subscribes by itself after a lost connection (a Redis
		// restart, a Sentinel failover, a Cluster node change); messages
		// published meanwhile are lost, so every re-subscription wakes all
		// watchers to re-read their state.
		ch := ps.ChannelWithSubscriptions(redisChannelSize())
	recv:
		for {
			select {
			case <-ctx.Done():
				break recv
			case m, ok := <-ch:
				if !ok {
					break recv
				}
				switch msg := m.(type) {
				case *redis.Subscription:
					if msg.Kind == "subscribe" {
						s.log.Info("event subscription re-established; waking every waiter to re-read")
						s.hub.WakeAll()
					}
				case *redis.Message:
					if strings.HasPrefix(msg.Payload, finalPrefix) {
						s.wakeFinal(msg.Payload)
						continue
					}
					project, id, _ := strings.Cut(msg.Payload, "\x1f")
					s.hub.Wake(wakehub.Key(project, id), nil)
					if id != "" {
						s.hub.Wake(wakehub.Key(project, ""), nil)
					}
				}
			}
		}
		ps.Close()
	}
	once.Do(func() { close(ready) })
}
