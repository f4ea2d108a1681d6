// Command bench measures askbridge near its limits and prints each figure
// next to the floor measured in the same run (a bare HTTP round trip on
// loopback and Redis's own latency), as a ratio. See bench/README.md.
//
//	go run ./bench                 # everything
//	go run ./bench -only wake,mem  # some
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/store/storetest"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == wakeClientFlag {
		if err := runWakeClient(); err != nil {
			fmt.Fprintln(os.Stderr, "bench wake client:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type opts struct {
	only    map[string]bool
	rate    int
	secs    int
	waiters int
	memN    int
	memArgs []string

	embN       int
	embPending int

	abandonN      int
	lifeN         int
	lifeRetention time.Duration

	records      int
	scalePending int
	scaleSecs    int
	scaleStreams int
	scaleMCP     int
	scaleMCPKind string
	scaleMCPWin  int
	scaleParkWin int
	clickSecs    int
	bridgeEnv    []string
	scaleStores  string
}

func run() error {
	only := flag.String("only", "floor,ack,wake,asks,mem,waiters,resume,lifetimes,abandon", "comma-separated benchmarks (opt-in: embedded,scale,clicks)")
	o := opts{only: map[string]bool{}}
	flag.IntVar(&o.rate, "rate", 200, "click arrival rate per second for ack and wake")
	flag.IntVar(&o.secs, "secs", 10, "seconds of load for ack, wake and asks")
	flag.IntVar(&o.waiters, "waiters", 10000, "concurrent waiters for the waiters benchmark")
	flag.IntVar(&o.memN, "mem-n", 10000, "pending questions for the mem benchmark")
	flag.IntVar(&o.embN, "emb-n", 100000, "answered (retained) questions for the embedded benchmark")
	flag.IntVar(&o.embPending, "emb-pending", 5000, "pending questions for the embedded benchmark")
	flag.IntVar(&o.abandonN, "abandon-n", 2000, "long-polls closed by their clients for the abandon benchmark")
	flag.IntVar(&o.lifeN, "life-n", 100000, "questions asked and answered for the lifetimes benchmark")
	flag.DurationVar(&o.lifeRetention, "life-retention", 5*time.Second, "retention for the lifetimes benchmark")
	flag.IntVar(&o.records, "records", 100000, "questions kept for the scale benchmark (1000000: the million, embedded store only)")
	flag.IntVar(&o.scalePending, "scale-pending", 100000, "of -records, how many are pending (and waited on) in the scale benchmark; the rest are answered")
	flag.IntVar(&o.scaleSecs, "scale-secs", 5, "seconds of asks and of answers for each scale measurement")
	flag.IntVar(&o.scaleStreams, "scale-streams", 1000, "SSE streams opened in the scale benchmark, counted apart from the long-polls")
	flag.IntVar(&o.scaleMCP, "scale-mcp", 2000, "ask_user calls over MCP in the scale benchmark, of each kind of host, counted apart from the long-polls; 0 leaves them out")
	flag.StringVar(&o.scaleMCPKind, "scale-mcp-kinds", "", "the kinds of MCP host the scale benchmark measures, comma-separated (stateless,session,tasks); empty: all three")
	flag.IntVar(&o.scaleParkWin, "scale-park-window", 0, "long-polls the scale benchmark has written and not yet seen parked (the bridge's askbridge_waiters), at most; 0: every long-poll written at once (a burst)")
	flag.IntVar(&o.scaleMCPWin, "scale-mcp-window", 0, "blocking MCP calls the scale benchmark's hosts have written and not yet seen parked (their response head), at most; 0: every call written at once (a burst)")
	flag.IntVar(&o.clickSecs, "click-secs", 5, "seconds of clicks at each rate in the scale benchmark's click to resume (f); 0 leaves (f) out")
	flag.StringVar(&o.scaleStores, "scale-stores", "", "the scale benchmark's stores, comma-separated (embedded,redis); empty: both")
	bridgeEnv := flag.String("bridge-env", "", "extra environment of the scale benchmark's bridge process, e.g. \"GOMEMLIMIT=450MiB\"")
	memArgs := flag.String("mem-redis-args", "", "extra redis-server arguments for the mem benchmark, e.g. \"--hash-max-listpack-value 1024\"")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (client, bridge and fakes in this process) to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	o.memArgs = strings.Fields(*memArgs)
	o.bridgeEnv = strings.Fields(*bridgeEnv)
	for _, s := range strings.Split(*only, ",") {
		o.only[strings.TrimSpace(s)] = true
	}
	dir, err := os.MkdirTemp("", "askbridge-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rs, err := storetest.StartServer(dir)
	if err != nil {
		return err
	}
	defer rs.Kill()
	fmt.Printf("askbridge bench — %s, GOMAXPROCS=%d, redis %s\n\n", time.Now().UTC().Format(time.RFC3339), numCPU(), redisVersion(rs))

	httpFloor, err := floorHTTP(o)
	if err != nil {
		return err
	}
	redisFloor, cliLine, err := floorRedis(rs)
	if err != nil {
		return err
	}
	fmt.Printf("floor  bare HTTP round trip on loopback at %d req/s: p50 %s  p99 %s\n", o.rate, ms(httpFloor.p50), ms(httpFloor.p99))
	fmt.Printf("floor  Redis PING round trip (go-redis): p50 %s  p99 %s; redis-cli --latency: %s\n\n", ms(redisFloor.p50), ms(redisFloor.p99), cliLine)
	floor := lat{p50: httpFloor.p50 + redisFloor.p50, p99: httpFloor.p99 + redisFloor.p99}

	if o.only["ack"] {
		if err := benchAck(rs, o, httpFloor); err != nil {
			return fmt.Errorf("ack: %w", err)
		}
	}
	if o.only["wake"] {
		if err := benchWake(rs, o, floor); err != nil {
			return fmt.Errorf("wake: %w", err)
		}
	}
	if o.only["asks"] {
		if err := benchAsks(rs, o, floor); err != nil {
			return fmt.Errorf("asks: %w", err)
		}
	}
	if o.only["mem"] {
		if err := benchMem(dir, o); err != nil {
			return fmt.Errorf("mem: %w", err)
		}
	}
	if o.only["resume"] {
		if err := benchResume(rs, o); err != nil {
			return fmt.Errorf("resume: %w", err)
		}
	}
	if o.only["abandon"] {
		if err := benchAbandon(rs, o); err != nil {
			return fmt.Errorf("abandon: %w", err)
		}
	}
	if o.only["lifetimes"] {
		if err := benchLifetimes(dir, o); err != nil {
			return fmt.Errorf("lifetimes: %w", err)
		}
	}
	if o.only["embedded"] {
		if err := benchEmbedded(rs, dir, o); err != nil {
			return fmt.Errorf("embedded: %w", err)
		}
	}
	if o.only["scale"] {
		if err := benchScale(dir, o); err != nil {
			return fmt.Errorf("scale: %w", err)
		}
	}
	if o.only["clicks"] || o.only["scale"] && o.records <= 100_000 && o.clickSecs > 0 {
		if err := benchClicks(o); err != nil {
			return fmt.Errorf("clicks: %w", err)
		}
	}
	if o.only["waiters"] {
		if err := benchWaiters(rs, o); err != nil {
			return fmt.Errorf("waiters: %w", err)
		}
	}
	return nil
}

func numCPU() int {
	return int(must(strconv.Atoi(strings.TrimSpace(envOr("GOMAXPROCS", fmt.Sprint(runtimeCPU()))))))
}

func must[T any](v T, _ error) T { return v }

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

func redisVersion(rs *storetest.Server) string {
	out, _ := rs.Cli("info", "server")
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "redis_version:"); ok {
			return v
		}
	}
	return "?"
}
