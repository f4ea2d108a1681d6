package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/storetest"
)

// benchWaiters: (e) process memory per concurrent waiter: the real bridge
// binary on Redis, N long-poll waiters each on its own pending question;
// RSS (and Go heap from /metrics if exposed) before and after.
func benchWaiters(rs *storetest.Server, o opts) error {
	dir, err := os.MkdirTemp("", "bridge-bin")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "askbridge")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/bridge").CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v: %s", err, out)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{URL: rs.URL})
	if err != nil {
		return err
	}
	defer st.Close()
	if err := createPending(ctx, st, "waiters", 0, o.waiters); err != nil {
		return err
	}
	qs, err := st.List(ctx, "waiters", domain.StatusPending, o.waiters)
	if err != nil {
		return err
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve", "--addr", addr)
	cmd.Env = append(os.Environ(), "REDIS_URL="+rs.URL, "BRIDGE_LOG_LEVEL=error")
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	base := "http://" + addr
	if !storetest.WaitFor(ctx, 15*time.Second, func() bool {
		res, err := http.Get(base + "/readyz")
		if err == nil {
			res.Body.Close()
		}
		return err == nil && res.StatusCode == 200
	}) {
		return errors.New("bridge did not start")
	}
	c := client(o.waiters + 100)
	var parked atomic.Int64
	wait := func(qs []*domain.Question) {
		for _, q := range qs {
			go func() {
				req, _ := http.NewRequest("GET", base+"/api/projects/waiters/agent-questions/"+q.ID+"/wait?timeout=120s", nil)
				parked.Add(1)
				res, err := c.Do(req)
				if err == nil {
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
			}()
		}
	}
	// Warm up: 100 waiters, so pools and buffers that do not grow per
	// waiter are already counted in the baseline.
	wait(qs[:100])
	time.Sleep(2 * time.Second)
	rss0 := rss(cmd.Process.Pid)
	mem0, _ := readGoMem(base, cmd.Process.Pid)
	start := time.Now()
	wait(qs[100:])
	for parked.Load() < int64(len(qs)) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(5 * time.Second) // all requests are read and parked in Wait
	rssNow := rss(cmd.Process.Pid)
	// Parking 9,900 connections at once leaves garbage and free heap that
	// the Go runtime gives back over the next seconds (a GC, then the
	// scavenger), so the steady state is read once RSS stops falling:
	// no new low for 10 s, at most 90 s (the waits last 120 s).
	rss1, low := rssNow, time.Now()
	for settle := time.Now(); time.Since(settle) < 90*time.Second && time.Since(low) < 10*time.Second; {
		time.Sleep(time.Second)
		if r := rss(cmd.Process.Pid); r < rss1 {
			rss1, low = r, time.Now()
		}
	}
	settled := time.Since(start)
	n := len(qs) - 100
	per := float64(rss1-rss0) / float64(n)
	conns := countConns(cmd.Process.Pid)
	fmt.Printf("(e) process memory per concurrent waiter, %d waiters on one bridge: RSS %.1f MB → %.1f MB once settled (%s after the waiters began; %.1f MB right after they parked, %.2f KB per waiter), %.2f KB per waiter; bridge holds %d sockets; budget ≤ %.2f KB (a): %s\n",
		len(qs), float64(rss0)/1e6, float64(rss1)/1e6, settled.Round(time.Second), float64(rssNow)/1e6,
		float64(rssNow-rss0)/float64(n)/1024, per/1024, conns, waiterBudget/1024, verdict(per <= waiterBudget))
	if mem1, err := readGoMem(base, cmd.Process.Pid); err == nil {
		fmt.Printf("(e) where it is, %s\n", mem1.perWaiter(mem0, n))
	}
	fmt.Println()
	// The waiters still work: answer one through the API.
	code, _, err := postJSON(c, base+"/api/projects/waiters/agent-questions/"+qs[len(qs)-1].ID+"/respond", map[string]any{"response": "ship"})
	if err != nil || code != 202 {
		return fmt.Errorf("answering under load: %d %v", code, err)
	}
	return nil
}

func rss(pid int) int64 { return statusBytes(pid, "VmRSS:") }

// rssFile is the part of a process's RSS that is pages of files mapped in
// (the binary, the embedded store's data file): clean pages the kernel can
// drop and read again, bounded by the files' sizes, not by what the process
// holds.
func rssFile(pid int) int64 { return statusBytes(pid, "RssFile:") }

// statusBytes reads one "kB" field of /proc/<pid>/status, in bytes.
func statusBytes(pid int, field string) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field); ok {
			f := strings.Fields(v)
			n, _ := strconv.ParseInt(f[0], 10, 64)
			return n * 1024
		}
	}
	return 0
}

func countConns(pid int) int {
	es, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	n := 0
	for _, e := range es {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name())); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}
