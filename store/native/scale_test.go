package native_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store/native"
	"github.com/google/uuid"
)

// BenchmarkScale measures the embedded store at scale, once per run
// (-benchtime 1x): a durable store filled to NATIVE_SCALE_N records
// (default 100,000; 15 % pending, the rest answered: one item, two options
// with descriptions, a context line, one posted Slack copy, a run each, as
// an agent asks through the API) reports
//
//   - heap-B/rec: Go heap in use per kept record, right after the fill and
//     after a restart (what the process holds for the records);
//
//   - restart-s: Open of the filled data directory (load and indexes),
//     which is what a bridge does before /readyz answers;
//
//   - file-B/rec: bytes of the data file per record;
//
//   - asks/s at 1,000 records and at N, the same run, 16 callers creating
//     questions through the store, and their ratio (target ≥ 0.9).
//
//     NATIVE_SCALE_N=100000 go test ./store/native -run '^$' -bench Scale -benchtime 1x
func BenchmarkScale(b *testing.B) {
	n := 100000
	if v, err := strconv.Atoi(os.Getenv("NATIVE_SCALE_N")); err == nil && v > 0 {
		n = v
	}
	if os.Getenv("NATIVE_SCALE_HEAPPROFILE") != "" {
		runtime.MemProfileRate = 1024
	}
	for range b.N {
		scaleOnce(b, n)
	}
}

func scaleOnce(b *testing.B, n int) {
	base, baseLive := heapInUse(), liveHeap()
	small, err := native.Open(native.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	scaleFill(b, small, "team", 0, 1000)
	dir := b.TempDir()
	s, err := native.Open(native.Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	scaleFill(b, s, "team", 0, n)
	// Asks/s on the large store right after its fill and on the small one,
	// in turns (the disk's speed drifts on a shared machine): the medians.
	if f := os.Getenv("NATIVE_SCALE_ASKPROFILE"); f != "" {
		if out, err := os.Create(f); err == nil {
			_ = pprof.StartCPUProfile(out)
			defer out.Close()
		}
	}
	var atN, at1k []float64
	for range 3 {
		atN = append(atN, askRate(b, s, "asksN", 1000))
		at1k = append(at1k, askRate(b, small, "asks1k", 1000))
	}
	pprof.StopCPUProfile()
	_ = small.Close()
	kept := n + 3000 // the asks above are kept too
	heapFill := float64(heapInUse()-base) / float64(kept)
	liveFill := float64(liveHeap()-baseLive) / float64(kept)
	file, inUse := s.DiskUsage()
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	base, baseLive = heapInUse(), liveHeap()
	if f := os.Getenv("NATIVE_SCALE_CPUPROFILE"); f != "" { // the restart
		if out, err := os.Create(f); err == nil {
			_ = pprof.StartCPUProfile(out)
			defer out.Close()
		}
	}
	t0, cpu0 := time.Now(), cpuTime()
	s, err = native.Open(native.Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	restart, restartCPU := time.Since(t0), cpuTime()-cpu0
	pprof.StopCPUProfile()
	heapRestart := float64(heapInUse()-base) / float64(kept)
	liveRestart := float64(liveHeap()-baseLive) / float64(kept)
	if f := os.Getenv("NATIVE_SCALE_HEAPPROFILE"); f != "" { // the heap after the restart
		if out, err := os.Create(f); err == nil {
			_ = pprof.WriteHeapProfile(out)
			_ = out.Close()
		}
	}
	after := askRate(b, s, "asksR", 1000)
	_ = s.Close()
	restarts := []time.Duration{restart} // twice more: the machine's load varies
	for range 2 {
		t0 := time.Now()
		s, err = native.Open(native.Options{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		restarts = append(restarts, time.Since(t0))
		_ = s.Close()
	}
	slices.Sort(restarts)
	fresh := freshOpen(b, dir)
	rN, r1k := median(atN), median(at1k)
	b.ReportMetric(heapFill, "heap-B/rec-filled")
	b.ReportMetric(heapRestart, "heap-B/rec-restarted")
	b.ReportMetric(liveFill, "live-B/rec-filled")
	b.ReportMetric(liveRestart, "live-B/rec-restarted")
	b.ReportMetric(restarts[0].Seconds(), "restart-s")
	b.ReportMetric(restartCPU.Seconds(), "restart-cpu-s")
	b.ReportMetric(float64(file)/float64(kept), "file-B/rec")
	b.ReportMetric(fresh.open.Seconds(), "fresh-open-s")
	b.ReportMetric(fresh.cpu.Seconds(), "fresh-open-cpu-s")
	b.ReportMetric(float64(fresh.anon)/(1<<20), "fresh-rss-anon-MB")
	b.ReportMetric(float64(fresh.file)/(1<<20), "fresh-rss-file-MB")
	b.ReportMetric(r1k, "asks/s-1k")
	b.ReportMetric(rN, "asks/s-N")
	b.ReportMetric(rN/r1k, "ratio")
	fmt.Printf("embedded store, %d records (15%% pending): heap in use %.0f B/record after the fill, %.0f B/record after a restart "+
		"(target ≤ 1024; live objects %.0f and %.0f B/record); restart (Open) %s, fastest of %s, %s of CPU (target ≤ 2 s at 100k, ≤ 10 s at 1M); "+
		"data file %d MB (%d MB in use), %.0f B/record; asks/s at 1,000 records %.0f, at %d right after the fill %.0f "+
		"(medians of 3 turns: %.0f and %.0f; ratio %.2f, target ≥ 0.9), after the restart %.0f\n",
		kept, heapFill, heapRestart, liveFill, liveRestart, restarts[0], durations(restarts), restartCPU.Round(time.Millisecond), file>>20, inUse>>20,
		float64(file)/float64(kept), r1k, n, rN, at1k, atN, rN/r1k, after)
	fmt.Printf("  a fresh process opening it (as a restarted bridge): Open %s, %s of CPU; RSS %d MB once open (%d MB anonymous: "+
		"Go heap %d MB in use, %d MB live, goal %d MB; %d MB of the mapped data file, clean pages the kernel can reclaim)\n",
		fresh.open.Round(time.Millisecond), fresh.cpu.Round(time.Millisecond), (fresh.anon+fresh.file)>>20, fresh.anon>>20, fresh.heapInUse>>20, fresh.live>>20, fresh.goal>>20, fresh.file>>20)
}

// opened is what a fresh process measured once it opened a data
// directory (TestScaleFreshOpen).
type opened struct {
	open, cpu             time.Duration
	anon, file            int64 // RssAnon, RssFile (bytes)
	heapInUse, live, goal int64
}

// freshOpen opens dir in a new process (this test binary running
// TestScaleFreshOpen), as a restarted bridge does, so the RSS is the
// store's alone and not what this process's fill left.
func freshOpen(b *testing.B, dir string) opened {
	cmd := exec.Command(os.Args[0], "-test.run=^TestScaleFreshOpen$", "-test.count=1")
	cmd.Env = append(os.Environ(), "NATIVE_SCALE_OPEN_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("the fresh process: %v\n%s", err, out)
	}
	var o opened
	var ns, cpu int64
	for _, l := range strings.Split(string(out), "\n") {
		if _, err := fmt.Sscanf(l, "opened %d %d %d %d %d %d %d", &ns, &cpu, &o.anon, &o.file, &o.heapInUse, &o.live, &o.goal); err == nil {
			o.open, o.cpu = time.Duration(ns), time.Duration(cpu)
			return o
		}
	}
	b.Fatalf("the fresh process printed no figures:\n%s", out)
	return o
}

// TestScaleFreshOpen is BenchmarkScale's fresh process: it opens
// NATIVE_SCALE_OPEN_DIR and prints the time Open took, RssAnon, RssFile,
// the Go heap in use, live after a collection, and the heap goal, once
// what Open left running has settled. Skipped otherwise.
func TestScaleFreshOpen(t *testing.T) {
	dir := os.Getenv("NATIVE_SCALE_OPEN_DIR")
	if dir == "" {
		t.Skip("BenchmarkScale's helper")
	}
	t0, cpu0 := time.Now(), cpuTime()
	s, err := native.Open(native.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	took, cpu := time.Since(t0), cpuTime()-cpu0
	defer s.Close()
	time.Sleep(2 * time.Second)
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	anon, file := procRSS()
	var live runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&live)
	fmt.Printf("opened %d %d %d %d %d %d %d\n", took.Nanoseconds(), cpu.Nanoseconds(), anon, file, m.HeapInuse, live.HeapAlloc, live.NextGC)
}

// procRSS is this process's resident anonymous and file-backed memory.
func procRSS() (anon, file int64) {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "RssAnon:":
			anon = n << 10
		case "RssFile:":
			file = n << 10
		}
	}
	return anon, file
}

// cpuTime is the CPU time this process used so far (user and system):
// what a restart costs whatever else the machine runs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func durations(ds []time.Duration) string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond).String()
	}
	return strings.Join(out, ", ")
}

// heapInUse is the Go heap in use (spans holding live objects), after a
// collection; liveHeap the bytes of live objects alone.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// scaleQuestion is a realistic question as an agent asks it through the API.
func scaleQuestion(p string, i int) *domain.Question {
	now := time.Now().UTC()
	items := []domain.Item{{Question: fmt.Sprintf("Deploy build %d of api-server to production?", i), Header: "Deploy",
		Options: []domain.Option{{Label: "Ship it", Description: "Roll out to all regions", Value: "ship"},
			{Label: "Hold", Description: "Keep the current version", Value: "hold"}}}}
	return &domain.Question{ID: domain.NewQuestionID(p), ProjectID: p, RunID: "run-" + uuid.NewString()[:8], AgentID: "deploy-bot",
		AgentName: "Deploy bot", Kind: domain.KindQuestion, Status: domain.StatusPending, Questions: items,
		Context:   "CI passed on main (commit 3f2a9c1). Canary error rate 0.02%.",
		Targets:   []domain.Target{{Platform: "slack", Channel: "C0123ABCD"}},
		CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour), Fingerprint: domain.Fingerprint(items)}
}

// scaleAsk creates q, attaches its Slack copy and, when answer, answers it.
func scaleAsk(ctx context.Context, s lifecycle.Store, q *domain.Question, answer bool) error {
	if _, err := s.Create(ctx, q); err != nil {
		return err
	}
	t := q.Targets[0]
	t.MessageTS, t.URL = "1700000000.000100", "https://example.slack.com/archives/C0123ABCD/p1700000000000100"
	if err := s.AttachCopy(ctx, q.ProjectID, q.ID, t); err != nil {
		return err
	}
	if !answer {
		return nil
	}
	a := domain.Resolve(q.Questions, [][]string{{"ship"}})
	_, err := s.Transition(ctx, q.ProjectID, q.ID, lifecycle.Transition{To: domain.StatusAnswered, Answer: &a,
		By: &domain.Person{Platform: "slack", ID: "U1", Name: "Alice"}, At: time.Now().UTC()})
	return err
}

// scaleFill keeps n more records in project p, 15 % of them pending.
func scaleFill(b *testing.B, s lifecycle.Store, p string, from, n int) {
	ctx := context.Background()
	sem := make(chan struct{}, 256)
	var wg sync.WaitGroup
	var failed atomic.Value
	for i := from; i < from+n; i++ {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := scaleAsk(ctx, s, scaleQuestion(p, i), i%20 >= 3); err != nil {
				failed.CompareAndSwap(nil, err)
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
}

// askRate is asks/s of 16 callers asking n questions in project p, each
// created and its Slack copy attached (as an ask through the API).
func askRate(b *testing.B, s *native.Store, p string, n int) float64 {
	ctx := context.Background()
	c0, w0, t0w := s.WriteStats()
	defer func() {
		c1, w1, t1w := s.WriteStats()
		if os.Getenv("NATIVE_SCALE_VERBOSE") != "" {
			fmt.Printf("  %s: %d commits, %.1f pages written per commit, %s writing each\n", p, c1-c0, float64(w1-w0)/float64(c1-c0), (t1w-t0w)/time.Duration(c1-c0))
		}
	}()
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	t0 := time.Now()
	for range 16 {
		wg.Go(func() {
			for {
				i := int(next.Add(1))
				if i > n {
					return
				}
				if err := scaleAsk(ctx, s, scaleQuestion(p, i), false); err != nil {
					failed.CompareAndSwap(nil, err)
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return float64(n) / time.Since(t0).Seconds()
}
