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
//
// The child also measures the floors that (b) is compared with from where
// the path's own requests start (see benchWake): a bare HTTP round trip to
// the bridge's process, and the chain floor.

// wakeJob is what the parent hands the child on stdin.
type wakeJob struct {
	A, B string // base URLs of the replicas
	IDs  []string
	Rate int
	// FloorURL is a bare HTTP handler in the bridge's process.
	FloorURL string
	// ChainA, ChainB serve the wake paths with no askbridge code behind
	// them (chain.go); ChainIDs are the ids to wait for and answer there.
	ChainA, ChainB string
	ChainIDs       []string
}

// wakeResult is what the child hands back on stdout.
type wakeResult struct {
	HTTPFloor []time.Duration // bare HTTP round trips
	Chain     []time.Duration // answer → waiter woken through the chain floor
	Respond   []time.Duration // respond → 202 on replica B
	Wake      []time.Duration // answer → waiter woken, (b) itself
}

const wakeClientFlag = "-wake-client"

// runWakeClient is the child: the HTTP floor, the chain floor, then (b).
func runWakeClient() error {
	var job wakeJob
	if err := json.NewDecoder(os.Stdin).Decode(&job); err != nil {
		return err
	}
	var res wakeResult
	var err error
	// As floorHTTP, from this process, after 1 s unmeasured.
	if res.HTTPFloor, err = bareRoundTrips(job.FloorURL, job.Rate, time.Second, 5*time.Second); err != nil {
		return fmt.Errorf("HTTP floor: %w", err)
	}
	if res.Chain, _, err = wakeRound(job.ChainA, job.ChainB, job.ChainIDs, job.Rate); err != nil {
		return fmt.Errorf("chain floor: %w", err)
	}
	if res.Wake, res.Respond, err = wakeRound(job.A, job.B, job.IDs, job.Rate); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

// wakeRound parks a waiter per id on a, then answers them on b at rate;
// it returns each answer's latency until its waiter had the answered
// record, and each answer's own round trip.
func wakeRound(a, b string, ids []string, rate int) (wake, respond []time.Duration, err error) {
	n := len(ids)
	c := client(n + 10)
	woken := make([]chan time.Time, n)
	for i, id := range ids {
		woken[i] = make(chan time.Time, 1)
		go func() {
			res, err := c.Get(a + "/api/projects/wake/agent-questions/" + id + "/wait?timeout=120s")
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
	respond = make([]time.Duration, n)
	time.Sleep(2 * time.Second) // every waiter is parked
	wake, _, err = openLoop(rate, time.Duration(n/rate)*time.Second, func(i int) (time.Duration, error) {
		t := time.Now()
		code, _, err := postJSON(c, b+"/api/projects/wake/agent-questions/"+ids[i]+"/respond", map[string]any{"response": "yes"})
		respond[i] = time.Since(t)
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
	c.CloseIdleConnections()
	return wake, respond, err
}

// wakeInChild runs runWakeClient in a child process (this binary again).
func wakeInChild(job wakeJob) (wakeResult, error) {
	var res wakeResult
	exe, err := os.Executable()
	if err != nil {
		return res, err
	}
	in, _ := json.Marshal(job)
	cmd := exec.Command(exe, wakeClientFlag)
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return res, fmt.Errorf("wake client: %w", err)
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return res, fmt.Errorf("wake client output: %w", err)
	}
	return res, nil
}
