package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// probeNewConns sends a request on a new connection every `every` (GET
// /healthz: what a click from a chat platform meets before its own work,
// the accept and the first read, while a burst is under way) until the
// returned stop is called; stop returns their times, from dialing to the
// response's status line, and how many failed.
func probeNewConns(base string, every time.Duration) (stop func() (lat, int, int)) {
	addr := strings.TrimPrefix(base, "http://")
	var (
		mu     sync.Mutex
		ls     []time.Duration
		failed int
		wg     sync.WaitGroup
	)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				d, err := probeOnce(addr)
				mu.Lock()
				if err != nil {
					failed++
				} else {
					ls = append(ls, d)
				}
				mu.Unlock()
			}()
		}
	}()
	return func() (lat, int, int) {
		close(done)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return percentiles(ls), len(ls), failed
	}
}

func probeOnce(addr string) (time.Duration, error) {
	t0 := time.Now()
	c, err := net.DialTimeout("tcp", addr, 30*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", addr); err != nil {
		return 0, err
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("status %d", res.StatusCode)
	}
	return time.Since(t0), nil
}
