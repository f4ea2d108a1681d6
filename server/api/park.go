package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/httperr"
	"github.com/askbridge/askbridge/internal/tracing"
)

// parkStore is what the parker needs of the store: the question, and
// wake-ups that carry its final record, so a woken wait is answered
// without reading the question back (one Redis round trip fewer between
// an answer and the waiting agent).
type parkStore interface {
	Get(ctx context.Context, project, id string) (*domain.Question, error)
	WatchFinal(project, id string, f func(q *domain.Question)) (stop func())
}

// pendingIndex is a store that can tell a pending question from memory,
// without reading its record: the embedded store, whose records live in
// its data file. A recheck of a wait whose question it still holds as
// pending then reads nothing, so tens of thousands of parked waits do not
// map the data file's pages back into the process every sweep.
type pendingIndex interface {
	Pending(project, id string) bool
}

// pendingStatus is a store that reads whether a question is still pending
// without reading its record: Redis reads the status field of its hash.
// A wait is checked when it parks and by every sweep (100,000 waits every
// recheckEvery); a pending question, the common case, then costs one short
// reply instead of the record and the garbage of decoding it.
type pendingStatus interface {
	StillPending(ctx context.Context, project, id string) (bool, error)
}

// pendingStatuses is a pendingStatus that reads many questions' statuses
// in one round trip: the sweep reads its waits sweepStep at a time.
type pendingStatuses interface {
	StillPendingEach(ctx context.Context, projects, ids []string) ([]bool, error)
}

// parker holds long-polls that are still waiting without a goroutine or
// net/http's buffers each: the connection is taken over from net/http,
// and answered (then closed) when the question changes, the wait times
// out, or the server drains; it is closed at once when the client goes
// away (watchHangup). Tens of thousands of agents can wait on one replica
// this way.
type parker struct {
	store parkStore
	log   *slog.Logger
	work  chan *parked

	mu      sync.Mutex
	waits   map[*parked]struct{}
	closing bool
	stop    chan struct{}
	every   time.Duration // how often recheck sweeps every parked wait
	due     timeHeap      // the deadlines (parkdue.go)
	nearer  chan struct{} // a deadline nearer than the expirer sleeps to
	ticks   timeHeap      // the next periodic writes (parkdue.go)
	sooner  chan struct{} // a periodic write sooner than the ticker sleeps to
	settle  *settler      // collects after a burst of parks (parksettle.go)
}

type parked struct {
	// The client's connection, or nil once its socket is out of Go's
	// poller (parkfd_linux.go): then fd is the socket, hangup its hang-up
	// watch (guarded by parker.mu) and release gives its place in the
	// per-address count back (nil if none).
	conn    net.Conn
	fd      int32
	hangup  int32
	release func()
	// reply builds what the wait is sent (nil: the long-poll's response);
	// wmu orders its periodic writes against the last write and the close.
	reply   *Reply
	wmu     sync.Mutex
	project string
	id      string
	expired bool
	final   *domain.Question // the final record a wake-up carried (guarded by parker.mu)
	at      [2]int64         // deadline, next periodic write: Unix ns, by clock (guarded by parker.mu)
	slot    [2]int           // in parker.due, parker.ticks, or -1 (guarded by parker.mu)
	tickN   int              // periodic writes so far (guarded by wmu)
	// guarded by parker.mu: set once each by park, run once by finish.
	stopWatch  func()
	stopHangup func()
	done       bool
}

// parkWorkers bound how many woken waits are checked at once.
const parkWorkers = 4

func newParker(st parkStore, log *slog.Logger) *parker {
	return startParker(st, log, recheckEvery)
}

func startParker(st parkStore, log *slog.Logger, every time.Duration) *parker {
	p := &parker{store: st, log: log, work: make(chan *parked, 4096), waits: map[*parked]struct{}{},
		stop: make(chan struct{}), every: every, due: timeHeap{c: deadline}, ticks: timeHeap{c: nextTick}, nearer: make(chan struct{}, 1), sooner: make(chan struct{}, 1),
		settle: newSettler()}
	for range parkWorkers {
		go p.loop()
	}
	go p.recheck()
	go p.expire()
	go p.tick()
	go p.settle.run(p.stop)
	return p
}

// recheckEvery is how often every parked wait is re-read in case a
// wake-up was lost.
const recheckEvery = 10 * time.Second

// park takes over the connection of a wait on a pending question. It
// reports false when it cannot (HTTP/2, or the server is draining); the
// caller then waits the ordinary way.
func (p *parker) park(w http.ResponseWriter, r *http.Request, project, id string, timeout time.Duration) bool {
	return p.parkReply(w, r, project, id, timeout, nil)
}

// parkReply parks a wait whose response reply builds (nil: the
// long-poll's).
func (p *parker) parkReply(w http.ResponseWriter, r *http.Request, project, id string, timeout time.Duration, reply *Reply) bool {
	if r.ProtoMajor != 1 {
		return false
	}
	p.mu.Lock()
	closing := p.closing
	p.mu.Unlock()
	if closing {
		return false
	}
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return false
	}
	rw.Flush()
	// Copies: the strings the caller passed may share the memory of the
	// request they came from, which would stay alive for the whole wait.
	pk := &parked{project: strings.Clone(project), id: strings.Clone(id), slot: noSlot, reply: reply}
	if fd, release, ok := detach(conn); ok {
		pk.fd, pk.release = int32(fd), release
	} else {
		conn.SetDeadline(time.Time{})
		pk.conn = conn
	}
	if reply != nil && reply.Head != nil {
		head := reply.Head
		reply.Head = nil // not kept for the whole wait
		if !pk.send(head) {
			p.gone(pk) // the client is gone already
			return true
		}
	}
	p.mu.Lock()
	p.waits[pk] = struct{}{}
	closing = p.closing
	p.mu.Unlock()
	p.settle.parked()
	if closing {
		// drain began after the check above and may have missed this wait:
		// answer it now with the record as it is, as drain does.
		p.check(pk)
		return true
	}
	// Each release is handed over under the lock: a wake-up, the timer or
	// a hang-up may finish the wait before park has set up the others.
	p.adopt(pk, func(pk *parked, f func()) { pk.stopWatch = f }, p.watch(pk))
	p.schedule(pk, timeout)
	if reply != nil && reply.Every > 0 && reply.Tick != nil {
		p.scheduleTick(pk, reply.Every)
	}
	if pk.conn != nil {
		p.adopt(pk, func(pk *parked, f func()) { pk.stopHangup = f }, watchHangup(conn, func() { p.gone(pk) }))
	} else {
		// Under the lock: once the wait is finished its descriptor is
		// closed, and the number may already be another connection's.
		p.mu.Lock()
		if !pk.done {
			pk.hangup, _ = watchHangupFD(int(pk.fd), func() { p.gone(pk) })
		}
		p.mu.Unlock()
	}
	p.enqueue(pk) // the question may have changed before the watch began
	if reply != nil && reply.OnPark != nil {
		reply.OnPark(func() { p.gone(pk) })
	}
	return true
}

// watch subscribes pk to its question's wake-ups, keeping the final
// record when a wake-up carries it.
func (p *parker) watch(pk *parked) (stop func()) {
	return p.store.WatchFinal(pk.project, pk.id, func(q *domain.Question) {
		p.mu.Lock()
		had := pk.final != nil
		if q != nil && !had {
			pk.final = q
		}
		p.mu.Unlock()
		switch {
		case had: // the plain wake-up after the record adds nothing
		case q != nil:
			// Answered here, on the subscriber loop, when the answer is
			// small: no hand-over to a worker between the wake-up and the
			// write (each hand-over can wait for a thread on a busy
			// machine). A small write cannot block: it fits the empty send
			// buffer of a connection that has sent nothing since its
			// request. A larger one goes to the workers.
			if out := pk.respond(q, nil); len(out) <= inlineMax {
				if p.finish(pk) {
					p.write(pk, out, inlineWriteTTL)
				}
				return
			}
			p.enqueue(pk)
		default:
			p.enqueue(pk)
		}
	})
}

// inlineMax bounds the answers written on the subscriber loop, well below
// the 16 KiB a Linux TCP connection's send buffer starts with
// (net.ipv4.tcp_wmem's default).
const inlineMax = 8 << 10

// inlineWriteTTL bounds a write on the subscriber loop, should the kernel
// ever refuse a small write: every other wake-up of the replica waits
// behind it.
const inlineWriteTTL = 100 * time.Millisecond

// adopt gives pk a release function, or runs it at once if the wait is
// already finished.
func (p *parker) adopt(pk *parked, set func(*parked, func()), release func()) {
	p.mu.Lock()
	if pk.done {
		p.mu.Unlock()
		release()
		return
	}
	set(pk, release)
	p.mu.Unlock()
}

// gone releases a wait whose client has closed its connection: there is
// no one to answer.
func (p *parker) gone(pk *parked) {
	if p.finishHow(pk, true) {
		pk.close()
	}
}

// close closes a finished wait's connection without answering it.
func (pk *parked) close() {
	pk.wmu.Lock()
	defer pk.wmu.Unlock()
	if pk.conn != nil {
		pk.conn.Close()
		return
	}
	closeFD(int(pk.fd))
	if pk.release != nil {
		pk.release()
	}
}

// enqueue hands a wait to the workers without blocking the caller (the
// store's subscriber loop, a timer).
func (p *parker) enqueue(pk *parked) {
	select {
	case p.work <- pk:
	default:
		go func() { p.work <- pk }()
	}
}

func (p *parker) loop() {
	for {
		select {
		case pk := <-p.work:
			p.check(pk)
		case <-p.stop:
			for {
				select {
				case pk := <-p.work:
					p.check(pk)
				default:
					return
				}
			}
		}
	}
}

// check answers a wait whose question is final, whose time is up, or when
// the server drains; otherwise the wait stays parked.
func (p *parker) check(pk *parked) {
	p.mu.Lock()
	if pk.done {
		p.mu.Unlock()
		return
	}
	force := pk.expired || p.closing
	q := pk.final
	p.mu.Unlock()
	var err error
	if q == nil && !force {
		if ix, ok := p.store.(pendingIndex); ok && ix.Pending(pk.project, pk.id) {
			return // still pending: the wake-up or the deadline will come
		}
	}
	if q == nil {
		// A context (and its timer) only when the store is read.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if ps, ok := p.store.(pendingStatus); ok && !force {
			if pending, err := ps.StillPending(ctx, pk.project, pk.id); pending || err != nil {
				return // still pending, or the store is away: as below
			}
		}
		q, err = p.store.Get(ctx, pk.project, pk.id)
	}
	if !force && (err != nil || !q.Status.Final()) {
		return // still pending, or the store is away: keep waiting (re-read on the next wake or recheck)
	}
	if !p.finish(pk) {
		return
	}
	p.write(pk, pk.respond(q, err), 10*time.Second)
}

// respond is what a finished wait is sent.
func (pk *parked) respond(q *domain.Question, err error) []byte {
	if pk.reply != nil {
		return pk.reply.Final(q, err)
	}
	return response(q, err)
}

// response is the whole HTTP response of a finished wait: the record, or
// the error reading it.
func response(q *domain.Question, err error) []byte {
	status, body := http.StatusOK, []byte(nil)
	if err != nil {
		status, body = httperr.Response(httperr.Of(err))
	} else {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.Encode(public(q))
		body = buf.Bytes()
	}
	// Head and body go out in one write: two writes are two TCP segments
	// (no Nagle), and a client that has read the head waits to be woken
	// again for the body.
	out := make([]byte, 0, len(body)+192)
	out = fmt.Appendf(out, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n",
		status, http.StatusText(status), len(body))
	if err == nil && tracing.Valid(q.TraceParent) { // as traceHeader
		out = fmt.Appendf(out, "Traceparent: %s\r\n", q.TraceParent)
	}
	out = append(out, "\r\n"...)
	return append(out, body...)
}

// write sends a finished wait its response and closes the connection.
func (p *parker) write(pk *parked, out []byte, ttl time.Duration) {
	pk.wmu.Lock()
	defer pk.wmu.Unlock()
	if pk.conn == nil {
		writeFD(int(pk.fd), out, ttl)
		if pk.release != nil {
			pk.release()
		}
		return
	}
	pk.conn.SetWriteDeadline(time.Now().Add(ttl))
	pk.conn.Write(out)
	pk.conn.Close()
}

// finish releases a wait once; it reports whether this call did.
func (p *parker) finish(pk *parked) bool { return p.finishHow(pk, false) }

// finishHow is finish, told whether the wait ends unanswered (its client
// hung up, or it was stopped).
func (p *parker) finishHow(pk *parked, unanswered bool) bool {
	p.mu.Lock()
	if pk.done {
		p.mu.Unlock()
		return false
	}
	pk.done = true
	delete(p.waits, pk)
	p.unschedule(pk)
	p.settle.ended()
	stops := []func(){pk.stopWatch, pk.stopHangup}
	hangup := pk.hangup
	pk.hangup = 0
	p.mu.Unlock()
	for _, f := range stops {
		if f != nil {
			f()
		}
	}
	if hangup != 0 {
		unwatchHangupFD(hangup, int(pk.fd))
	}
	if pk.reply != nil && pk.reply.Done != nil {
		pk.reply.Done(unanswered)
	}
	return true
}

// recheck re-reads every parked wait now and then: wake-ups travel over
// pub/sub, which can drop messages while a connection is re-established.
// The sweep checks the waits itself, one at a time, instead of handing
// them to the workers: queued behind thousands of re-reads, the wake-ups
// of questions just answered would wait for the whole sweep (tens of
// milliseconds with a few thousand waits, far longer if the store is slow).
// It is paced over half the period: read in one burst, 17,000 waits took a
// core for about a second and left their garbage at once, and wake-ups
// answered meanwhile waited for it.
func (p *parker) recheck() {
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			waits := p.snapshot()
			began := time.Now()
			for i := 0; i < len(waits); i += sweepStep {
				if i > 0 {
					// Where the sweep should be by now: i of len(waits)
					// over half the period.
					due := time.Duration(int64(p.every/2) * int64(i) / int64(len(waits)))
					if ahead := due - time.Since(began); ahead > 0 {
						select {
						case <-p.stop:
							return
						case <-time.After(ahead):
						}
					}
				}
				select {
				case <-p.stop:
					return
				default:
				}
				p.checkAll(waits[i:min(i+sweepStep, len(waits))])
			}
		}
	}
}

// checkAll checks a step of the sweep's waits: on a store that reads many
// statuses in one round trip, only the waits whose question is no longer
// pending are checked one by one.
func (p *parker) checkAll(waits []*parked) {
	ps, ok := p.store.(pendingStatuses)
	if !ok {
		for _, pk := range waits {
			p.check(pk)
		}
		return
	}
	projects, ids := make([]string, len(waits)), make([]string, len(waits))
	for i, pk := range waits {
		projects[i], ids[i] = pk.project, pk.id
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pending, err := ps.StillPendingEach(ctx, projects, ids)
	if err != nil {
		return // the store is away: the next sweep, or a wake-up
	}
	for i, pk := range waits {
		if !pending[i] {
			p.check(pk)
		}
	}
}

// sweepStep is how many waits the sweep reads between its pauses.
const sweepStep = 32

func (p *parker) snapshot() []*parked {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*parked, 0, len(p.waits))
	for pk := range p.waits {
		out = append(out, pk)
	}
	return out
}

// drain answers every parked wait with the current record at once, then
// stops the workers.
func (p *parker) drain() {
	p.mu.Lock()
	p.closing = true
	p.mu.Unlock()
	for _, pk := range p.snapshot() {
		p.check(pk)
	}
	close(p.stop)
}
