package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store/storetest"
)

// benchAbandon: (h) abandoned long-polls. N clients (-abandon-n) long-poll
// /wait?timeout=60s on a replica and close their connections once parked;
// the figure is how long the replica takes to release every server-side
// socket (ESTABLISHED or CLOSE_WAIT in /proc/net/tcp), target < 1 s.
func benchAbandon(rs *storetest.Server, o opts) error {
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		fmt.Println("(h) abandoned long-polls: skipped (needs /proc/net/tcp)")
		return nil
	}
	r, err := newReplica(rs.URL, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	res, err := r.router.Ask(context.Background(), "abandon", &domain.AskRequest{RunID: "run-1", Question: "Ship it?",
		Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}}, "")
	if err != nil {
		return err
	}
	u, _ := url.Parse(r.web.URL)
	port, _ := strconv.Atoi(u.Port())
	base := socketsOn(port)
	conns := make([]net.Conn, 0, o.abandonN)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range o.abandonN {
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			return err
		}
		fmt.Fprintf(c, "GET /api/projects/abandon/agent-questions/%s/wait?timeout=60s HTTP/1.1\r\nHost: %s\r\n\r\n", res.Question.ID, u.Host)
		conns = append(conns, c)
	}
	deadline := time.Now().Add(30 * time.Second)
	for socketsOn(port) < base+o.abandonN && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	held := socketsOn(port) - base
	time.Sleep(500 * time.Millisecond) // each wait has been checked once: parked
	start := time.Now()
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	closed := time.Since(start)
	var at1s = -1
	for {
		left := socketsOn(port) - base
		if at1s < 0 && time.Since(start) >= time.Second {
			at1s = left
		}
		if left <= 0 || time.Since(start) > 65*time.Second {
			fmt.Printf("(h) %d long-polls (/wait?timeout=60s) closed by their clients (closing took %s): server sockets released in %s; %d left after 1 s (target: all within 1 s): %s\n\n",
				held, ms(closed), ms(time.Since(start)), max(at1s, 0), verdict(time.Since(start) <= time.Second || at1s == 0))
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// socketsOn counts the server side of connections to a local port (not
// listening, not in TIME_WAIT) from /proc/net/tcp{,6}.
func socketsOn(port int) int {
	n := 0
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(l)
			if len(fs) < 4 {
				continue
			}
			_, p, _ := strings.Cut(fs[1], ":")
			lp, _ := strconv.ParseInt(p, 16, 32)
			if int(lp) == port && fs[3] != "0A" && fs[3] != "06" {
				n++
			}
		}
	}
	return n
}
