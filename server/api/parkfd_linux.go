package api

import (
	"errors"
	"net"
	"os"
	"syscall"
	"time"
)

// A parked wait holds its socket as a bare file descriptor, out of Go's
// network poller: the net.Conn behind it (its poll descriptor, kept by
// the runtime off the heap, the addresses, the listener's wrapper) costs
// more than the rest of the wait, and a parked connection is never read;
// it is watched for hang-ups through epoll (hangup_linux.go) and written
// once (writeFD). BenchmarkParkedWaiter and the bench's (e) measure it.

// countKeeper is a connection counted against a limit until it is closed
// (the app's per-address listener). KeepCount hands its place in the
// count over: closing the connection no longer gives it back, calling
// release (once) does.
type countKeeper interface {
	KeepCount() (release func())
}

// detach takes conn's socket out of Go's poller: it returns a descriptor
// of its own for the same socket, and closes conn. ok is false (and conn
// is untouched) when conn is not a plain socket or hang-ups cannot be
// watched without a goroutine.
func detach(conn net.Conn) (fd int, release func(), ok bool) {
	sc, isSock := conn.(syscall.Conn)
	if !isSock || sharedHangups() == nil {
		return -1, nil, false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1, nil, false
	}
	fd = -1
	var derr error
	if err := raw.Control(func(s uintptr) {
		var r uintptr
		var e syscall.Errno
		r, _, e = syscall.Syscall(syscall.SYS_FCNTL, s, syscall.F_DUPFD_CLOEXEC, 0)
		if e != 0 {
			derr = e
			return
		}
		fd = int(r)
	}); err != nil || derr != nil {
		return -1, nil, false
	}
	if kc, ok := conn.(countKeeper); ok {
		release = kc.KeepCount()
	}
	conn.Close() // Go's descriptor; the socket stays open through fd
	return fd, release, true
}

// writeFD writes out to a detached socket and closes it. A response that
// does not fit the socket's send buffer at once (the buffer starts at
// 16 KiB, and a parked connection has sent nothing) is finished through
// Go's poller, within ttl.
func writeFD(fd int, out []byte, ttl time.Duration) {
	for len(out) > 0 {
		n, err := syscall.Write(fd, out)
		if n > 0 {
			out = out[n:]
			continue
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if errors.Is(err, syscall.EAGAIN) {
			break
		}
		syscall.Close(fd) // the client is gone
		return
	}
	if len(out) == 0 {
		syscall.Close(fd)
		return
	}
	f := os.NewFile(uintptr(fd), "parked")
	c, err := net.FileConn(f) // a descriptor of its own, in the poller
	f.Close()
	if err != nil {
		return
	}
	c.SetWriteDeadline(time.Now().Add(ttl))
	c.Write(out)
	c.Close()
}

// sendFD writes out to a detached socket at once, leaving it open; false
// when the socket does not take all of it now.
func sendFD(fd int, out []byte) bool {
	for len(out) > 0 {
		n, err := syscall.Write(fd, out)
		if n > 0 {
			out = out[n:]
			continue
		}
		if !errors.Is(err, syscall.EINTR) {
			return false
		}
	}
	return true
}
