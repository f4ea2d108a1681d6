// askbridge patch: a Streamable HTTP session rests while idle
// (StreamableHTTPOptions.RestIdleSessions).

package mcp

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// The first wait before trying again to rest a session that was not quiet
// when its last request ended (a notification is answered 202 before it is
// handled; a call whose POST was cut runs on), doubled each time up to
// restRetryMax.
const (
	restRetry    = 50 * time.Millisecond
	restRetryMax = time.Minute
)

// use makes the transport of session id ready for a request (making a
// resting session anew) and counts the request until unuse. false when it
// wrote an error instead: the session is closed, or it could not be made.
func (h *StreamableHTTPHandler) use(w http.ResponseWriter, req *http.Request, info *sessionInfo, id string) (*StreamableServerTransport, bool) {
	info.timerMu.Lock()
	if info.restUntil != 0 && restClock() >= info.restUntil {
		// It idled out resting; the sweep has not closed it yet.
		info.timerMu.Unlock()
		h.closeIdle(info, id)
		http.Error(w, "session not found", http.StatusNotFound)
		return nil, false
	}
	defer info.timerMu.Unlock()
	if info.gone {
		http.Error(w, "session not found", http.StatusNotFound)
		return nil, false
	}
	if info.restUntil != 0 {
		// Its idle timer again, for what is left of its timeout.
		info.timer = time.AfterFunc(time.Duration(info.restUntil-restClock()), func() { h.closeSession(info, id) })
		info.restUntil = 0
	}
	if info.session == nil {
		server := info.server
		if server == nil {
			server = h.getServer(req)
		}
		transport := &StreamableServerTransport{
			SessionID:    id,
			EventStore:   h.opts.EventStore,
			jsonResponse: h.opts.JSONResponse,
			logger:       h.opts.Logger,
		}
		ss, err := connectStreamable(req.Context(), server, transport, &ServerSessionOptions{
			State:   info.rest,
			onClose: func() { h.forget(id) },
		})
		if err != nil {
			h.opts.Logger.Error(fmt.Sprintf("failed to connect a resting session: %v", err))
			http.Error(w, "failed connection", http.StatusInternalServerError)
			return nil, false
		}
		info.session, info.transport, info.rest = ss, transport, nil
	}
	info.uses++
	return info.transport, true
}

// unuse ends a request's use of its session, which rests if it was the
// last and RestIdleSessions is set.
func (h *StreamableHTTPHandler) unuse(info *sessionInfo) {
	info.timerMu.Lock()
	info.uses--
	assert(info.uses >= 0, "negative use count")
	last := info.uses == 0
	info.timerMu.Unlock()
	if last && h.opts.RestIdleSessions {
		h.tryRest(info)
	}
}

// tryRest rests the session of info if it is quiet: no request uses it,
// its connection has nothing in flight and its transport no stream open or
// held. Otherwise it tries again later.
func (h *StreamableHTTPHandler) tryRest(info *sessionInfo) {
	info.timerMu.Lock()
	ss, transport := info.session, info.transport
	if info.gone || ss == nil || info.uses > 0 {
		info.timerMu.Unlock()
		return
	}
	if !ss.conn.Idle() || !transport.connection.quiet() {
		if !info.trying {
			info.trying = true
			info.retry = min(max(2*info.retry, restRetry), restRetryMax)
			time.AfterFunc(info.retry, func() {
				info.timerMu.Lock()
				info.trying = false
				info.timerMu.Unlock()
				h.tryRest(info)
			})
		}
		info.timerMu.Unlock()
		return
	}
	ss.mu.Lock()
	state := ss.state
	ss.mu.Unlock()
	info.session, info.transport, info.rest, info.retry = nil, nil, &state, 0
	sweep := false
	if info.timer != nil && info.refs == 0 {
		// Its idle timer too (~150 B a session): the sweep keeps time.
		info.timer.Stop()
		info.timer = nil
		info.restUntil = restClock() + int64(info.timeout)
		sweep = true
	}
	// Its objects go, not the session: nobody is told it closed.
	ss.calledOnClose.Store(true)
	transport.connection.rest()
	info.timerMu.Unlock()
	_ = ss.Close()
	if sweep {
		h.sweepResting(info.timeout)
	}
}

// restEpoch starts restClock.
var restEpoch = time.Now()

// restClock is the time on the monotonic clock, in nanoseconds.
func restClock() int64 { return int64(time.Since(restEpoch)) }

// sweepResting makes sure the sweep that closes resting sessions once they
// idle out runs: every eighth of timeout (between 10 ms and 30 s; a resting
// session closes that much after its timeout at most), until no session
// rests with a timeout.
func (h *StreamableHTTPHandler) sweepResting(timeout time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sweeping {
		return
	}
	h.sweeping = true
	every := min(max(timeout/8, 10*time.Millisecond), 30*time.Second)
	go func() {
		type due struct {
			info *sessionInfo
			id   string
		}
		for {
			time.Sleep(every)
			var idle []due
			resting := false
			now := restClock()
			h.mu.Lock()
			for id, info := range h.sessions {
				info.timerMu.Lock()
				if info.restUntil != 0 {
					resting = true
					if now >= info.restUntil {
						idle = append(idle, due{info, id})
					}
				}
				info.timerMu.Unlock()
			}
			if !resting {
				h.sweeping = false
			}
			h.mu.Unlock()
			for _, d := range idle {
				h.closeIdle(d.info, d.id)
			}
			if !resting {
				return
			}
		}
	}()
}

// closeSession ends session id for good (deleted by its client, idled out).
func (h *StreamableHTTPHandler) closeSession(info *sessionInfo, id string) {
	info.timerMu.Lock()
	ss := info.session
	resting := ss == nil && !info.gone
	info.gone, info.rest, info.restUntil = true, nil, 0
	info.timerMu.Unlock()
	if ss != nil {
		_ = ss.Close() // its onClose forgets it
		return
	}
	if resting {
		h.closedResting(id)
	}
}

// closeIdle closes session id if it still rests past its idle timeout (a
// request or KeepAlive may have come since the sweep saw it).
func (h *StreamableHTTPHandler) closeIdle(info *sessionInfo, id string) {
	info.timerMu.Lock()
	if info.gone || info.session != nil || info.restUntil == 0 || restClock() < info.restUntil {
		info.timerMu.Unlock()
		return
	}
	info.gone, info.rest, info.restUntil = true, nil, 0
	info.timerMu.Unlock()
	h.closedResting(id)
}

// closedResting tells the handler and the event store that session id,
// which rested, is closed.
func (h *StreamableHTTPHandler) closedResting(id string) {
	h.forget(id)
	if h.opts.EventStore != nil {
		_ = h.opts.EventStore.SessionClosed(context.Background(), id)
	}
}

// forget drops session id, closed, from the handler.
func (h *StreamableHTTPHandler) forget(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	info, ok := h.sessions[id]
	if !ok {
		return
	}
	info.stopTimer()
	info.timerMu.Lock()
	info.gone = true
	info.timerMu.Unlock()
	delete(h.sessions, id)
	if h.onTransportDeletion != nil {
		h.onTransportDeletion(id)
	}
}

// quiet reports a connection that may rest: not closed, no request
// unanswered, no stream but the standalone one, and that one not held by a
// GET.
func (c *streamableServerConn) quiet() bool {
	c.mu.Lock()
	if c.isDone || len(c.requestStreams) > 0 {
		c.mu.Unlock()
		return false
	}
	var standalone *stream
	for id, s := range c.streams {
		if id != "" {
			c.mu.Unlock()
			return false
		}
		standalone = s
	}
	c.mu.Unlock()
	if standalone == nil {
		return true
	}
	standalone.mu.Lock()
	defer standalone.mu.Unlock()
	return standalone.w == nil
}

// rest marks the connection closed to rest, not ended.
func (c *streamableServerConn) rest() {
	c.mu.Lock()
	c.resting = true
	c.mu.Unlock()
}

// KeepAlive restarts the idle timeout of session id as a request would,
// without connecting a resting session; false when no such session is
// open. For a server whose calls outlive their requests (askbridge parks a
// waiting call's connection: for the SDK the call is answered).
func (h *StreamableHTTPHandler) KeepAlive(id string) bool {
	h.mu.Lock()
	info := h.sessions[id]
	h.mu.Unlock()
	if info == nil {
		return false
	}
	info.timerMu.Lock()
	defer info.timerMu.Unlock()
	if info.gone {
		return false
	}
	switch {
	case info.timer != nil && info.refs == 0:
		info.timer.Reset(info.timeout)
	case info.restUntil != 0:
		info.restUntil = restClock() + int64(info.timeout)
	}
	return true
}
