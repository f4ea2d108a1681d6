package api

import (
	"bytes"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDetachedSocketWritesWhatItsSendBufferCannotHold: a detached
// socket whose send buffer is full (a client reading slowly) still gets
// the whole response, through Go's poller, and is closed after it.
func TestDetachedSocketWritesWhatItsSendBufferCannotHold(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer client.Close()
	server, err := ln.Accept()
	require.NoError(t, err)
	fd, release, ok := detach(server)
	require.True(t, ok)
	assert.Nil(t, release, "a plain connection has no count to hand over")
	require.NoError(t, syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_SNDBUF, 4<<10))

	out := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	done := make(chan struct{})
	go func() { writeFD(fd, out, 10*time.Second); close(done) }()
	time.Sleep(200 * time.Millisecond) // the send buffer fills: the write waits for the reader
	client.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(client) // to EOF: writeFD closes the socket
	require.NoError(t, err)
	assert.Equal(t, len(out), len(got))
	assert.True(t, bytes.Equal(out, got))
	<-done
}
