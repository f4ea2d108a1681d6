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
	"syscall"
	"time"

	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/storetest"
)

// benchScale: issue 44's figures on one replica — the askbridge binary as
// a real process, as `askbridge serve` runs — for each store (embedded in
// a data directory; a redis-server of its own), each figure beside its
// target and the floor it is compared with (scale.go, scaleproc.go,
// clicks.go). Steps per store:
//
//  1. 1,000 pending questions, the bridge started: restart time, RSS, live
//     heap, asks/s (the 1,000 point of (c)).
//  2. The bridge stopped, the store filled to -records (pending up to
//     -scale-pending, the rest answered), the bridge started again:
//     restart time (d), live heap per record (d), data file bytes per
//     record (d), Redis used_memory per pending question against the record
//     as one key (e), asks/s (c).
//  3. A parked long-poll on every pending question the open-file limit
//     allows; RSS once settled, per waiter, and at -scale-pending waiters
//     (a, extrapolated beyond the limit); the wake-up of 200 answers/s
//     while they wait against a bare HTTP round trip (b); SSE streams
//     counted apart.
//
// Then (f), click to resume per surface (clicks.go).
func benchScale(dir string, o opts) error {
	bin, err := buildBridge(dir)
	if err != nil {
		return err
	}
	fmt.Printf("(scale) machine: %d cores, load %s; open-file limit %d\n", numCPU(), uptime(), fdLimit())
	start := time.Now()
	stores := []string{"embedded", "redis"}
	if o.records > 100_000 {
		stores = []string{"embedded"} // the million is the embedded store's
	}
	if o.scaleStores != "" {
		stores = strings.Split(o.scaleStores, ",")
	}
	for _, s := range stores {
		if err := scaleOne(dir, bin, s, o); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	fmt.Printf("(scale) done in %s; load now %s\n\n", time.Since(start).Round(time.Second), uptime())
	return nil
}

// scaleOne measures one store; see benchScale.
func scaleOne(dir, bin, name string, o opts) error {
	ctx := context.Background()
	d := filepath.Join(dir, "scale-"+name)
	env, open, rs, err := scaleStore(ctx, d, name)
	if err != nil {
		return err
	}
	if rs != nil {
		defer rs.Kill()
	}
	env = append(env, o.bridgeEnv...)
	if len(o.bridgeEnv) > 0 {
		fmt.Printf("(scale) %-8s the bridge runs with %s\n", name, strings.Join(o.bridgeEnv, " "))
	}
	pendingN := min(o.records, o.scalePending)
	small := min(1000, pendingN)
	fill := func(answered, pending int) ([]filled, time.Duration, error) {
		st, closeSt, err := open()
		if err != nil {
			return nil, 0, err
		}
		defer closeSt()
		t := time.Now()
		qs, err := preloadIDs(ctx, st, "scale", answered, pending)
		return qs, time.Since(t), err
	}
	tag := fmt.Sprintf("(scale) %-8s", name)

	// 1. The 1,000 point.
	qs, _, err := fill(0, small)
	if err != nil {
		return err
	}
	p, ready1, err := startBridge(bin, env)
	if err != nil {
		return err
	}
	heap1, rss1 := p.liveHeap(), p.rss()
	asks1, askLat1, failed1 := scaleAsks(p.base, "asks", 32, time.Duration(o.scaleSecs)*time.Second)
	fmt.Printf("%s at %d records: ready in %s after start; RSS %.0f MB, live heap %.0f MB; asks/s %.0f (32 clients, %d s, p50 %s p99 %s, %d failed)\n",
		tag, small, ready1.Round(time.Millisecond), mB(rss1), mB(heap1), asks1, o.scaleSecs, ms(askLat1.p50), ms(askLat1.p99), failed1)
	if err := p.stop(); err != nil {
		return err
	}

	// 2. The -records point, filled while the bridge is stopped.
	var redis0 int64
	if rs != nil {
		redis0 = redisUsed(rs)
	}
	answered := o.records - pendingN
	more, took, err := fill(answered, pendingN-small)
	if err != nil {
		return err
	}
	qs = append(qs, more...)
	var redisFill int64 // redis-server's RSS holding the fill alone: (a) for MCP hosts
	if rs != nil {
		if pid := redisPID(rs); pid > 0 {
			redisFill = rss(pid)
		}
	}
	ids := make([]string, len(qs))
	for i, q := range qs {
		ids[i] = q.id
	}
	records := int64(o.records + int(asks1*float64(o.scaleSecs)))
	fmt.Printf("%s filled to %d records (%d pending, %d answered) through the store in %s (%.0f records/s)\n",
		tag, o.records, pendingN, answered, took.Round(time.Second), float64(o.records-small)/took.Seconds())
	p, readyN, err := startBridge(bin, env)
	if err != nil {
		return err
	}
	defer p.stop()
	heapN, rssN := p.liveHeap(), p.rss()
	restartTarget := 2 * time.Second
	if o.records > 100_000 {
		restartTarget = 10 * time.Second
	}
	fmt.Printf("%s restart to /readyz at %d records: %s (target ≤ %s: %s; floor: the same at %d records, %s)\n",
		tag, o.records, readyN.Round(time.Millisecond), restartTarget, verdict(readyN <= restartTarget), small, ready1.Round(time.Millisecond))
	if name == "embedded" {
		perRecord := float64(heapN-heap1) / float64(records-int64(small))
		fmt.Printf("%s (d) live Go heap per record: %.0f B (%.0f MB at %d records, %.0f MB at %d, after the last GC; RSS %.0f MB); target ≤ 1024 B: %s\n",
			tag, perRecord, mB(heapN), records, mB(heap1), small, mB(rssN), verdict(perRecord <= 1024))
		size := dirSize(filepath.Join(d, "data"))
		fmt.Printf("%s (d) data file: %.0f B per record (%.0f MB for %d records)\n", tag, float64(size)/float64(records), mB(size), records)
	}
	if rs != nil {
		if err := scaleRedisBytes(ctx, rs, open, redis0, pendingN-small, answered, tag); err != nil {
			return err
		}
	}
	if name == "redis" {
		fmt.Printf("%s the bridge at %d records: live Go heap %.0f MB, RSS %.0f MB (the records are in redis-server)\n", tag, records, mB(heapN), mB(rssN))
	}
	// (c) in turns with fresh bridges at 1,000 records, medians: the
	// machine drifts between two single runs minutes apart by as much as
	// the gap measured (0.83-1.03 in one session's runs of one build).
	// The first 1,000 turn is step 1's.
	at1k, atN := []float64{asks1}, []float64(nil)
	var askLatN lat
	var failedN int64
	for turn := range scaleTurns {
		a, l, f := scaleAsks(p.base, "asks", 32, time.Duration(o.scaleSecs)*time.Second)
		atN, failedN = append(atN, a), failedN+f
		if turn == 0 {
			askLatN = l
		}
		if turn < scaleTurns-1 {
			a1, err := asksAt1k(ctx, bin, filepath.Join(d, fmt.Sprint("small-", turn)), name, o)
			if err != nil {
				return err
			}
			at1k = append(at1k, a1)
		}
	}
	asksN, asks1m := median(atN), median(at1k)
	fmt.Printf("%s (c) asks/s at %d records: %.0f, the median of %d turns of %d s (%s; p50 %s p99 %s in the first, %d failed); at %d records %.0f, the median of %d (%s: a fresh bridge on a fresh store each, the first step 1's): ratio %.2fx (target ≥ 0.90x: %s)\n",
		tag, o.records, asksN, scaleTurns, o.scaleSecs, joinRates(atN), ms(askLatN.p50), ms(askLatN.p99), failedN, small, asks1m, len(at1k), joinRates(at1k), asksN/asks1m, verdict(asksN >= 0.9*asks1m))

	// 3. Parked waiters, and the wake-up while they wait; then parked MCP
	// calls, once the long-polls have gone.
	var dataBytes int64
	if name == "embedded" {
		dataBytes = dirSize(filepath.Join(d, "data"))
	}
	if err := scaleWaiters(p, rs, ids, tag, o, dataBytes); err != nil {
		return err
	}
	if err := p.stop(); err != nil {
		return err
	}
	redisRSS := func() int64 { return 0 }
	if rs != nil {
		redisRSS = func() int64 {
			if pid := redisPID(rs); pid > 0 {
				return rss(pid)
			}
			return 0
		}
	}
	return scaleMCP(func() (*bridgeProc, error) {
		p, _, err := startBridge(bin, env)
		return p, err
	}, redisRSS, redisFill, tag, o, qs[waitedOn(len(qs)):])
}

// waitedOn is how many of the n pending questions the fill left
// scaleWaiters parks a long-poll on, from the first: as many as the
// open-file limit allows. It answers some of them; the rest of the fill
// stays pending as it was left, for the MCP hosts to re-attach to.
func waitedOn(n int) int { return min(n, fdLimit()-3000) }

// scaleWaiters parks a long-poll on as many pending questions as the
// open-file limit allows, reads the RSS, and measures the wake-up.
//
// A parked wait reads its question once, so on the embedded store parking
// maps pages of the data file back in: that part of the RSS (RssFile) is
// bounded by the file's size (dataBytes), not proportional to the waiters,
// and (a) extrapolates only the rest.
func scaleWaiters(p *bridgeProc, rs *storetest.Server, ids []string, tag string, o opts, dataBytes int64) error {
	p.collect()
	rssN, _ := settleRSS(p, 3*time.Second, 20*time.Second)
	fileN := rssFile(p.cmd.Process.Pid)
	mem0, _ := readGoMem(p.base, p.cmd.Process.Pid)
	live0 := p.liveHeap()
	w := waitedOn(len(ids))
	conns := make([]net.Conn, 0, w)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	addr := strings.TrimPrefix(p.base, "http://")
	t0 := time.Now()
	probe := probeNewConns(p.base, 20*time.Millisecond)
	seen := 0 // parked, as the bridge last said
	for i, id := range ids[:w] {
		if o.scaleParkWin > 0 && i-seen >= o.scaleParkWin {
			// Paced: wait until half the window is parked.
			var err error
			if seen, err = waitersAtLeast(p.base, i-o.scaleParkWin/2, 30*time.Second); err != nil {
				return err
			}
		}
		c, err := parkWaiter(addr, "scale", id, 10*time.Minute)
		if err != nil {
			return fmt.Errorf("parking waiter %d: %w", len(conns), err)
		}
		conns = append(conns, c)
	}
	if _, err := waitersAtLeast(p.base, w, 30*time.Second); err != nil {
		return err
	}
	parked := time.Since(t0)
	probed, probedN, probeFailed := probe()
	paced := "at once"
	if o.scaleParkWin > 0 {
		paced = fmt.Sprintf("at most %d not yet parked", o.scaleParkWin)
	}
	fmt.Printf("%s while they park: a request on a new connection every 20 ms (GET /healthz) answered in p50 %s p99 %s max %s (%d; %d failed)\n",
		tag, ms(probed.p50), ms(probed.p99), ms(probed.max), probedN, probeFailed)
	// As (e): the burst of parking leaves garbage and free heap that the
	// runtime returns over tens of seconds (a GC, then the scavenger).
	// The RSS varied 1.6–4.0 KB per waiter in runs of the same build as a
	// collection did or did not come after the burst: one is made to.
	p.collect()
	rssW, settled := settleRSS(p, 10*time.Second, 60*time.Second)
	fileW := rssFile(p.cmd.Process.Pid)
	memW, _ := readGoMem(p.base, p.cmd.Process.Pid)
	// The free heap the runtime keeps (idle, not yet released) is left out
	// of the per-waiter figures: before the waiters it is the garbage of
	// the asks before them, and the bridge gives it back after a burst of
	// parks (a forced scavenge), which made the per-waiter RSS negative.
	keptN, keptW := mem0.heapKept, memW.heapKept
	perAnon := float64((rssW-fileW-keptW)-(rssN-fileN-keptN)) / float64(w)
	// The store gives back mapped pages of its data file now and then, so
	// the file-backed part can fall while waiters park: such a fall is not
	// extrapolated (it would take off more than the file holds).
	perFile := max(0, float64(fileW-fileN)/float64(w))
	per := perAnon + perFile
	want := len(ids) // a waiter on every pending question
	fileAt := float64(fileW) + perFile*float64(max(0, want-w))
	if dataBytes > 0 {
		fileAt = min(fileAt, float64(fileN+dataBytes))
	}
	at := float64(rssW-fileW) + perAnon*float64(max(0, want-w)) + fileAt
	// All included: on Redis, the redis-server holding the records too.
	var redisRSS int64
	if rs != nil {
		if pid := redisPID(rs); pid > 0 {
			redisRSS = rss(pid)
		}
	}
	at += float64(redisRSS)
	how := "measured"
	if w < want {
		how = fmt.Sprintf("extrapolated: %d parked (the open-file limit, %d, allows no more), + %d × the per-waiter figure of the anonymous RSS; the file-backed RSS at most the data file", w, fdLimit(), want-w)
	}
	fmt.Printf("%s parked waiters: the RSS's anonymous part %.0f → %.0f MB (%.2f KB per waiter), its file-backed part (mapped files: the binary, the data file) %.0f → %.0f MB (%.2f KB per waiter; the data file is %.0f MB)\n",
		tag, mB(rssN-fileN), mB(rssW-fileW), perAnon/1024, mB(fileN), mB(fileW), perFile/1024, mB(dataBytes))
	fmt.Printf("%s parked waiters (long-polls, written %s): %d in %s; RSS %.0f MB → %.0f MB once settled (%s), %.2f KB per waiter (the free heap the Go runtime kept, %.0f → %.0f MB, left out; a fall of the file-backed part too); floor: the RSS with no waiter, %.0f MB\n",
		tag, paced, w, parked.Round(time.Millisecond), mB(rssN), mB(rssW), settled.Round(time.Second), per/1024, mB(keptN), mB(keptW), mB(rssN))
	// While they wait: the parker re-reads every wait every 10 s (garbage
	// in proportion to the waits, so collections), and the RSS moves with
	// the collector's cycle; its range over 25 s is the steady state.
	// The CPU they take meanwhile: the bridge's (the sweeps, the
	// collector) and, on Redis, the redis-server's (the sweeps' reads).
	lo, hi := rssW, rssW
	cpu0, t0 := pidCPU(p.cmd.Process.Pid), time.Now()
	var rcpu0 time.Duration
	if rs != nil {
		rcpu0, _ = redisCPU(rs)
	}
	for time.Since(t0) < 25*time.Second {
		time.Sleep(500 * time.Millisecond)
		r := p.rss()
		lo, hi = min(lo, r), max(hi, r)
	}
	idle := time.Since(t0)
	cpu := fmt.Sprintf("; the bridge's CPU %.1f %% of a core", 100*float64(pidCPU(p.cmd.Process.Pid)-cpu0)/float64(idle))
	if rs != nil {
		if rcpu1, err := redisCPU(rs); err == nil {
			cpu += fmt.Sprintf(", redis-server's %.1f %%", 100*float64(rcpu1-rcpu0)/float64(idle))
		}
	}
	fmt.Printf("%s parked waiters, the 25 s after: RSS %.0f–%.0f MB, %.2f–%.2f KB per waiter%s\n",
		tag, mB(lo), mB(hi), (float64(lo-fileW-(rssN-fileN-keptN))/float64(w)+perFile)/1024, (float64(hi-fileW-(rssN-fileN-keptN))/float64(w)+perFile)/1024, cpu)
	if mem1, err := readGoMem(p.base, p.cmd.Process.Pid); err == nil {
		fmt.Printf("%s parked waiters: where the RSS is, %s; live heap after the last GC %.0f B per waiter\n",
			tag, mem1.perWaiter(mem0, w), float64(p.liveHeap()-live0)/float64(w))
	}
	with := ""
	if rs != nil {
		with = fmt.Sprintf(", the bridge and redis-server (%.0f MB)", mB(redisRSS))
	}
	fmt.Printf("%s (a) RSS with %d pending and %d parked waiters%s: %.0f MB (%s); target ≤ 600 MB: %s\n",
		tag, len(ids), want, with, at/1e6, how, verdict(at <= 600e6))

	// (b) wake-up while they wait: answers at o.rate.
	n := min(w, o.rate*o.scaleSecs)
	if n < o.rate {
		fmt.Printf("%s (b) wake-up: not measured (%d waiters, fewer than a second of answers)\n", tag, w)
		return scaleStreams(p, tag, o)
	}
	floorLs, err := getRoundTrips(p.floorURL(), o.rate, time.Second, time.Duration(o.scaleSecs)*time.Second)
	if err != nil {
		return err
	}
	floor := percentiles(floorLs)
	c := client(256)
	ls, _, err := openLoop(o.rate, time.Duration(n/o.rate)*time.Second, func(i int) (time.Duration, error) {
		conn := conns[w-1-i]
		got := make(chan error, 1)
		var woken time.Time
		go func() {
			conn.SetReadDeadline(time.Now().Add(60 * time.Second))
			buf := make([]byte, 8192)
			k, err := conn.Read(buf)
			woken = time.Now()
			if err == nil && !strings.HasPrefix(string(buf[:k]), "HTTP/1.1 200") {
				err = fmt.Errorf("waiter woken with %q", buf[:min(k, 80)])
			}
			got <- err
		}()
		t := time.Now()
		code, _, err := postJSON(c, p.base+"/api/projects/scale/agent-questions/"+ids[w-1-i]+"/respond", map[string]any{"response": "Ship it"})
		if err != nil || code != 202 {
			return 0, fmt.Errorf("respond: %d %v", code, err)
		}
		if err := <-got; err != nil {
			return 0, err
		}
		return woken.Sub(t), nil
	})
	if err != nil {
		return fmt.Errorf("wake: %w", err)
	}
	wake := percentiles(ls)
	fmt.Printf("%s (b) wake-up while %d wait, %d answers at %d/s: p50 %s p99 %s max %s; floor (GET /healthz of the same process at the same rate) p50 %s p99 %s; target p99 ≤ 10 ms: %s\n",
		tag, w, len(ls), o.rate, ms(wake.p50), ms(wake.p99), ms(wake.max), ms(floor.p50), ms(floor.p99), verdict(wake.p99 <= 10*time.Millisecond))
	return scaleStreams(p, tag, o)
}

// scaleStreams: SSE streams of the project's events, counted apart from
// the long-polls: the RSS each adds.
func scaleStreams(p *bridgeProc, tag string, o opts) error {
	n := o.scaleStreams
	if n <= 0 {
		return nil
	}
	rss0, _ := settleRSS(p, 3*time.Second, 20*time.Second)
	addr := strings.TrimPrefix(p.base, "http://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return err
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "GET /api/projects/scale/events HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", addr)
	}
	rss1, _ := settleRSS(p, 3*time.Second, 20*time.Second)
	fmt.Printf("%s SSE streams (GET …/events), counted apart: %d open, RSS %.0f MB → %.0f MB, %.2f KB per stream\n\n",
		tag, n, mB(rss0), mB(rss1), float64(rss1-rss0)/float64(n)/1024)
	return nil
}

// parkWaiter opens a connection and sends a long-poll on question id; the
// caller reads the answer (or closes the connection).
func parkWaiter(addr, project, id string, timeout time.Duration) (net.Conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	_, err = fmt.Fprintf(c, "GET /api/projects/%s/agent-questions/%s/wait?timeout=%s HTTP/1.1\r\nHost: %s\r\n\r\n", project, id, timeout, addr)
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// scaleRedisBytes: (e) used_memory per pending question against each
// record as one string key with a TTL, on the same redis-server.
func scaleRedisBytes(ctx context.Context, rs *storetest.Server, open func() (lifecycle.Store, func(), error), before int64, pending, answered int, tag string) error {
	if answered > 0 || pending <= 0 {
		fmt.Printf("%s (e) Redis bytes per pending question: not measured (the fill was not all pending)\n", tag)
		return nil
	}
	after := redisUsed(rs)
	per := float64(after-before) / float64(pending)
	st, closeSt, err := open()
	if err != nil {
		return err
	}
	defer closeSt()
	floor, size, err := oneKeyFloor(ctx, rs, st.(*store.Store), "scale", 1000)
	if err != nil {
		return err
	}
	fmt.Printf("%s (e) Redis used_memory per pending question: %.0f B; floor: the API record (%d B of JSON) as one key with a TTL, %.0f B; ratio %.2fx (target ≤ 1.50x: %s)\n",
		tag, per, size, floor, per/floor, verdict(per <= 1.5*floor))
	return nil
}

// mB is bytes as megabytes.
func mB(b int64) float64 { return float64(b) / 1e6 }

func uptime() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ") + " (1, 5, 15 min)"
}

func fdLimit() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 1024
	}
	return int(l.Cur)
}

func dirSize(d string) int64 {
	var n int64
	filepath.Walk(d, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// buildBridge builds cmd/bridge into dir.
func buildBridge(dir string) (string, error) {
	bin := filepath.Join(dir, "askbridge-scale")
	args := []string{"build", "-o", bin}
	if os.Getenv("BRIDGE_HEAP_PROFILE") != "" {
		args = append(args, "-tags", "heapprofile") // cmd/bridge/heapprofile.go
	}
	if out, err := exec.Command("go", append(args, "./cmd/bridge")...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v: %s", err, out)
	}
	return bin, nil
}

// get answers whether GET u returns 200.
func get200(u string) bool {
	res, err := http.Get(u)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode == 200
}

var errNotReady = errors.New("the bridge did not answer /readyz within 120 s")

// redisPID is the redis-server's process id (INFO server).
func redisPID(rs *storetest.Server) int {
	out, _ := rs.Cli("info", "server")
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "process_id:"); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}
