package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// bridgeProc is the askbridge binary running `serve` as its own process.
type bridgeProc struct {
	cmd   *exec.Cmd
	base  string
	live  atomic.Int64 // live heap after the last GC (GODEBUG=gctrace=1), bytes
	gcs   atomic.Int64 // collections so far (gctrace lines)
	done  chan struct{}
	dumps int // heap profiles asked of it (heapDump)
}

// gcLine is a gctrace line: "gc 7 @1.2s 3%: …, 12->13->6 MB, …"; the third
// figure is the heap the collection found live.
var gcLine = regexp.MustCompile(`^gc \d+ @.* (\d+)->(\d+)->(\d+) MB`)

// startBridge starts the binary on a free loopback port with env added,
// and returns once /readyz answers 200, with the time that took.
func startBridge(bin string, env []string) (*bridgeProc, time.Duration, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, 0, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve", "--addr", addr)
	cmd.Env = append(os.Environ(), "BRIDGE_LOG_LEVEL=error", "BRIDGE_CONNS_PER_IP=1000000", "GODEBUG=gctrace=1")
	cmd.Env = append(cmd.Env, env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, 0, err
	}
	p := &bridgeProc{cmd: cmd, base: "http://" + addr, done: make(chan struct{})}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := gcLine.FindStringSubmatch(sc.Text()); m != nil {
				n, _ := strconv.ParseInt(m[3], 10, 64)
				p.live.Store(n << 20)
				p.gcs.Add(1)
			} else if os.Getenv("BENCH_BRIDGE_LOG") != "" {
				fmt.Fprintln(os.Stderr, "bridge:", sc.Text())
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	go func() { cmd.Wait(); close(p.done) }()
	for time.Since(t0) < 120*time.Second {
		select {
		case <-p.done:
			return nil, 0, fmt.Errorf("the bridge exited before it was ready (BENCH_BRIDGE_LOG=1 shows its log)")
		default:
		}
		if get200(p.base + "/readyz") {
			return p, time.Since(t0), nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.stop()
	return nil, 0, errNotReady
}

// stop ends the bridge as an operator would (SIGTERM), killing it after
// 30 s.
func (p *bridgeProc) stop() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("the bridge did not stop within 30 s of SIGTERM")
	}
}

// collect makes the bridge allocate (reads of /metrics) until two
// collections have run since the call: the garbage of a burst (waiters
// connecting, asks) is then gone, where an idle process would keep it until
// Go's forced collection two minutes later, and the RSS read after it is
// what a bridge that keeps working holds (it collects as it goes).
func (p *bridgeProc) collect() {
	want := p.gcs.Load() + 2
	for deadline := time.Now().Add(30 * time.Second); p.gcs.Load() < want && time.Now().Before(deadline); {
		_, _ = metricValue(p.base, "go_goroutines")
	}
}

func (p *bridgeProc) rss() int64 { return rss(p.cmd.Process.Pid) }

// liveHeap is the heap the bridge's last GC found live, read a second
// after now so a collection that was under way is counted.
func (p *bridgeProc) liveHeap() int64 {
	time.Sleep(time.Second)
	return p.live.Load()
}

// floorURL is a trivial handler in the bridge's process (/healthz): the
// bare HTTP round trip to it is the floor of every request the bench
// times there.
func (p *bridgeProc) floorURL() string { return p.base + "/healthz" }

// settleRSS reads the RSS until it has made no new low for quiet (at most
// limit): the burst of parking leaves garbage and free heap the runtime
// hands back over the next seconds.
func settleRSS(p *bridgeProc, quiet, limit time.Duration) (int64, time.Duration) {
	t0 := time.Now()
	low, at := p.rss(), time.Now()
	for time.Since(t0) < limit && time.Since(at) < quiet {
		time.Sleep(500 * time.Millisecond)
		if r := p.rss(); r < low {
			low, at = r, time.Now()
		}
	}
	return low, time.Since(t0)
}

// getRoundTrips GETs u at rate: for warm unmeasured, then for d measured.
func getRoundTrips(u string, rate int, warm, d time.Duration) ([]time.Duration, error) {
	c := client(256)
	return atRate(rate, warm, d, func(int) (time.Duration, error) {
		t := time.Now()
		res, err := c.Get(u)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return time.Since(t), nil
	})
}

// heapDump has a bridge built with BRIDGE_HEAP_PROFILE set (buildBridge
// then adds -tags heapprofile) write its heap profile, and names the file
// $BRIDGE_HEAP_PROFILE.name; without the variable it does nothing.
func (p *bridgeProc) heapDump(name string) {
	path := os.Getenv("BRIDGE_HEAP_PROFILE")
	if path == "" {
		return
	}
	p.dumps++
	f := fmt.Sprintf("%s.%d", path, p.dumps)
	os.Remove(f)
	if err := p.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		fmt.Fprintln(os.Stderr, "heap profile:", err)
		return
	}
	// The bridge collects its garbage, then writes the file and closes it:
	// done once its size holds for half a second.
	last := int64(-1)
	for t0 := time.Now(); time.Since(t0) < time.Minute; time.Sleep(500 * time.Millisecond) {
		fi, err := os.Stat(f)
		if err == nil && fi.Size() > 0 && fi.Size() == last {
			to := path + "." + name
			if err := os.Rename(f, to); err == nil {
				fmt.Printf("heap profile of the bridge: %s\n", to)
			}
			return
		}
		if err == nil {
			last = fi.Size()
		}
	}
	fmt.Fprintln(os.Stderr, "heap profile: the bridge wrote none within a minute")
}
