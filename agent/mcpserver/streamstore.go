package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
)

// streamStore keeps what the sessions' streams sent, for a 2025-11-25
// host that resumes a stream it lost (GET with Last-Event-ID). The SDK's
// MemoryEventStore keeps every stream of a session until the session ends
// (its bytes capped, not its streams): ~0.9 KB for a session that only
// initialized and called ask_user, and one stream more for each request,
// so a session whose call waits a day kept hundreds. Here a session keeps
// its last maxStreams streams, its first (initialize's) only until
// another opens (a host sends nothing else before it has initialize's
// result), and a stream whose call is still running (nothing stored after
// its priming event: a parked call, say) is never the one dropped.
// A stream dropped, or events purged to stay under maxBytes, cannot be
// resumed: After says so and the SDK answers the host 400, as it does for
// the MemoryEventStore's purged events.
type streamStore struct {
	mu       sync.Mutex
	sessions map[string]*sessionStreams
	bytes    int // stored
	maxBytes int
}

// sessionStreams are a session's streams, oldest first.
type sessionStreams struct {
	streams []*streamEvents
	opened  int // streams opened in the session, "" aside
}

// streamEvents are a stream's events from index first on; nil data is an
// event without data (the priming event).
type streamEvents struct {
	id    string
	first int
	data  [][]byte
	size  int
}

const (
	maxStreams    = 4
	maxStoreBytes = 10 << 20 // all sessions' bytes, as the MemoryEventStore's
)

var errStreamDropped = errors.New("the stream's events were dropped")

func newStreamStore() *streamStore {
	return &streamStore{sessions: map[string]*sessionStreams{}, maxBytes: maxStoreBytes}
}

// Open records a new stream of a session; the session's standalone stream
// ("") is never stored: askbridge sends nothing on it.
func (s *streamStore) Open(_ context.Context, session, stream string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stream(session, stream)
	return nil
}

// stream is the stream of session, opened if new (nil for ""); s.mu held.
func (s *streamStore) stream(session, stream string) *streamEvents {
	ss := s.sessions[session]
	if ss == nil {
		ss = &sessionStreams{}
		s.sessions[session] = ss
	}
	if stream == "" {
		return nil
	}
	for _, st := range ss.streams {
		if st.id == stream {
			return st
		}
	}
	ss.opened++
	if ss.opened == 2 && len(ss.streams) > 0 && ss.streams[0].answered() {
		s.drop(ss, 0) // initialize's: the host has its result, or it would not go on
	}
	if len(ss.streams) >= maxStreams {
		if i := slices.IndexFunc(ss.streams, (*streamEvents).answered); i >= 0 {
			s.drop(ss, i)
		}
	}
	st := &streamEvents{id: stream}
	ss.streams = append(ss.streams, st)
	return st
}

// answered reports a stream with something stored after its priming event.
func (st *streamEvents) answered() bool {
	return st.first > 0 || len(st.data) > 1 || (len(st.data) == 1 && st.data[0] != nil)
}

// drop forgets stream i of ss (s.mu held).
func (s *streamStore) drop(ss *sessionStreams, i int) {
	s.bytes -= ss.streams[i].size
	ss.streams = slices.Delete(ss.streams, i, i+1)
}

// Append stores an event of a stream, the oldest events of all streams
// purged first to stay under maxBytes.
func (s *streamStore) Append(_ context.Context, session, stream string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stream(session, stream)
	if st == nil {
		return nil
	}
	s.purge(len(data))
	st.data = append(st.data, data)
	st.size += len(data)
	s.bytes += len(data)
	return nil
}

// purge drops the first event of every stream until n more bytes fit
// (s.mu held).
func (s *streamStore) purge(n int) {
	for s.bytes+n > s.maxBytes && s.bytes > 0 {
		for _, ss := range s.sessions {
			for _, st := range ss.streams {
				if len(st.data) > 0 {
					s.bytes -= len(st.data[0])
					st.size -= len(st.data[0])
					st.data[0] = nil
					st.data = st.data[1:]
					st.first++
				}
			}
		}
	}
}

// After yields a stream's events after index; an error when the session
// or stream is unknown or dropped, or events after index were purged.
func (s *streamStore) After(_ context.Context, session, stream string, index int) iter.Seq2[[]byte, error] {
	s.mu.Lock()
	var events [][]byte
	err := func() error {
		ss := s.sessions[session]
		if ss == nil {
			return fmt.Errorf("unknown session %q", session)
		}
		if stream == "" {
			return nil
		}
		i := slices.IndexFunc(ss.streams, func(st *streamEvents) bool { return st.id == stream })
		if i < 0 {
			return fmt.Errorf("stream %q of session %q: %w", stream, session, errStreamDropped)
		}
		st := ss.streams[i]
		start := index + 1 - st.first
		if start < 0 {
			return fmt.Errorf("stream %q of session %q from %d: %w", stream, session, index, errStreamDropped)
		}
		if start < len(st.data) {
			events = slices.Clone(st.data[start:])
		}
		return nil
	}()
	s.mu.Unlock()
	return func(yield func([]byte, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		for _, d := range events {
			if !yield(d, nil) {
				return
			}
		}
	}
}

// SessionClosed forgets a session's streams.
func (s *streamStore) SessionClosed(_ context.Context, session string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss := s.sessions[session]; ss != nil {
		for _, st := range ss.streams {
			s.bytes -= st.size
		}
		delete(s.sessions, session)
	}
	return nil
}
