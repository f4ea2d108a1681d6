package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// withdrawTimeout bounds the withdrawal of a session's questions when it
// ends (the process may be shutting down).
const withdrawTimeout = 5 * time.Second

// session is what the server keeps about one MCP session: the calls it
// runs and the questions it asked that may still be pending.
type session struct {
	// ctx ends when the session ends (stdin closed, signal, HTTP session
	// closed); every call of the session waiting then stops (done). Made
	// for the first call that waits in a goroutine: a session whose calls
	// are parked has none (guarded by mu).
	ctx    context.Context
	cancel context.CancelFunc
	// The run id prefix of the session's calls: prefix, else "mcp-" and
	// run (a session kept for hours, by the hundred thousand, keeps 16
	// bytes rather than a 48-byte string).
	prefix string
	run    uuid.UUID
	key    string // the credential using the session (Streamable HTTP)

	mu    sync.Mutex
	ended bool
	// asked: questions asked in the session and not seen final, with the
	// backend that asked them, to withdraw them when the session ends.
	// Slices, not maps: a session holds one or two of each, and a map's
	// first entry costs ~330 B (a session may wait for hours, by the
	// hundred thousand).
	asked []askedIn
	// parked: the session's parked calls (parksession.go), ended with it.
	parked []*parkedCall
}

type askedIn struct {
	id       string
	withdraw Canceler // nil: the question outlives the session (pinned)
}

// sessionRef names a session: a Streamable HTTP session by its id, any
// other by the SDK's object.
type sessionRef struct {
	id string
	ss *mcp.ServerSession
}

func refOf(ss *mcp.ServerSession) sessionRef {
	if id := sessionID(ss); id != "" {
		return sessionRef{id: id}
	}
	return sessionRef{ss: ss}
}

func (s *Server) sessionFor(ss *mcp.ServerSession, key string) *session {
	ref := refOf(ss)
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.sessions[ref]; ok {
		return st
	}
	st := &session{run: uuid.New(), key: key}
	if s.closed {
		st.ended = true
	}
	s.sessions[ref] = st
	if ref.id != "" && s.httpEnds {
		// A Streamable HTTP session ends when the client deletes it or it
		// idles out: the stream store hears of it (sessionClosed).
		if _, gone := s.closedIDs[ref.id]; gone {
			delete(s.closedIDs, ref.id)
			go s.endSession(ref)
		}
	} else if ss != nil {
		// stdio's Serve ends its session itself, earlier.
		go func() {
			_ = ss.Wait()
			s.endSession(ref)
		}()
	}
	return st
}

// runPrefix is the run id prefix of the session's calls.
func (st *session) runPrefix() string {
	if st.prefix != "" {
		return st.prefix
	}
	return "mcp-" + st.run.String()
}

// stateless reports a call of a 2026-07-28 client over Streamable HTTP
// (the stateless handler serves exactly the requests with that header): it
// has no session, so nothing of it is kept between requests. Over stdio the
// process is the session, whatever the version.
func stateless(req *mcp.CallToolRequest) bool {
	return req.Extra != nil && req.Extra.Header != nil &&
		req.Extra.Header.Get("Mcp-Protocol-Version") >= statelessProtocol
}

// statelessSession is the "session" of a call without one: its runs are
// named after the credential and the agent instead, so the same call again
// (the host cut the POST, or the next request reached another replica)
// lands in the same run and re-attaches to the question. Nothing withdraws
// its questions: they stay open until answered or expired, and a call stops
// waiting when its POST ends or the server closes.
func (s *Server) statelessSession(key, agentID string) *session {
	sum := sha256.Sum256([]byte(key + "\x00" + agentID))
	return &session{ctx: s.life, cancel: func() {}, prefix: "mcp-" + hex.EncodeToString(sum[:8]), key: key}
}

// done is a context that ends when the session ends.
func (st *session) done() context.Context {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ctx == nil {
		st.ctx, st.cancel = context.WithCancel(context.Background())
		if st.ended {
			st.cancel()
		}
	}
	return st.ctx
}

// track records a question asked in the session. It reports false when the
// session has already ended: the caller withdraws the question itself.
func (st *session) track(id string, a askedIn) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ended {
		return false
	}
	a.id = id
	if i := st.askedAt(id); i >= 0 {
		st.asked[i] = a
	} else {
		st.asked = append(st.asked, a)
	}
	return true
}

// askedAt is where question id is in st.asked, or -1 (st.mu held).
func (st *session) askedAt(id string) int {
	return slices.IndexFunc(st.asked, func(a askedIn) bool { return a.id == id })
}

// settled forgets a question that reached a final state.
func (st *session) settled(id string) {
	st.mu.Lock()
	if i := st.askedAt(id); i >= 0 {
		st.asked = slices.Delete(st.asked, i, i+1)
	}
	st.mu.Unlock()
}

// endSession ends a session: its calls stop waiting and the questions of
// runs that die with it are withdrawn (cancel_reason agent), since nobody is
// left to receive their answers. Questions of a run named by the caller
// (BRIDGE_RUN_ID, or the client's run on /mcp) stay pending: the next
// process or session with that run re-attaches to them.
func (s *Server) endSession(ref sessionRef) {
	s.mu.Lock()
	st, ok := s.sessions[ref]
	delete(s.sessions, ref)
	s.mu.Unlock()
	if !ok {
		return
	}
	st.mu.Lock()
	st.ended = true
	asked := st.asked
	st.asked = nil
	parked := st.parked
	st.parked = nil
	cancel := st.cancel
	st.mu.Unlock()
	// Its parked calls end as its waiting calls do: the stream closes
	// without a result.
	for _, pc := range parked {
		pc.end()
	}
	if cancel != nil {
		cancel()
	}
	ctx, stop := context.WithTimeout(context.Background(), withdrawTimeout)
	defer stop()
	var wg sync.WaitGroup
	for _, a := range asked {
		if a.withdraw == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.withdraw(ctx, a.withdraw, a.id)
		}()
	}
	wg.Wait()
}

func sessionID(ss *mcp.ServerSession) string {
	if ss == nil {
		return ""
	}
	return ss.ID()
}

// sessionClosed ends the Streamable HTTP session id, which the SDK has
// closed (deleted by its client, idled out).
func (s *Server) sessionClosed(id string) {
	ref := sessionRef{id: id}
	s.mu.Lock()
	_, ok := s.sessions[ref]
	if !ok {
		// No call of it seen yet (most sessions): should one still come,
		// its session is ended as soon as it is made.
		if s.closedIDs == nil {
			s.closedIDs = map[string]time.Time{}
		}
		now := time.Now()
		if len(s.closedIDs) >= 1024 {
			for k, t := range s.closedIDs {
				if now.Sub(t) > time.Minute {
					delete(s.closedIDs, k)
				}
			}
		}
		s.closedIDs[id] = now
	}
	s.mu.Unlock()
	if ok {
		go s.endSession(ref) // the SDK closing it must not wait for the withdrawals
	}
}

// withdraw cancels a question its session no longer waits for; one already
// final is left alone.
func (s *Server) withdraw(ctx context.Context, b Canceler, id string) {
	_, err := b.Cancel(ctx, id, domain.CancelAgent)
	var e *domain.Error
	switch {
	case err == nil:
		s.log.Info("session ended; question withdrawn", "question", id)
	case errors.As(err, &e) && e.Code != domain.EInternal && e.Code != domain.EUnavailable && e.Code != domain.EUnauthorized:
		// already answered, expired or cancelled: nothing to withdraw
	default:
		s.log.Warn("session ended; withdrawing its question failed", "question", id, "err", err)
	}
}

// Close ends every session (shutdown of askbridge serve), withdrawing their
// questions as endSession does.
func (s *Server) Close() {
	s.endLife()
	s.mu.Lock()
	s.closed = true
	var all []sessionRef
	for ref := range s.sessions {
		all = append(all, ref)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, ref := range all {
		wg.Add(1)
		go func() { defer wg.Done(); s.endSession(ref) }()
	}
	wg.Wait()
}
