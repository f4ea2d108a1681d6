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
	dir := t.TempDir()
	s := open(t, native.Options{Dir: dir})
	const n = 1500
	long := strings.Repeat("Why this matters: the migration rewrites every row. ", 150) // ~7.8 KB
	var ids []string
	for range n {
		q := newQ("ops", "run")
		q.Questions[0].Question = long
		res, err := s.Create(ctx, q)
		require.NoError(t, err)
		ids = append(ids, res.Question.ID)
	}
	require.NoError(t, s.Close())

	// The period is longer than reading every question takes, so a read
	// through is rarely cut by a hand-back; if one is, read again.
	every := 1500 * time.Millisecond
	s = open(t, native.WithHandBack(native.Options{Dir: dir}, every))
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
