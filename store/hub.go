package store

import (
	"context"

	"github.com/redis/go-redis/v9"
	"strings"
	"sync"
	"time"
)

// hub fans one Redis subscription out to every in-process watcher, so a
// replica holds a fixed number of Redis connections however many callers wait.
type hub struct {
	mu       sync.Mutex
	watchers map[string]map[*watcher]struct{} // "project\x1fid" or "project\x1f"
}

// watcher is woken through its channel, or its function (which must not
// block: it runs on the subscriber loop).
type watcher struct {
	ch chan struct{}
	f  func()
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
		if w.f != nil {
			fs = append(fs, w.f)
			continue
		}
		select {
		case w.ch <- struct{}{}:
		default: // already woken; the watcher re-reads state anyway
		}
	}
	h.mu.Unlock()
	for _, f := range fs {
		f()
	}
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

// Watch implements core.Store.
func (s *Store) Watch(project, id string) (<-chan struct{}, func()) {
	w := &watcher{ch: make(chan struct{}, 1)}
	return w.ch, s.hub.add(project+"\x1f"+id, w)
}

// WatchFunc is Watch with a callback instead of a channel, for callers
// that park many waits without a goroutine each. f runs on the replica's
// subscriber loop and must not block.
func (s *Store) WatchFunc(project, id string, f func()) (stop func()) {
	return s.hub.add(project+"\x1f"+id, &watcher{f: f})
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
