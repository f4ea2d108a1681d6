package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/askbridge/askbridge/core"
)

// funcWatcher is implemented by stores that wake a callback instead of a
// channel (store.Store does).
type funcWatcher interface {
	WatchFunc(project, id string, f func()) (stop func())
}

// parker holds long-polls that are still waiting without a goroutine or
// net/http's buffers each: the connection is taken over from net/http,
// and answered (then closed) when the question changes, the wait times
// out, or the server drains. Tens of thousands of agents can wait on one
// replica this way.
type parker struct {
	store core.Store
	fw    funcWatcher
	log   *slog.Logger
	work  chan *parked

	mu      sync.Mutex
	waits   map[*parked]struct{}
	closing bool
	stop    chan struct{}
}

type parked struct {
	conn      net.Conn
	project   string
	id        string
	expired   bool
	timer     *time.Timer
	stopWatch func()
	done      bool // guarded by parker.mu
}

// parkWorkers bound how many woken waits are checked at once.
const parkWorkers = 4

func newParker(st core.Store, log *slog.Logger) *parker {
	fw, ok := st.(funcWatcher)
	if !ok {
		return nil
	}
	p := &parker{store: st, fw: fw, log: log, work: make(chan *parked, 4096), waits: map[*parked]struct{}{},
		stop: make(chan struct{})}
	for range parkWorkers {
		go p.loop()
	}
	go p.recheck()
	return p
}

// park takes over the connection of a wait on a pending question. It
// reports false when it cannot (HTTP/2, or the server is draining); the
// caller then waits the ordinary way.
func (p *parker) park(w http.ResponseWriter, r *http.Request, project, id string, timeout time.Duration) bool {
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
	conn.SetDeadline(time.Time{})
	pk := &parked{conn: conn, project: project, id: id}
	p.mu.Lock()
	p.waits[pk] = struct{}{}
	p.mu.Unlock()
	pk.stopWatch = p.fw.WatchFunc(project, id, func() { p.enqueue(pk) })
	pk.timer = time.AfterFunc(timeout, func() {
		p.mu.Lock()
		pk.expired = true
		p.mu.Unlock()
		p.enqueue(pk)
	})
	p.enqueue(pk) // the question may have changed before the watch began
	return true
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
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	q, err := p.store.Get(ctx, pk.project, pk.id)
	if !force && (err != nil || !q.Status.Final()) {
		return // still pending, or the store is away: keep waiting (re-read on the next wake or recheck)
	}
	if !p.finish(pk) {
		return
	}
	status, body := http.StatusOK, []byte(nil)
	if err != nil {
		e, ok := err.(*core.Error)
		if !ok {
			e = &core.Error{Code: core.EInternal, Message: "internal error"}
		}
		status = core.HTTPStatus(e.Code)
		body, _ = json.Marshal(map[string]any{"error": e})
	} else {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.Encode(public(q))
		body = buf.Bytes()
	}
	pk.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(pk.conn, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n",
		status, http.StatusText(status), len(body))
	pk.conn.Write(body)
	pk.conn.Close()
}

// finish releases a wait once; it reports whether this call did.
func (p *parker) finish(pk *parked) bool {
	p.mu.Lock()
	if pk.done {
		p.mu.Unlock()
		return false
	}
	pk.done = true
	delete(p.waits, pk)
	p.mu.Unlock()
	pk.stopWatch()
	pk.timer.Stop()
	return true
}

// recheck re-reads every parked wait now and then: wake-ups travel over
// pub/sub, which can drop messages while a connection is re-established.
func (p *parker) recheck() {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			for _, pk := range p.snapshot() {
				p.enqueue(pk)
			}
		}
	}
}

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

// parkedCount is the number of waits parked now.
func (p *parker) parkedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.waits)
}
