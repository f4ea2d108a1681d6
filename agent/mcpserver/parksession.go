package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What parking a call of a 2025-11-25 (or older) session takes besides a
// 2026-07-28 call's (park.go): the SDK sees the call answered once parked,
// so the call's cancellation, the end of its session and the session's
// idle timeout are handled here.

// parkedMarker marks the placeholder result a parked call's handler returns
// to the SDK: the SDK's response with it is never written (holdWriter) nor
// kept for a resumed stream (parkedStore). Random, so no answer carries it.
var parkedMarker = "askbridge-parked-" + rand.Text()

// parkedResult is the placeholder result of a parked call.
func parkedResult() *mcp.CallToolResult {
	return &mcp.CallToolResult{Meta: mcp.Meta{parkedMarker: true}}
}

// parkedStore is the session streams' event store without the placeholder
// responses of parked calls: a stream resumed with Last-Event-ID never
// replays one as the call's result. A parked call's real result is kept
// in its place (keepFinal).
type parkedStore struct {
	mcp.EventStore
	closed func(sessionID string) // told of every session the SDK closes
	// mu orders keepFinal with SessionClosed: a result kept for a closed
	// session would bring its streams back and never be dropped.
	mu sync.Mutex
}

func (p *parkedStore) SessionClosed(ctx context.Context, sessionID string) error {
	p.closed(sessionID)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.EventStore.SessionClosed(ctx, sessionID)
}

func (p *parkedStore) Append(ctx context.Context, sessionID, streamID string, data []byte) error {
	if bytes.Contains(data, []byte(parkedMarker)) {
		return nil
	}
	return p.EventStore.Append(ctx, sessionID, streamID, data)
}

// keepFinal keeps the result of a parked call for its stream, as the SDK
// keeps a call's result: the connection it was written to may be gone
// without the bridge seeing it (a middlebox lost it; the host's FIN is not
// read yet), and the host resuming the stream with Last-Event-ID must
// still get it. Not for a stream the store no longer has (its session
// closed).
func (p *parkedStore) keepFinal(sessionID, streamID string, data []byte) {
	ctx := context.Background()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, err := range p.EventStore.After(ctx, sessionID, streamID, 1<<30) {
		if err != nil {
			return
		}
	}
	_ = p.EventStore.Append(ctx, sessionID, streamID, data)
}

// parkedCall is a parked call of a session, which its session's end or
// its notifications/cancelled ends without an answer. When its connection
// drops, it waits (without a connection, watching nothing) for the host to
// resume its stream with Last-Event-ID, which is then parked in its place.
//
// It is all a parked call of a session keeps (there may be a hundred
// thousand): its parker is given its methods, not closures of its own.
type parkedCall struct {
	id      json.RawMessage // the call's JSON-RPC id
	session string          // Mcp-Session-Id
	user    string          // the credential's user (TokenInfo.UserID) if authed
	authed  bool
	st      *session
	srv     *Server
	// to park the stream again when resumed ("" stream: it cannot be),
	// its response event numbered event
	stream           string
	event            int
	project, qid     string
	expires          int64 // the question's expiry, Unix ns
	every            time.Duration
	tick             func(n int) []byte
	answered, orphan bool // (guarded by mu)

	mu      sync.Mutex
	stop    func() // from the parker once parked
	done    bool
	stopped bool
}

// final is the rest of the response of a call parked with this id.
func (pc *parkedCall) final(fq *domain.Question, err error) []byte {
	msg := rpcResult(pc.id, finalCallResult(pc.qid, fq, err), nil)
	pc.mu.Lock()
	first := !pc.answered
	pc.answered = true
	pc.mu.Unlock()
	if err == nil && fq.Status.Final() {
		pc.st.settled(pc.qid)
	}
	eventID := ""
	if pc.stream != "" {
		eventID = pc.stream + "_" + strconv.Itoa(pc.event)
		if events := pc.srv.streamEvents(); first && events != nil {
			events.keepFinal(pc.session, pc.stream, msg)
		}
	}
	return sseEventID(nil, eventID, msg)
}

// parkedCall is what pc's parker is given: its head aside.
func (pc *parkedCall) parkedCall() ParkedCall {
	return ParkedCall{Final: pc.final, Every: pc.every, Tick: pc.tick, OnPark: pc.parked, Done: pc.ended}
}

// rpcIDOf is a JSON-RPC id in one spelling, so a notifications/cancelled
// names the call whatever the JSON's spaces. A session's parked calls are
// found through their session (session.parked): no index of its own.
func rpcIDOf(id json.RawMessage) string {
	var v any
	if json.Unmarshal(id, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			id = b
		}
	}
	return string(id)
}

// parked records pc once the parker holds it; a session that ended
// meanwhile ends it at once.
func (pc *parkedCall) parked(stop func()) {
	pc.mu.Lock()
	if pc.done || pc.stopped {
		pc.mu.Unlock()
		stop()
		return
	}
	pc.stop = stop
	alive := pc.st.addParked(pc)
	pc.mu.Unlock()
	if !alive {
		stop()
	}
}

// ended forgets pc once its wait is over, unless only its connection
// dropped: then its stream may be resumed.
func (pc *parkedCall) ended(unanswered bool) {
	pc.mu.Lock()
	pc.stop = nil
	if unanswered && !pc.answered && !pc.stopped && !pc.done && pc.stream != "" {
		pc.orphan = true
		pc.srv.orphans.Store(pc.streamKey(), pc)
		pc.mu.Unlock()
		return
	}
	pc.forget()
}

// forget drops pc for good (under pc.mu, which it releases).
func (pc *parkedCall) forget() {
	pc.done, pc.orphan = true, false
	if pc.stream != "" {
		pc.srv.orphans.CompareAndDelete(pc.streamKey(), pc)
	}
	pc.mu.Unlock()
	pc.st.dropParked(pc)
}

func (pc *parkedCall) streamKey() string { return pc.session + "\x00" + pc.stream }

// end ends pc's wait without an answer, closing its connection.
func (pc *parkedCall) end() {
	pc.mu.Lock()
	pc.stopped = true
	stop := pc.stop
	if pc.orphan || (stop == nil && !pc.done) {
		pc.forget()
		return
	}
	pc.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// resumeParked parks a session's GET resuming the stream of a parked call
// whose connection dropped (Last-Event-ID); false when it is no such
// stream, or another credential's.
func (s *Server) resumeParked(w http.ResponseWriter, r *http.Request, session string) bool {
	stream, _, ok := strings.Cut(r.Header.Get("Last-Event-ID"), "_")
	if !ok || s.parker == nil || r.ProtoMajor != 1 {
		return false
	}
	v, ok := s.orphans.Load(session + "\x00" + stream)
	if !ok {
		return false
	}
	pc := v.(*parkedCall)
	ti := auth.TokenInfoFromContext(r.Context())
	if pc.authed != (ti != nil) || (ti != nil && ti.UserID != pc.user) {
		return false
	}
	pc.mu.Lock()
	if !pc.orphan || pc.done {
		pc.mu.Unlock()
		return false
	}
	pc.orphan = false
	s.orphans.CompareAndDelete(pc.streamKey(), pc)
	pc.mu.Unlock()
	call := pc.parkedCall()
	call.Head = []byte("HTTP/1.1 200 OK\r\nCache-Control: no-cache, no-transform\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
	timeout := max(time.Until(time.Unix(0, pc.expires))+expiryGrace, expiryGrace)
	if s.parker.ParkCall(w, r, pc.project, pc.qid, timeout, call) {
		s.log.Debug("resumed stream of a parked call parked again", "question", pc.qid)
		return true
	}
	pc.ended(true) // waits for the next resume
	return false
}

// stopParked ends the parked call id of session (its
// notifications/cancelled).
func (s *Server) stopParked(session string, id json.RawMessage) {
	if len(id) == 0 {
		return
	}
	s.mu.Lock()
	st := s.sessions[sessionRef{id: session}]
	s.mu.Unlock()
	if st == nil {
		return
	}
	rid := rpcIDOf(id)
	st.mu.Lock()
	i := slices.IndexFunc(st.parked, func(pc *parkedCall) bool { return rpcIDOf(pc.id) == rid })
	var pc *parkedCall
	if i >= 0 {
		pc = st.parked[i]
	}
	st.mu.Unlock()
	if pc != nil {
		pc.end()
	}
}

// addParked records a parked call of the session; false once it ended.
func (st *session) addParked(pc *parkedCall) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ended {
		return false
	}
	st.parked = append(st.parked, pc)
	return true
}

func (st *session) dropParked(pc *parkedCall) {
	st.mu.Lock()
	if i := slices.Index(st.parked, pc); i >= 0 {
		st.parked = slices.Delete(st.parked, i, i+1)
	}
	st.mu.Unlock()
}

// primeID is the stream of the priming event the SDK opened a session
// call's stream with (w), and the index its response event would have had
// (its id: stream_next); "" when the stream has none (protocol 2025-06-18:
// it cannot be resumed).
func primeID(w []byte) (stream string, next int) {
	_, rest, ok := bytes.Cut(w, primeEvent)
	if !ok {
		return "", 0
	}
	id, _, ok := bytes.Cut(rest, []byte("\n"))
	if !ok {
		return "", 0
	}
	stream, idx, ok := strings.Cut(string(id), "_")
	n, err := strconv.Atoi(idx)
	if !ok || err != nil {
		return "", 0
	}
	return stream, n + 1
}

// keepSessions keeps the sessions with parked calls from idling out: the
// SDK counts a session idle once none of its POSTs is in progress, and for
// the SDK a parked call's POST is over. Every every, the idle timeout of
// each such session restarts, as a request from its host would restart it
// (without connecting the session anew if it rests).
func (s *Server) keepSessions(stateful *mcp.StreamableHTTPHandler, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.life.Done():
			return
		case <-t.C:
		}
		// The sessions with parked calls, and those calls (s.mu before
		// st.mu, as nowhere the other way round).
		type withParked struct {
			id     string
			parked []*parkedCall
		}
		var due []withParked
		s.mu.Lock()
		for ref, st := range s.sessions {
			if ref.id == "" {
				continue
			}
			st.mu.Lock()
			if len(st.parked) > 0 {
				due = append(due, withParked{ref.id, slices.Clone(st.parked)})
			}
			st.mu.Unlock()
		}
		s.mu.Unlock()
		for _, d := range due {
			kept := false
			for _, pc := range d.parked {
				pc.mu.Lock()
				if pc.orphan && time.Now().After(time.Unix(0, pc.expires).Add(expiryGrace)) {
					// Its stream was never resumed: as a call still waiting in
					// the SDK would, it kept the session until its deadline.
					pc.forget()
					continue
				}
				pc.mu.Unlock()
				kept = true
			}
			if kept && !stateful.KeepAlive(d.id) {
				s.log.Debug("keeping a session with a parked call alive failed: the session is closed")
			}
		}
	}
}

// streamEvents is the sessions' stream store (nil before HTTPHandler).
func (s *Server) streamEvents() *parkedStore {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.events
}
