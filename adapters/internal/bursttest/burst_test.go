package bursttest

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestBurstClientProcess(t *testing.T) { ClientProcess(t) }

// The client process fires every request at once on its own connection,
// reuses the connections in the next round, and reports each response.
func TestFireReportsEveryResponse(t *testing.T) {
	const n = 20
	var opened atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		time.Sleep(20 * time.Millisecond)
		w.Header().Set("Content-Length", "0")
		if r.Header.Get("X-Test") != "yes" || r.Header.Get("Content-Type") != "text/plain" || !strings.HasPrefix(string(body), "req-") {
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c := Start(t)
	target := HostOf(t, srv.URL)
	for round := range 2 {
		reqs := make([][]byte, n)
		for i := range reqs {
			reqs[i] = Request(target, "/x", "text/plain", map[string]string{"X-Test": "yes"}, []byte("req-"+string(rune('a'+i))))
		}
		start := time.Now()
		rep, err := c.Fire(Round{Set: "s", Targets: []string{target}, Reqs: reqs})
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > 350*time.Millisecond { // one after another: 400 ms
			t.Errorf("round %d took %s: the requests were not sent at once", round, took)
		}
		for i := range n {
			if rep.Err[i] != "" || rep.Status[i] != 200 {
				t.Fatalf("round %d request %d: HTTP %d %s", round, i, rep.Status[i], rep.Err[i])
			}
			// Call starts before the write, so it spans the whole 20 ms
			// handler; Lat starts once the write returned, by which time the
			// server may already be sleeping, so it is only bounded by Call.
			if rep.Call[i] < 20*time.Millisecond || rep.Lat[i] <= 0 || rep.Call[i] < rep.Lat[i] {
				t.Errorf("request %d: latency %s, call %s; the handler takes 20 ms", i, rep.Lat[i], rep.Call[i])
			}
		}
	}
	if got := opened.Load(); got != n {
		t.Errorf("%d connections for 2 rounds of %d requests, want %d kept alive", got, n, n)
	}
}
