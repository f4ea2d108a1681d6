package api

import (
	"container/heap"
	"net/http"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// Reply is what a parked wait other than the long-poll is sent (the
// blocking ask_user calls of /mcp): its owner builds the bytes, the parker
// holds the connection as it holds a long-poll's (no goroutine, no
// net/http buffers) and writes them.
type Reply struct {
	// Final is the rest of the HTTP response once the question is final,
	// the wait's time is up or the server drains: q as read then (it may
	// still be pending), or err reading it. When Head was sent, Final
	// continues after it. The connection is closed after it.
	Final func(q *domain.Question, err error) []byte
	// Head, if set, is written as soon as the wait is parked (a response's
	// head and first events), and Tick(n), n = 1, 2, …, every Every after
	// (keep-alives, progress). A client that does not take a periodic
	// write at once is let go, as one that hung up.
	Head  []byte
	Every time.Duration
	Tick  func(n int) []byte
	// OnPark, if set, is given once the wait is parked a function that ends
	// it without an answer, closing the connection (the caller's own reason
	// to stop: a cancellation, the end of a session); Done, if set, is
	// called once when the wait ends, whichever way: unanswered when the
	// client hung up or stop was called. Both must not block: Done may run
	// on the store's subscriber loop.
	OnPark func(stop func())
	Done   func(unanswered bool)
}

// ParkReply takes over the connection of w to wait on the pending question
// project/id, which the caller may read, for at most timeout, and answers
// it as reply builds. It reports false when it cannot (HTTP/2, the server
// is draining): the caller then waits the ordinary way and w is untouched.
func (a *API) ParkReply(w http.ResponseWriter, r *http.Request, project, id string, timeout time.Duration, reply Reply) bool {
	if a.drainCtx.Err() != nil || reply.Final == nil {
		return false
	}
	pk := a.parker()
	return pk != nil && pk.parkReply(w, r, project, id, timeout, &reply)
}

// send writes b to a parked connection at once, without closing it; false
// when the client does not take it (gone, or not reading).
func (pk *parked) send(b []byte) bool {
	if pk.conn == nil {
		return sendFD(int(pk.fd), b)
	}
	pk.conn.SetWriteDeadline(time.Now().Add(time.Second))
	_, err := pk.conn.Write(b)
	return err == nil
}

// tick makes the periodic writes that are due, sleeping until the next;
// one goroutine and one timer for every parked wait.
func (p *parker) tick() {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		now := time.Now().UnixNano()
		var due []*parked
		p.mu.Lock()
		for len(p.ticks.ws) > 0 && p.ticks.ws[0].at[nextTick] <= now {
			pk := p.ticks.ws[0]
			due = append(due, pk)
			pk.at[nextTick] += int64(pk.reply.Every)
			heap.Fix(&p.ticks, 0)
		}
		next := p.ticks.until(now)
		p.mu.Unlock()
		for _, pk := range due {
			p.tickOne(pk)
		}
		t.Reset(next)
		select {
		case <-p.stop:
			return
		case <-p.sooner:
		case <-t.C:
		}
	}
}

// tickOne makes one periodic write of a wait not yet finished.
func (p *parker) tickOne(pk *parked) {
	pk.wmu.Lock()
	p.mu.Lock()
	done := pk.done
	p.mu.Unlock()
	ok := true
	if !done {
		pk.tickN++
		ok = pk.send(pk.reply.Tick(pk.tickN))
	}
	pk.wmu.Unlock()
	if !ok {
		p.gone(pk)
	}
}
