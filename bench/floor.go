package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"github.com/askbridge/askbridge/store/storetest"
	"github.com/redis/go-redis/v9"
)

// floorHTTP is a bare HTTP POST round trip on loopback (a handler that
// reads the body and answers 200) at the same arrival rate as the clicks.
func floorHTTP(o opts) (lat, error) {
	srv, err := serve(bareHandler)
	if err != nil {
		return lat{}, err
	}
	defer srv.Close()
	ls, err := bareRoundTrips(srv.URL, o.rate, 0, time.Duration(min(o.secs, 5))*time.Second)
	return percentiles(ls), err
}

// bareHandler is the floor's server: it reads the body and answers 200.
var bareHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.WriteHeader(200)
})

// bareRoundTrips posts 1,500 bytes to u at rate: for warm unmeasured,
// then for d measured (see atRate).
func bareRoundTrips(u string, rate int, warm, d time.Duration) ([]time.Duration, error) {
	c := client(256)
	body := bytes.Repeat([]byte("x"), 1500)
	return atRate(rate, warm, d, func(int) (time.Duration, error) {
		t := time.Now()
		res, err := c.Post(u, "application/x-www-form-urlencoded", bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return time.Since(t), nil
	})
}

// atRate calls f open-loop at rate for warm without keeping the figures,
// then for d, and returns the latencies of the second part. The warm-up
// keeps a fresh process's first calls (connections, stacks, heap) from
// being a floor's slowest 1 %, which would raise the floor.
func atRate(rate int, warm, d time.Duration, f func(int) (time.Duration, error)) ([]time.Duration, error) {
	if warm > 0 {
		if _, _, err := openLoop(rate, warm, f); err != nil {
			return nil, err
		}
	}
	ls, _, err := openLoop(rate, d, f)
	return ls, err
}

// floorRedis is a PING round trip through go-redis, and redis-cli --latency.
func floorRedis(rs *storetest.Server) (lat, string, error) {
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rdb.Close()
	ctx := context.Background()
	var ls []time.Duration
	for range 5000 {
		t := time.Now()
		if err := rdb.Ping(ctx).Err(); err != nil {
			return lat{}, "", err
		}
		ls = append(ls, time.Since(t))
	}
	line := "(redis-cli not installed)"
	if storetest.HaveRedisCli() {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		out, _ := exec.CommandContext(cctx, "redis-cli", "-p", fmt.Sprint(rs.Port), "--latency", "--raw").Output()
		line = lastLine(string(out)) + " (min max avg ms, samples; 5 s)"
	}
	return percentiles(ls), line, nil
}

// pingAtRate is a PING round trip through go-redis at the click rate for
// 5 s (after 1 s unmeasured), from the bridge's process: the path's Redis
// round trips come at that rate, each after an idle gap, not back to back
// as in floorRedis.
func pingAtRate(rs *storetest.Server, rate int) ([]time.Duration, error) {
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rdb.Close()
	return atRate(rate, time.Second, 5*time.Second, func(int) (time.Duration, error) {
		t := time.Now()
		err := rdb.Ping(context.Background()).Err()
		return time.Since(t), err
	})
}

func lastLine(s string) string {
	ls := strings.Split(strings.TrimSpace(strings.ReplaceAll(s, "\r", "\n")), "\n")
	return strings.TrimSpace(ls[len(ls)-1])
}
