package native_test

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/store/native"
	"github.com/stretchr/testify/require"
)

// rssFile is this process's file-backed resident memory (RssFile of
// /proc/self/status), in bytes.
func rssFile(t *testing.T) int64 {
	f, err := os.Open("/proc/self/status")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "RssFile:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}

// TestReadPagesAreHandedBack: reading the questions of a restarted store
// maps the data file's pages into the process; they are given back within
// the hand-back period, so a long-running bridge whose agents read their
// questions (parked waits, lists) does not end up with the whole file in
// its RSS. Before: the 12 MB read stayed resident (RssFile +24 MB after
// the period).
func TestReadPagesAreHandedBack(t *testing.T) {
	const n = 1500
	dir, ids, long := fillLong(t, n)

	// The period is longer than reading every question takes, so a read
	// through is rarely cut by a hand-back; if one is, read again.
	every := 1500 * time.Millisecond
	s := open(t, native.WithHandBack(native.Options{Dir: dir}, every))
	var before, read int64
	for range 3 {
		before = rssFile(t)
		for _, id := range ids {
			q, err := s.Get(ctx, "ops", id)
			require.NoError(t, err)
			require.Equal(t, long, q.Questions[0].Question)
		}
		if read = rssFile(t) - before; read > int64(n*4096) {
			break
		}
	}
	require.Greater(t, read, int64(n*4096), "reading the questions mapped their pages in (%d MB)", read>>20)
	require.Eventually(t, func() bool { return rssFile(t)-before < read/4 }, 3*every, every/10,
		"the pages read are given back (still %d of %d MB)", (rssFile(t)-before)>>20, read>>20)
	for _, id := range ids[:10] {
		q, err := s.Get(ctx, "ops", id)
		require.NoError(t, err, "a page given back reads again")
		require.Equal(t, long, q.Questions[0].Question)
	}
}

// fillLong writes n questions of about 7.8 KB each into a data directory
// and closes the store: every question fills about two pages of the file.
func fillLong(t testing.TB, n int) (dir string, ids []string, long string) {
	dir = t.TempDir()
	s := open(t, native.Options{Dir: dir})
	long = strings.Repeat("Why this matters: the migration rewrites every row. ", 150) // ~7.8 KB
	for range n {
		q := newQ("ops", "run")
		q.Questions[0].Question = long
		res, err := s.Create(ctx, q)
		require.NoError(t, err)
		ids = append(ids, res.Question.ID)
	}
	require.NoError(t, s.Close())
	return dir, ids, long
}

// TestManyReadPagesAreHandedBackBeforeThePeriodEnds: reads that map more
// of the data file than the hand-back cap are given back within about a
// second, not only when the period ends, so a burst of reads (tens of
// thousands of agents starting to wait, a client listing every question)
// does not hold the file in the RSS for the whole period. Before: with a
// period of an hour, the 12 MB read stayed resident.
func TestManyReadPagesAreHandedBackBeforeThePeriodEnds(t *testing.T) {
	const n, limit = 1500, 4 << 20
	dir, ids, long := fillLong(t, n)
	s := open(t, native.WithHandBackCap(native.WithHandBack(native.Options{Dir: dir}, time.Hour), limit))
	before := rssFile(t)
	for _, id := range ids {
		q, err := s.Get(ctx, "ops", id)
		require.NoError(t, err)
		require.Equal(t, long, q.Questions[0].Question)
	}
	require.Eventually(t, func() bool { return rssFile(t)-before < limit }, 5*time.Second, 50*time.Millisecond,
		"the pages read beyond the cap (%d MB) are given back (still %d MB)", limit>>20, (rssFile(t)-before)>>20)
}

// BenchmarkGetAfterHandBack is what a hand-back costs the reads after it:
// "warm" reads questions whose pages are mapped, "handedBack" gives every
// page back before each read (the worst case: each read maps its record's
// pages and the B+tree path to it again, minor faults from the page cache).
func BenchmarkGetAfterHandBack(b *testing.B) {
	dir, ids, _ := fillLong(b, 1500)
	s := open(b, native.WithHandBack(native.Options{Dir: dir}, time.Hour))
	for _, mode := range []string{"warm", "handedBack"} {
		b.Run(mode, func(b *testing.B) {
			i := 0
			for b.Loop() {
				if mode == "handedBack" {
					b.StopTimer()
					s.HandBack()
					b.StartTimer()
				}
				if _, err := s.Get(ctx, "ops", ids[i%len(ids)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
