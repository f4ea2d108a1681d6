//go:build !linux

package api

import "net"

// watchHangup calls gone when the peer of conn goes away; see
// hangup_linux.go for the goroutine-free version.
func watchHangup(conn net.Conn, gone func()) (stop func()) { return readHangup(conn, gone) }
