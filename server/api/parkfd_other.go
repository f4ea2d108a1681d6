//go:build !linux

package api

import (
	"net"
	"time"
)

// detach keeps conn in Go's poller where hang-ups are watched by reading
// it (see parkfd_linux.go).
func detach(net.Conn) (fd int, release func(), ok bool) { return -1, nil, false }

func writeFD(int, []byte, time.Duration) {}

func watchHangupFD(int, func()) (tok int32, ok bool) { return 0, false }

func unwatchHangupFD(int32, int) {}

func closeFD(int) {}

func sendFD(int, []byte) bool { return false }
