package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// The (b) wake client — 2,000 long-polls on replica A and the answers sent
// to replica B — runs in a child process of its own, as agents and the
// bridge do in production. In the bridge's process its 2,000 blocked
// requests (three goroutines and two buffers each) tripled the goroutines
// and heap the garbage collector scans and shared the replicas' scheduler,
// so the client's own pauses were counted as wake latency.

// wakeJob is what the parent hands the child on stdin.
type wakeJob struct {
	A, B string // base URLs of the replicas
	IDs  []string
	Rate int
}

const wakeClientFlag = "-wake-client"

// runWakeClient is the child: it parks a waiter per question on A, then
// answers them on B at the rate, and writes each latency (ns) as JSON.
func runWakeClient() error {
	var job wakeJob
	if err := json.NewDecoder(os.Stdin).Decode(&job); err != nil {
		return err
	}
	n := len(job.IDs)
	c := client(n + 10)
	woken := make([]chan time.Time, n)
	for i, id := range job.IDs {
		woken[i] = make(chan time.Time, 1)
		go func() {
			res, err := c.Get(job.A + "/api/projects/wake/agent-questions/" + id + "/wait?timeout=120s")
			if err != nil {
				return
			}
			var q map[string]any
			json.NewDecoder(res.Body).Decode(&q)
			res.Body.Close()
			if q["status"] == "answered" {
				woken[i] <- time.Now()
			}
		}()
	}
	rtts := make([]time.Duration, n)
	time.Sleep(2 * time.Second) // every waiter is parked
	ls, _, err := openLoop(job.Rate, time.Duration(n/job.Rate)*time.Second, func(i int) (time.Duration, error) {
		t := time.Now()
		code, _, err := postJSON(c, job.B+"/api/projects/wake/agent-questions/"+job.IDs[i]+"/respond", map[string]any{"response": "yes"})
		rtts[i] = time.Since(t)
		if err != nil || code != 202 {
			return 0, fmt.Errorf("respond: %d %v", code, err)
		}
		select {
		case at := <-woken[i]:
			return at.Sub(t), nil
		case <-time.After(30 * time.Second):
			return 0, errors.New("waiter not woken")
		}
	})
	if err != nil {
		return err
	}
	p := percentiles(rtts)
	// Printed beside (b): a waiter cannot be woken before the answer is
	// recorded, so this round trip (HTTP, the read of the question, the
	// transition script) bounds the wake-up from below.
	fmt.Fprintf(os.Stderr, "(b) the answers' own round trip to B (respond → 202): p50 %s  p99 %s\n", ms(p.p50), ms(p.p99))
	return json.NewEncoder(os.Stdout).Encode(ls)
}

// wakeInChild runs runWakeClient in a child process (this binary again).
func wakeInChild(job wakeJob) ([]time.Duration, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	in, _ := json.Marshal(job)
	cmd := exec.Command(exe, wakeClientFlag)
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("wake client: %w", err)
	}
	var ls []time.Duration
	if err := json.Unmarshal(out, &ls); err != nil {
		return nil, fmt.Errorf("wake client output: %w", err)
	}
	return ls, nil
}
