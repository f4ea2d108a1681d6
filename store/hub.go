package store

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/redis/go-redis/v9"
)

// hub fans one Redis subscription out to every in-process watcher, so a
// replica holds a fixed number of Redis connections however many callers wait.
type hub struct {
	mu       sync.Mutex
	watchers map[string]map[*watcher]struct{} // "project\x1fid" or "project\x1f"
}

// watcher is woken through its channel, or its function (which must not
// block: it runs on the subscriber loop), which is also handed the final
// record when the wake-up carries it (WatchFinal).
type watcher struct {
	ch    chan struct{}
	final func(*domain.Question)
}

func newHub() *hub { return &hub{watchers: map[string]map[*watcher]struct{}{}} }

func (h *hub) add(key string, w *watcher) func() {
	h.mu.Lock()
	set := h.watchers[key]
	if set == nil {
		set = map[*watcher]struct{}{}
		h.watchers[key] = set
	}
	set[w] = struct{}{}
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		delete(set, w)
		if len(set) == 0 && len(h.watchers[key]) == 0 {
			delete(h.watchers, key)
		}
		h.mu.Unlock()
	}
}

func (h *hub) wake(key string) {
	var fs []func()
	h.mu.Lock()
	for w := range h.watchers[key] {
		switch {
		case w.final != nil:
			fs = append(fs, func() { w.final(nil) })
		default:
			select {
			case w.ch <- struct{}{}:
			default: // already woken; the watcher re-reads state anyway
			}
		}
	}
	h.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// finalWatchers returns the watchers of key that take the final record.
func (h *hub) finalWatchers(key string) []func(*domain.Question) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var fs []func(*domain.Question)
	for w := range h.watchers[key] {
		if w.final != nil {
			fs = append(fs, w.final)
		}
	}
	return fs
}

// wakeAll wakes every watcher (after a lost subscription, anything may have
// changed).
func (h *hub) wakeAll() {
	h.mu.Lock()
	keys := make([]string, 0, len(h.watchers))
	for k := range h.watchers {
		keys = append(keys, k)
	}
	h.mu.Unlock()
	for _, k := range keys {
		h.wake(k)
	}
}

// Watch implements lifecycle.Store.
func (s *Store) Watch(project, id string) (<-chan struct{}, func()) {
	w := &watcher{ch: make(chan struct{}, 1)}
	return w.ch, s.hub.add(project+"\x1f"+id, w)
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
	return s.hub.add(project+"\x1f"+id, &watcher{final: f})
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
	fs := s.hub.finalWatchers(project + "\x1f" + id)
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
		s.hub.wakeAll()
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
						s.hub.wakeAll()
					}
				case *redis.Message:
					if strings.HasPrefix(msg.Payload, finalPrefix) {
						s.wakeFinal(msg.Payload)
						continue
					}
					project, id, _ := strings.Cut(msg.Payload, "\x1f")
					s.hub.wake(project + "\x1f" + id)
					if id != "" {
						s.hub.wake(project + "\x1f")
					}
				}
			}
		}
		ps.Close()
	}
	once.Do(func() { close(ready) })
}
