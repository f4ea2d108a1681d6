package app

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestASlowLorisWaveNeitherHoldsTheDoorNorStarvesOthers: 60 connections
// that send a body one byte at a time are cut off once their endpoint's
// body time is up, while healthy requests are served meanwhile; a client
// address holding its share of connections gets no more.
func TestASlowLorisWaveNeitherHoldsTheDoorNorStarvesOthers(t *testing.T) {
	var served atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		served.Add(1)
		fmt.Fprintf(w, "got %d bytes", len(b))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	const perIP = 70
	srv := &http.Server{Handler: bodyDeadline(h, 300*time.Millisecond, 2*time.Second), ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(limitPerIP(ln, perIP)) }()
	t.Cleanup(func() { _ = srv.Close() })
	addr := ln.Addr().String()

	slow := func(path string) (closedAfter chan time.Duration) {
		closedAfter = make(chan time.Duration, 1)
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		start := time.Now()
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n", path)
		go func() {
			defer c.Close()
			buf := make([]byte, 512)
			go func() {
				for range 100 {
					if _, err := c.Write([]byte("a")); err != nil {
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
			}()
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			for {
				if _, err := c.Read(buf); err != nil {
					closedAfter <- time.Since(start)
					return
				}
			}
		}()
		return closedAfter
	}
	var waves []chan time.Duration
	for i := range 60 {
		path := "/slack/interactions"
		if i%3 == 1 {
			path = "/discord/interactions"
		} else if i%3 == 2 {
			path = "/login"
		}
		waves = append(waves, slow(path))
	}
	// Healthy requests are served at once meanwhile.
	for range 5 {
		start := time.Now()
		resp, err := http.Post("http://"+addr+"/slack/interactions", "application/x-www-form-urlencoded", strings.NewReader("payload=x"))
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, "got 9 bytes", string(body))
		assert.Less(t, time.Since(start), time.Second, "not held up by the slow ones (they would take 5 s)")
	}
	var wg sync.WaitGroup
	for _, w := range waves {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := <-w
			assert.Less(t, d, 1500*time.Millisecond, "a slow body is cut off after the endpoint's time")
		}()
	}
	wg.Wait()

	// One address holding perIP connections gets no more.
	var held []net.Conn
	for range perIP {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		held = append(held, c)
	}
	time.Sleep(100 * time.Millisecond)
	extra, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	_ = extra.SetReadDeadline(time.Now().Add(2 * time.Second))
	fmt.Fprintf(extra, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	_, err = extra.Read(make([]byte, 1))
	// Closed unanswered: EOF, or a reset when the request was already sent.
	assert.True(t, errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET), "the connection over the bound is closed, got %v", err)
	for _, c := range held {
		c.Close()
	}
}

// TestOneAddressHasFewRequestsInFlightBeforeAnyCredential: on the platform
// callbacks and sign-in an address over its bound is answered 429 at once;
// the API, where runtimes park long-polls, is not bounded this way.
func TestOneAddressHasFewRequestsInFlightBeforeAnyCredential(t *testing.T) {
	release := make(chan struct{})
	h := boundUnauthenticated(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }), 2)
	serve := func(path, addr string) chan int {
		done := make(chan int, 1)
		go func() {
			req := httptest.NewRequest("POST", path, nil)
			req.RemoteAddr = addr + ":5000"
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			done <- rec.Code
		}()
		return done
	}
	a, b := serve("/slack/interactions", "203.0.113.9"), serve("/login", "203.0.113.9")
	time.Sleep(50 * time.Millisecond)
	third := serve("/discord/interactions", "203.0.113.9")
	select {
	case code := <-third:
		assert.Equal(t, http.StatusTooManyRequests, code, "the third in flight is refused at once")
	case <-time.After(time.Second):
		t.Fatal("the third request waited instead of being refused")
	}
	others := []chan int{serve("/slack/interactions", "198.51.100.1"), serve("/api/projects/p/agent-questions/x/wait", "203.0.113.9"),
		serve("/api/projects/p/agent-questions/y/wait", "203.0.113.9")}
	time.Sleep(50 * time.Millisecond)
	close(release)
	for _, c := range append([]chan int{a, b}, others...) {
		assert.Equal(t, http.StatusOK, <-c, "another address, and the API, are not bounded")
	}
}

// TestACountedConnectionKeepsItsDescriptor: the long-poll parker reaches a
// TCP connection's descriptor through syscall.Conn; the per-address bound
// must not hide it (without it, every parked waiter costs a goroutine:
// bench (e) went from 6 to 25 KB per waiter).
func TestACountedConnectionKeepsItsDescriptor(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	l := limitPerIP(ln, 10)
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err == nil {
			defer c.Close()
			time.Sleep(200 * time.Millisecond)
		}
	}()
	c, err := l.Accept()
	require.NoError(t, err)
	defer c.Close()
	sc, ok := c.(syscall.Conn)
	require.True(t, ok)
	raw, err := sc.SyscallConn()
	require.NoError(t, err)
	require.NoError(t, raw.Control(func(fd uintptr) { assert.NotZero(t, fd) }))
}
