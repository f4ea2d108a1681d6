package api

import (
	"io"
	"net"
)

// readHangup is the portable way to notice a departed client: a goroutine
// reading the connection (and discarding anything sent) until it ends.
// It costs a goroutine per parked wait, so Linux uses epoll instead
// (hangup_linux.go).
func readHangup(conn net.Conn, gone func()) (stop func()) {
	stopped := make(chan struct{})
	go func() {
		io.Copy(io.Discard, conn) // returns at EOF, a reset, or when the wait closes conn
		select {
		case <-stopped:
		default:
			gone()
		}
	}()
	return func() {
		select {
		case <-stopped:
		default:
			close(stopped)
		}
	}
}
