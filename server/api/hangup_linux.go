package api

import (
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"syscall"
)

// hangups notices parked connections whose client has gone away (a FIN
// or a reset) with one epoll instance and one goroutine for all of them,
// so a departed agent's socket and parked wait are released at once, not
// when the wait times out. A parked connection is never read, so without
// this the kernel would keep it in CLOSE_WAIT.
type hangups struct {
	ep   int
	mu   sync.Mutex
	next int32
	subs map[int32]func()
}

var (
	hangupsOnce sync.Once
	hangupsInst *hangups
)

// sharedHangups is the process's watcher (nil if epoll is unavailable:
// watchHangup then falls back to a read per connection).
func sharedHangups() *hangups {
	hangupsOnce.Do(func() {
		ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			return
		}
		hangupsInst = &hangups{ep: ep, subs: map[int32]func(){}}
		go hangupsInst.loop()
	})
	return hangupsInst
}

// watchHangup calls gone (once, from another goroutine) when the peer of
// conn closes or resets it. stop ends the watch; call it before closing
// conn.
func watchHangup(conn net.Conn, gone func()) (stop func()) {
	h := sharedHangups()
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn()
	}
	sc, ok := conn.(syscall.Conn)
	if h == nil || !ok {
		return readHangup(conn, gone)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return readHangup(conn, gone)
	}
	var tok int32
	var werr error
	err = raw.Control(func(fd uintptr) { tok, werr = h.watch(int(fd), gone) })
	if err != nil || werr != nil {
		return readHangup(conn, gone)
	}
	return func() {
		h.forget(tok)
		raw.Control(func(fd uintptr) { syscall.EpollCtl(h.ep, syscall.EPOLL_CTL_DEL, int(fd), nil) })
	}
}

// watchHangupFD is watchHangup for a socket out of Go's poller (detach):
// ok is false if it cannot be watched. unwatchHangupFD(tok, fd) ends the
// watch; call it before closing fd.
func watchHangupFD(fd int, gone func()) (tok int32, ok bool) {
	h := sharedHangups()
	if h == nil {
		return 0, false
	}
	tok, err := h.watch(fd, gone)
	return tok, err == nil
}

func unwatchHangupFD(tok int32, fd int) {
	h := sharedHangups()
	h.forget(tok)
	syscall.EpollCtl(h.ep, syscall.EPOLL_CTL_DEL, fd, nil)
}

// closeFD closes a detached socket without writing to it.
func closeFD(fd int) { syscall.Close(fd) }

// watch registers fd: gone is called once when its peer goes away.
func (h *hangups) watch(fd int, gone func()) (int32, error) {
	h.mu.Lock()
	h.next++
	if h.next <= 0 { // wrapped: tokens stay positive (0 is "none")
		h.next = 1
	}
	tok := h.next
	h.subs[tok] = gone
	h.mu.Unlock()
	// Only hang-ups wake the watcher, not data (a pipelined request stays
	// unread, as it would under net/http while a handler runs).
	ev := syscall.EpollEvent{Events: syscall.EPOLLRDHUP | syscall.EPOLLHUP | syscall.EPOLLERR | syscall.EPOLLONESHOT, Fd: tok}
	if err := syscall.EpollCtl(h.ep, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		h.forget(tok)
		return 0, err
	}
	return tok, nil
}

func (h *hangups) forget(tok int32) {
	h.mu.Lock()
	delete(h.subs, tok)
	h.mu.Unlock()
}

func (h *hangups) loop() {
	events := make([]syscall.EpollEvent, 256)
	for {
		n, err := syscall.EpollWait(h.ep, events, -1)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return
		}
		for _, ev := range events[:n] {
			h.mu.Lock()
			f := h.subs[ev.Fd]
			delete(h.subs, ev.Fd)
			h.mu.Unlock()
			if f != nil {
				f()
			}
		}
	}
}
