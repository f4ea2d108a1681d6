package api

import (
	"net"
	"testing"
	"time"
)

func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	client, err = net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	return server, client
}

// Both ways of noticing a departed client: they fire when the client
// closes, not when it sends data, and not after stop.
func TestHangupWatchers(t *testing.T) {
	for name, watch := range map[string]func(net.Conn, func()) func(){"platform": watchHangup, "read": readHangup} {
		t.Run(name, func(t *testing.T) {
			server, client := tcpPair(t)
			defer server.Close()
			gone := make(chan struct{}, 1)
			watch(server, func() { gone <- struct{}{} })
			client.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
			select {
			case <-gone:
				t.Fatal("data is not a hang-up")
			case <-time.After(100 * time.Millisecond):
			}
			client.Close()
			select {
			case <-gone:
			case <-time.After(10 * time.Second):
				t.Fatal("the client's close went unnoticed")
			}

			server2, client2 := tcpPair(t)
			stop := watch(server2, func() { gone <- struct{}{} })
			stop()
			server2.Close()
			client2.Close()
			select {
			case <-gone:
				t.Fatal("a stopped watch fired")
			case <-time.After(200 * time.Millisecond):
			}
		})
	}
}
