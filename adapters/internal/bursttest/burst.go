// Package bursttest is the load generator of the adapters' burst benchmarks: a
// client in a process of its own (the test binary re-run) that fires many
// signed requests at once, each on its own kept-alive HTTP/1.1 connection,
// as wrk would. Discord's and Slack's servers are not in the bridge's
// process, and a client sharing the bridge's Go scheduler only notices a
// response once the scheduler polls the network, which it does late while
// hundreds of handlers are runnable. Each request is written whole and the
// response read by a small parser, so the client takes as little CPU as
// possible from the cores it shares with the bridge.
//
// A package using it adds
//
//	func TestBurstClientProcess(t *testing.T) { bursttest.ClientProcess(t) }
//
// to its tests, and its benchmark calls Start.
package bursttest

import (
	"bufio"
	"bytes"
	"encoding/gob"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

// envVar names the environment variable that makes the test binary the
// client (ClientProcess).
const envVar = "ASKBRIDGE_BURST_CLIENT"

// Round is one burst to fire: Reqs[i] (a whole HTTP request) goes on
// connection i of the connection set Set, opened the first time to
// Targets[i%len(Targets)] (host:port).
type Round struct {
	Set     string
	Targets []string
	Reqs    [][]byte
}

// Reply is what came back for each request of a round.
type Reply struct {
	Status []int
	Bodies [][]byte
	Lat    []time.Duration // from the request written to the response headers read
	Call   []time.Duration // the same from before writing
	Err    []string
}

// Client drives a client process.
type Client struct {
	enc *gob.Encoder
	dec *gob.Decoder
}

// Start starts the test binary as the client process (its
// TestBurstClientProcess).
func Start(tb testing.TB) *Client {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestBurstClientProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envVar+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	return &Client{enc: gob.NewEncoder(in), dec: gob.NewDecoder(out)}
}

// Fire sends one round and waits for every response.
func (c *Client) Fire(r Round) (Reply, error) {
	if err := c.enc.Encode(r); err != nil {
		return Reply{}, err
	}
	var rep Reply
	err := c.dec.Decode(&rep)
	return rep, err
}

// Request is a POST of body to target (host:port) as bytes on the wire.
func Request(target, path, contentType string, headers map[string]string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\n", path, target, contentType)
	for k, v := range headers {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", len(body))
	b.Write(body)
	return b.Bytes()
}

// HostOf is the host:port of a URL.
func HostOf(tb testing.TB, rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		tb.Fatal(err)
	}
	return u.Host
}

// ClientProcess is the client process's main, run from the package's
// TestBurstClientProcess; run alone (not by Start) it skips.
func ClientProcess(t *testing.T) {
	if os.Getenv(envVar) == "" {
		t.Skip("the client process of the package's burst benchmark")
	}
	dec, enc := gob.NewDecoder(os.Stdin), gob.NewEncoder(os.Stdout)
	sets := map[string][]*conn{}
	for {
		var r Round
		if err := dec.Decode(&r); err != nil {
			return // the benchmark is over
		}
		conns := sets[r.Set]
		for len(conns) < len(r.Reqs) {
			c, err := net.Dial("tcp", r.Targets[len(conns)%len(r.Targets)])
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, &conn{c: c, r: bufio.NewReaderSize(c, 4096)})
		}
		sets[r.Set] = conns
		if err := enc.Encode(fire(conns, r.Reqs)); err != nil {
			t.Fatal(err)
		}
	}
}

type conn struct {
	c net.Conn
	r *bufio.Reader
}

// fire sends reqs[i] on conns[i], all at the same instant, and
// returns when every response is in.
func fire(conns []*conn, reqs [][]byte) Reply {
	n := len(reqs)
	rep := Reply{Status: make([]int, n), Bodies: make([][]byte, n), Lat: make([]time.Duration, n),
		Call: make([]time.Duration, n), Err: make([]string, n)}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, req := range reqs {
		c := conns[i]
		wg.Go(func() {
			<-start
			t0 := time.Now()
			if _, err := c.c.Write(req); err != nil {
				rep.Err[i] = err.Error()
				return
			}
			wrote := time.Now()
			status, length, err := c.readHead()
			now := time.Now()
			if err != nil {
				rep.Err[i] = err.Error()
				return
			}
			body := make([]byte, length)
			if _, err := io.ReadFull(c.r, body); err != nil {
				rep.Err[i] = err.Error()
				return
			}
			rep.Status[i], rep.Bodies[i], rep.Lat[i], rep.Call[i] = status, body, now.Sub(wrote), now.Sub(t0)
		})
	}
	close(start)
	wg.Wait()
	return rep
}

// readHead reads a response's status line and headers; the body must have
// a Content-Length (the interactions handler always sets one).
func (c *conn) readHead() (status, length int, err error) {
	length = -1
	for n := 0; ; n++ {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return 0, 0, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		if n == 0 {
			f := bytes.Fields(line)
			if len(f) < 2 {
				return 0, 0, fmt.Errorf("bad status line %q", line)
			}
			status, _ = strconv.Atoi(string(f[1]))
			continue
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(bytes.TrimSpace(k), []byte("Content-Length")) {
			length, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
		}
	}
	if length < 0 {
		return 0, 0, fmt.Errorf("response without Content-Length")
	}
	return status, length, nil
}
