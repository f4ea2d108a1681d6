// Package wakehub wakes a process's callers waiting on a question or a
// project's stream. Both stores use it: the Redis store fans its one
// subscription out through it, the native store wakes through it directly
// once a change is committed.
package wakehub

import (
	"strings"
	"sync"

	"github.com/askbridge/askbridge/domain"
)

// Hub holds the watchers by key: "project\x1fid" for a question,
// "project\x1f" for a project's stream (Key). Each key's watchers are a
// list through the watchers themselves: a replica holds one watcher per
// parked long-poll, a hundred thousand of them, and a set (a map) per key
// cost more than the rest of the registration.
type Hub struct {
	mu       sync.Mutex
	watchers map[string]*watcher // the first of each key's list
}

// watcher is woken through its channel, or its function (which must not
// block: it runs on the waker's goroutine), which is also handed the final
// record when the wake-up carries it (WatchFinal).
type watcher struct {
	h          *Hub
	key        string // shares the map key's bytes
	ch         chan struct{}
	final      func(*domain.Question)
	prev, next *watcher // guarded by h.mu
	listed     bool     // guarded by h.mu
}

// New returns an empty hub.
func New() *Hub { return &Hub{watchers: map[string]*watcher{}} }

// Key is the key of a question, or of a project's stream when id is "".
func Key(project, id string) string { return project + "\x1f" + id }

// Watch returns a channel that receives (at most one pending) wake-up of
// key, and the function that stops watching.
func (h *Hub) Watch(key string) (<-chan struct{}, func()) {
	w := &watcher{ch: make(chan struct{}, 1)}
	return w.ch, h.add(key, w)
}

// WatchFinal calls f on every wake-up of key: with the final record when
// the wake-up carries it, nil otherwise (re-read). f must not block.
func (h *Hub) WatchFinal(key string, f func(*domain.Question)) (stop func()) {
	return h.add(key, &watcher{final: f})
}

func (h *Hub) add(key string, w *watcher) func() {
	w.h, w.key, w.listed = h, key, true
	h.mu.Lock()
	if first := h.watchers[key]; first != nil {
		w.key = first.key
		w.next, first.prev = first, w
	}
	h.watchers[w.key] = w
	h.mu.Unlock()
	return w.stop
}

// stop takes w off its key's list (again: nothing).
func (w *watcher) stop() {
	h := w.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if !w.listed {
		return
	}
	w.listed = false
	if w.next != nil {
		w.next.prev = w.prev
	}
	switch {
	case w.prev != nil:
		w.prev.next = w.next
	case w.next != nil:
		h.watchers[w.key] = w.next
	default:
		delete(h.watchers, w.key)
	}
	w.prev, w.next = nil, nil
}

// Wake wakes the watchers of key; final watchers get q (nil: re-read).
func (h *Hub) Wake(key string, q *domain.Question) {
	var fs []func(*domain.Question)
	h.mu.Lock()
	for w := h.watchers[key]; w != nil; w = w.next {
		if w.final != nil {
			fs = append(fs, w.final)
			continue
		}
		select {
		case w.ch <- struct{}{}:
		default: // already woken; the watcher re-reads anyway
		}
	}
	h.mu.Unlock()
	for _, f := range fs {
		f(q)
	}
}

// FinalWatchers returns the functions of key's final watchers.
func (h *Hub) FinalWatchers(key string) []func(*domain.Question) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var fs []func(*domain.Question)
	for w := h.watchers[key]; w != nil; w = w.next {
		if w.final != nil {
			fs = append(fs, w.final)
		}
	}
	return fs
}

// HasFinal reports whether key has a final watcher (someone who takes the
// final record, so it is worth decoding).
func (h *Hub) HasFinal(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := h.watchers[key]; w != nil; w = w.next {
		if w.final != nil {
			return true
		}
	}
	return false
}

// WakeAll wakes every watcher (after a lost subscription, anything may
// have changed).
func (h *Hub) WakeAll() {
	h.mu.Lock()
	keys := make([]string, 0, len(h.watchers))
	for k := range h.watchers {
		keys = append(keys, k)
	}
	h.mu.Unlock()
	for _, k := range keys {
		h.Wake(k, nil)
	}
}

// Count is how many watch each project's questions and stream.
type Count struct {
	Project          string
	Question, Stream int
}

// Counts returns the watchers by project (projects with none left out).
func (h *Hub) Counts() []Count {
	h.mu.Lock()
	by := map[string]*Count{}
	for key, first := range h.watchers {
		project, id, _ := strings.Cut(key, "\x1f")
		c := by[project]
		if c == nil {
			c = &Count{Project: project}
			by[project] = c
		}
		n := 0
		for w := first; w != nil; w = w.next {
			n++
		}
		if id == "" {
			c.Stream += n
		} else {
			c.Question += n
		}
	}
	h.mu.Unlock()
	out := make([]Count, 0, len(by))
	for _, c := range by {
		if c.Question+c.Stream > 0 {
			out = append(out, *c)
		}
	}
	return out
}
