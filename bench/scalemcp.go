package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"
)

// The kinds of MCP host scaleMCP measures.
const (
	mcpStateless = "2026-07-28, blocking call"
	mcpSessioned = "2025-11-25, a session and its call"
	mcpTasks     = "2026-07-28 with the tasks extension"
)

// mcpKindName names each kind for -scale-mcp-kinds.
var mcpKindName = map[string]string{mcpStateless: "stateless", mcpSessioned: "session", mcpTasks: "tasks"}

// scaleMCP measures what an ask_user over MCP costs the bridge while the
// person has not answered, counted apart from the long-polls as the issue
// asks, for n hosts of each kind: a 2026-07-28 host's blocking call
// (stateless, one request), a 2025-11-25 host's session with its call in
// it, and a host that declared the tasks extension (the call returns a task
// at once and the host polls later: nothing of it stays parked). A blocking
// call asks one of the fill's pending questions again (spare: those no
// long-poll touched), in its run, and re-attaches to it: the hosts wait on
// the pending questions as the long-polls of (a) do, and each host's
// figure is what its waiting adds. With fewer spare questions than hosts,
// each call asks a question of its own, and (a) is an upper bound (each
// host's figure holds its question besides the pending ones); a task's
// call always asks its own (tasks.go keys it to its task). It prints the
// RSS each adds once settled, and checks that every blocking call is still
// waiting (no byte of an answer) and every task call got its task. Each kind
// is measured on a bridge process of its own (start: on the same store), so
// what earlier measurements left in the heap does not blur the figure.
//
// redisFill is redis-server's RSS as the fill left it (0: the embedded
// store): with the hosts waiting on the fill's questions, (a) takes it, as
// the 100,000 pending are then the fill's alone, where redis-server now
// also holds what the run asked since (the asks of (c), tens of thousands).
func scaleMCP(start func() (*bridgeProc, error), redisRSS func() int64, redisFill int64, tag string, o opts, spare []filled) error {
	fill := fillState{pending: min(o.records, o.scalePending), redisRSS: redisFill}
	n := o.scaleMCP
	if n <= 0 {
		return nil
	}
	for _, kind := range []string{mcpStateless, mcpSessioned, mcpTasks} {
		if o.scaleMCPKind != "" && !slices.Contains(strings.Split(o.scaleMCPKind, ","), mcpKindName[kind]) {
			continue
		}
		p, err := start()
		if err != nil {
			return err
		}
		var on []filled
		if kind != mcpTasks && len(spare) >= n {
			on = spare[:n]
		}
		if err := scaleMCPKind(p, redisRSS, fill, kind, tag, n, o.scaleMCPWin, on); err != nil {
			p.stop()
			return err
		}
		if err := p.stop(); err != nil {
			return err
		}
	}
	fmt.Println()
	return nil
}

// fillState is what the fill left: its pending questions and
// redis-server's RSS holding them (0: the embedded store).
type fillState struct {
	pending  int
	redisRSS int64
}

func scaleMCPKind(p *bridgeProc, redisRSS func() int64, fill fillState, kind, tag string, n, window int, on []filled) error {
	addr := strings.TrimPrefix(p.base, "http://")
	rss0, _ := settleRSS(p, 5*time.Second, 40*time.Second)
	file0 := rssFile(p.cmd.Process.Pid)
	slug := strings.Trim(strings.ToLower(strings.NewReplacer(" ", "", "(", "", ")", "").Replace(tag)), "[]:") + "-mcp-" + mcpKindName[kind]
	p.heapDump(slug + ".base")
	live0 := p.live.Load()
	mem0, _ := readGoMem(p.base, p.cmd.Process.Pid)
	pending0, err := pendingGauge(p.base)
	if err != nil {
		return err
	}
	waiters0, err := waitersAtLeast(p.base, 0, 0)
	if err != nil {
		return err
	}
	g0, _ := metricValue(p.base, "go_goroutines")
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	t0 := time.Now()
	var streams []net.Conn // sessions' GET streams the bridge kept open
	defer func() {
		for _, c := range streams {
			c.Close()
		}
	}()
	for i := range n {
		session := ""
		if kind == mcpSessioned {
			s, err := mcpSession(p.base)
			if err != nil {
				return fmt.Errorf("MCP session %d: %w", i, err)
			}
			session = s
			// As the TypeScript SDK's client does once initialized: ask
			// for the session's standalone stream, and keep it if given.
			g, err := openStandalone(addr, s)
			if err != nil {
				return fmt.Errorf("MCP session %d: %w", i, err)
			}
			if g != nil {
				streams = append(streams, g)
			}
		}
		var again *filled
		if on != nil {
			again = &on[i]
		}
		c, err := parkMCPCall(addr, session, kind == mcpTasks, fmt.Sprintf("MCP call %d (%s): deploy build %d?", i, kind, i), again)
		if err != nil {
			return fmt.Errorf("MCP call %d: %w", i, err)
		}
		if kind == mcpTasks {
			// The task comes back at once; the host hangs up and polls later.
			got, err := readAll(c, 10*time.Second)
			c.Close()
			if !strings.Contains(got, `"taskId"`) {
				return fmt.Errorf("MCP call %d with the tasks extension got no task: %v %q", i, err, got)
			}
			continue
		}
		conns = append(conns, c)
		if window > 0 && len(conns) > window {
			// Paced: the call written window calls ago has been parked.
			if err := readHead(conns[len(conns)-1-window]); err != nil {
				return fmt.Errorf("MCP call %d: %w", i, err)
			}
		}
	}
	// The calls were written; wait until the bridge has asked every one
	// (its pending gauge), then for the RSS to settle. Calls re-attaching
	// ask nothing new: each is counted once it waits (the bridge's
	// parked callers), and the pending gauge must not have grown.
	for deadline := time.Now().Add(2 * time.Minute); on == nil; {
		k, err := pendingGauge(p.base)
		if err != nil {
			return err
		}
		if k >= pending0+n {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d MCP calls (%s) asked their question within 2 minutes", k-pending0, n, kind)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if on != nil {
		if _, err := waitersAtLeast(p.base, waiters0+n, 2*time.Minute); err != nil {
			return fmt.Errorf("MCP calls (%s) re-attaching to the pending questions: %w", kind, err)
		}
		if k, err := pendingGauge(p.base); err != nil || k > pending0 {
			return fmt.Errorf("MCP calls (%s) meant to re-attach to pending questions left %d pending, more than %d: some asked anew (%v)", kind, k, pending0, err)
		}
	}
	took := time.Since(t0)
	// Settled over 11 s: the embedded store gives back the pages of its
	// data file the calls' reads mapped in within 10 s of the last
	// (mapped_linux.go), as it did for the long-polls' figure.
	rss1, _ := settleRSS(p, 11*time.Second, 60*time.Second)
	file1 := rssFile(p.cmd.Process.Pid)
	g1, _ := metricValue(p.base, "go_goroutines")
	if kind == mcpSessioned {
		fmt.Printf("%s ask_user over MCP (%s): %d of %d sessions' standalone GET streams (what a TypeScript SDK host opens once initialized) kept open by the bridge\n",
			tag, kind, len(streams), n)
	}
	// Every blocking call still waits: what it has sent holds no result
	// (a 2025-11-25 call's stream may have sent its headers and priming
	// event).
	for i, c := range conns[:min(len(conns), 50)] {
		if got, _ := readAll(c, 50*time.Millisecond); strings.Contains(got, `"result"`) || strings.Contains(got, `"error"`) ||
			strings.HasPrefix(got, "HTTP/1.1 4") || strings.HasPrefix(got, "HTTP/1.1 5") {
			return fmt.Errorf("parked MCP call %d (%s) had ended before it was counted: %q", i, kind, got)
		}
	}
	livePer := 0.0        // live heap a call added, read after a collection
	if kind != mcpTasks { // both kinds of blocking call are parked
		// The calls' asks leave their garbage (about 100 KB a call during
		// the burst) in a heap the collector lets grow: once parked, an
		// idle bridge collects it only at Go's forced collection (every 2
		// minutes). The RSS after the next collection is what the parked
		// calls themselves hold.
		// Reads of /metrics allocate, so the collection comes in seconds
		// rather than at the forced one.
		g0, t1 := p.gcs.Load(), time.Now()
		for p.gcs.Load() == g0 && time.Since(t1) < 150*time.Second {
			_, _ = metricValue(p.base, "go_goroutines")
		}
		if p.gcs.Load() > g0 {
			rss2, _ := settleRSS(p, 5*time.Second, 40*time.Second)
			file2 := rssFile(p.cmd.Process.Pid)
			p.heapDump(slug + ".parked")
			livePer = float64(p.live.Load()-live0) / float64(n)
			fmt.Printf("%s ask_user over MCP (%s), after the bridge's next collection (%s later): RSS %.0f MB, %.2f KB each (anonymous %.2f KB), live heap %.2f KB each\n",
				tag, kind, time.Since(t1).Round(time.Second), mB(rss2), float64(rss2-rss0)/float64(n)/1024,
				float64((rss2-file2)-(rss0-file0))/float64(n)/1024, livePer/1024)
			if mem1, err := readGoMem(p.base, p.cmd.Process.Pid); err == nil {
				fmt.Printf("%s ask_user over MCP (%s): where the RSS is, %s\n", tag, kind, mem1.perWaiter(mem0, n))
			}
		}
	}
	what := "parked"
	if kind == mcpTasks {
		what = "created and left to wait"
	} else if window > 0 {
		what = fmt.Sprintf("parked, at most %d written and not yet parked at once,", window)
	} else {
		what = "written at once and parked"
	}
	if on != nil {
		what += " (each re-attached to a pending question of the fill)"
	} else if kind != mcpTasks {
		what += " (each asking a question of its own)"
	}
	anon := float64((rss1-file1)-(rss0-file0)) / float64(n)
	fmt.Printf("%s ask_user over MCP (%s), counted apart: %d %s in %s; RSS %.0f MB → %.0f MB once settled, %.2f KB each (anonymous %.2f KB, file-backed %.2f KB: pages of the data file mapped in); %.1f goroutines each\n",
		tag, kind, n, what, took.Round(time.Millisecond), mB(rss0), mB(rss1), float64(rss1-rss0)/float64(n)/1024, anon/1024, float64(file1-file0)/float64(n)/1024,
		(g1-g0)/float64(n))
	switch {
	case kind == mcpTasks: // nothing waits: a task is a record
	case n < 10_000:
		// A few thousand hosts move the RSS by the runtime's steps more
		// than by what they hold (2026-07-28: ~11 KB each at 2,000, 1.4 KB
		// at 17,000).
		fmt.Printf("%s (a) for MCP hosts (%s): not extrapolated from fewer than 10,000 hosts (-scale-mcp)\n", tag, kind)
	default:
		// (a) with such hosts as the 100,000 waiters, extrapolated from n.
		const hosts = 100_000
		r := redisRSS() // read once: the figure and its words agree
		with := ""
		if r > 0 {
			with = fmt.Sprintf(" and redis-server (%.0f MB)", mB(r))
		}
		pending := pending0
		if on != nil && fill.redisRSS > 0 {
			with = fmt.Sprintf(" and redis-server as the fill left it (%.0f MB; %.0f MB now, holding %d pending: the fill's and those asked since)",
				mB(fill.redisRSS), mB(r), pending0)
			r, pending = fill.redisRSS, fill.pending
		}
		at := float64(rss0) + float64(rss1-rss0)/float64(n)*hosts + float64(r)
		how := "each waiting on a pending question as the long-polls do (re-attached to it)"
		if on == nil {
			how = "each host's own question counted besides the pending ones: an upper bound"
		}
		fmt.Printf("%s (a) for MCP hosts (%s): RSS with %d pending and %d such hosts waiting, the bridge%s: %.0f MB (extrapolated: the bridge with no host, %.0f MB, + %d × the RSS each added; %s); target ≤ 600 MB: %s\n",
			tag, kind, pending, hosts, with, at/1e6, mB(rss0), hosts, how, verdict(at <= 600e6))
		if livePer > 0 {
			// The RSS above is the settled one, after the burst's garbage
			// was collected and given back; as the bridge goes on working
			// the runtime lets its heap grow up to twice the live heap
			// before collecting (GOGC=100) unless a memory limit is set.
			liveAt := float64(live0) + livePer*hosts
			fmt.Printf("%s (a) for MCP hosts (%s): the bridge's live heap then %.0f MB (with no host %.0f MB, + %d × %.2f KB); under work the heap grows to twice that before a collection unless a Go memory limit holds it (a 600 MB container's: 540 MB)\n",
				tag, kind, liveAt/1e6, mB(live0), hosts, livePer/1024)
		}
	}
	return nil
}

// metricLines reads the bridge's /metrics, one line a series.
func metricLines(base string) ([]string, error) {
	res, err := http.Get(base + "/metrics")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	return strings.Split(string(body), "\n"), nil
}

// metricValue reads one unlabelled metric of the bridge's /metrics.
func metricValue(base, name string) (float64, error) {
	lines, err := metricLines(base)
	if err != nil {
		return 0, err
	}
	for _, line := range lines {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			var k float64
			_, err := fmt.Sscan(v, &k)
			return k, err
		}
	}
	return 0, fmt.Errorf("no %s in /metrics", name)
}

// pendingGauge reads the bridge's pending questions from /metrics (the
// askbridge_questions_pending gauge, summed over projects).
func pendingGauge(base string) (int, error) {
	lines, err := metricLines(base)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, line := range lines {
		if v, ok := strings.CutPrefix(line, "askbridge_questions_pending{"); ok {
			var k float64
			if _, err := fmt.Sscan(v[strings.IndexByte(v, '}')+1:], &k); err == nil {
				n += int(k)
			}
		}
	}
	return n, nil
}

// waitersAtLeast reads the bridge's parked callers (the askbridge_waiters
// gauge of kind question, summed over projects) until there are n, at
// most for d; it returns the last count.
func waitersAtLeast(base string, n int, d time.Duration) (int, error) {
	for deadline := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		lines, err := metricLines(base)
		if err != nil {
			return 0, err
		}
		got := 0
		for _, line := range lines {
			if v, ok := strings.CutPrefix(line, "askbridge_waiters{"); ok && strings.Contains(v, `kind="question"`) {
				var k float64
				if _, err := fmt.Sscan(v[strings.IndexByte(v, '}')+1:], &k); err == nil {
					got += int(k)
				}
			}
		}
		if got >= n {
			return got, nil
		}
		if time.Now().After(deadline) {
			return got, fmt.Errorf("%d callers parked after %s, not %d", got, d, n)
		}
	}
}

// mcpBody is a JSON-RPC request to /mcp; a 2026-07-28 request carries the
// protocol version, client and capabilities in _meta (no session).
func mcpBody(id int, method string, params map[string]any, stateless bool) []byte {
	if stateless {
		params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": fillAgent, "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{}}
	}
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if id > 0 {
		msg["id"] = id
	}
	b, _ := json.Marshal(msg)
	return b
}

// mcpSession opens a 2025-11-25 session (initialize, then initialized) and
// returns its id.
func mcpSession(base string) (string, error) {
	post := func(body []byte, session string) (*http.Response, error) {
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		return http.DefaultClient.Do(req)
	}
	res, err := post(mcpBody(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": fillAgent, "version": "1"}}, false), "")
	if err != nil {
		return "", err
	}
	// Read the answer to the end, as a host does: a host that hangs up
	// before the initialize result is written may find no session after.
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	s := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != http.StatusOK || s == "" {
		return "", fmt.Errorf("initialize: HTTP %d, session %q", res.StatusCode, s)
	}
	res, err = post(mcpBody(0, "notifications/initialized", map[string]any{}, false), s)
	if err != nil {
		return "", err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return s, nil
}

// openStandalone asks for the standalone stream of session as the
// TypeScript SDK's client does (GET, no Last-Event-ID) and returns its
// connection if the bridge keeps it open (200), nil if it declines (405).
func openStandalone(addr, session string) (net.Conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	_, err = fmt.Fprintf(c, "GET /mcp HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: %s\r\n\r\n", addr, session)
	h := ""
	if err == nil {
		h, err = head(c)
	}
	switch {
	case err != nil:
		c.Close()
		return nil, fmt.Errorf("standalone stream: %w", err)
	case strings.HasPrefix(h, "HTTP/1.1 200 "):
		return c, nil
	case strings.HasPrefix(h, "HTTP/1.1 405 "):
		c.Close()
		return nil, nil
	}
	c.Close()
	return nil, fmt.Errorf("standalone stream: %.40q", h)
}

// parkMCPCall sends tools/call ask_user on a connection of its own and
// leaves it waiting; session "" is a 2026-07-28 stateless call, which with
// tasks declares the tasks extension. Given on, it asks on's preloaded
// question again in its run and project, and re-attaches to it; else it
// asks question, in the default project.
func parkMCPCall(addr, session string, tasks bool, question string, on *filled) (net.Conn, error) {
	hdr := ""
	if on != nil {
		// The preloaded question's own items, in its run and project.
		question = on.question
		hdr = "Askbridge-Project: " + on.project + "\r\nAskbridge-Run-Id: " + on.run + "\r\n"
	}
	items := fillItems(question)
	opts := []any{}
	for _, o := range items[0].Options {
		opts = append(opts, map[string]any{"label": o.Label, "description": o.Description})
	}
	args := map[string]any{"questions": []any{map[string]any{"question": items[0].Question, "header": items[0].Header, "options": opts}}}
	body := mcpBody(2, "tools/call", map[string]any{"name": "ask_user", "arguments": args}, session == "")
	if tasks {
		body = bytes.Replace(body, []byte(`"io.modelcontextprotocol/clientCapabilities":{}`),
			[]byte(`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`), 1)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	if session != "" {
		hdr += "MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: " + session + "\r\n"
	} else {
		hdr += "MCP-Protocol-Version: 2026-07-28\r\n"
	}
	if tasks {
		hdr += "Connection: close\r\n" // the answer ends the connection: the host reads to its end
	}
	_, err = fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Method: tools/call\r\nMcp-Name: ask_user\r\n%sContent-Length: %d\r\n\r\n%s",
		addr, hdr, len(body), body)
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// readAll reads what the connection sends within d.
func readAll(c net.Conn, d time.Duration) (string, error) {
	_ = c.SetReadDeadline(time.Now().Add(d))
	var got strings.Builder
	buf := make([]byte, 4096)
	for {
		k, err := c.Read(buf)
		got.Write(buf[:k])
		if err != nil {
			return got.String(), err
		}
	}
}

// readHead reads a parked call's response head (sent when it is parked).
func readHead(c net.Conn) error {
	_, err := head(c)
	return err
}

// head reads a response's head, byte by byte (what follows stays unread).
func head(c net.Conn) (string, error) {
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	var got []byte
	buf := make([]byte, 1)
	for !bytes.HasSuffix(got, []byte("\r\n\r\n")) {
		if _, err := c.Read(buf); err != nil {
			return string(got), err
		}
		got = append(got, buf[0])
	}
	return string(got), nil
}
