// The harness shared by the benchmarks: latency statistics, the open-loop
// driver, HTTP clients and servers, and bridge replicas built by app.New.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/app"
)

type lat struct{ p50, p99, max time.Duration }

func percentiles(ds []time.Duration) lat {
	if len(ds) == 0 {
		return lat{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(p int) time.Duration { return s[min(max((len(s)*p+99)/100-1, 0), len(s)-1)] }
	return lat{p50: at(50), p99: at(99), max: s[len(s)-1]}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1fx", float64(a)/float64(b))
}

func verdict(ok bool) string {
	if ok {
		return "MET"
	}
	return "MISSED"
}

// openLoop calls f at rate per second for d, each call in its own
// goroutine (arrivals do not wait for earlier calls), and returns the
// latencies f reports.
func openLoop(rate int, d time.Duration, f func(i int) (time.Duration, error)) ([]time.Duration, int, error) {
	n := int(d.Seconds() * float64(rate))
	interval := time.Second / time.Duration(rate)
	out := make([]time.Duration, n)
	var failed atomic.Int32
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
			time.Sleep(wait)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := f(i)
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err)
				return
			}
			out[i] = l
		}()
	}
	wg.Wait()
	if e, _ := firstErr.Load().(error); e != nil {
		return nil, int(failed.Load()), e
	}
	return out, 0, nil
}

func client(conns int) *http.Client {
	return &http.Client{Timeout: 3 * time.Minute, Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: 0}}
}

// server is an HTTP server on a loopback port.
type server struct {
	URL string
	srv *http.Server
}

func serve(h http.Handler) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &server{URL: "http://" + ln.Addr().String(), srv: &http.Server{Handler: h}}
	go s.srv.Serve(ln)
	return s, nil
}

func (s *server) Close() { s.srv.Close() }

// replica is one bridge in this process, built by app.New as `bridge
// serve` builds it, with its Slack adapter pointed at a fake Slack.
type replica struct {
	app    *app.App
	router *lifecycle.Router
	web    *server
	stop   context.CancelFunc
	done   chan error
}

const signingSecret = "bench-signing-secret"

func newReplica(redisURL string, fake *fakeslack.Server) (*replica, error) {
	s := app.Settings{Addr: "127.0.0.1:0", RedisURL: redisURL}
	if fake != nil {
		s.Slack = slack.Config{BotToken: fake.BotToken, SigningSecret: signingSecret, APIURL: fake.APIURL()}
	}
	return startReplica(s)
}

// startReplica builds a bridge from s and runs it until Close.
func startReplica(s app.Settings) (*replica, error) {
	a, err := app.New(context.Background(), s)
	if err != nil {
		return nil, err
	}
	addr, err := a.Listen()
	if err != nil {
		_ = a.Close(context.Background())
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	r := &replica{app: a, router: a.Router(), web: &server{URL: "http://" + addr.String()}, stop: stop, done: make(chan error, 1)}
	go func() { r.done <- a.Run(ctx) }()
	return r, nil
}

func (r *replica) Close() {
	r.stop()
	<-r.done
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = r.app.Close(ctx)
}

func postJSON(c *http.Client, u string, body any) (int, map[string]any, error) {
	b, _ := json.Marshal(body)
	res, err := c.Post(u, "application/json", bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out, nil
}
