package native

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/stretchr/testify/require"
)

// fileMeta is the data file's current header.
func fileMeta(t *testing.T, dir string) meta {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, FileName))
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	m, what := (&verifier{f: f, size: st.Size()}).header()
	require.Empty(t, what)
	return m
}

// TestCloseKeepsTheFreePages: a store closed cleanly leaves the list of
// its free pages in the file, so the next start reads that list instead
// of walking every page of the file to find them; a change made after
// the start takes the list out of the file again (commits do not write
// it), so a start after a crash walks the file as before.
func TestCloseKeepsTheFreePages(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, Retention: time.Millisecond})
	require.NoError(t, err)
	p := "ops"
	for range 300 {
		items := []domain.Item{{Question: "Deploy?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}}}
		now := time.Now().UTC()
		q := &domain.Question{ID: domain.NewQuestionID(p), ProjectID: p, RunID: "r", AgentID: "bot", Kind: domain.KindQuestion,
			Status: domain.StatusPending, Questions: items, Targets: []domain.Target{}, CreatedAt: now, UpdatedAt: now,
			ExpiresAt: now.Add(time.Hour), Fingerprint: domain.Fingerprint(items)}
		_, err := s.Create(ctx, q)
		require.NoError(t, err)
		_, err = s.Transition(ctx, p, q.ID, lifecycle.Transition{To: domain.StatusCancelled, CancelReason: "no", At: now, Retention: time.Millisecond})
		require.NoError(t, err)
	}
	time.Sleep(5 * time.Millisecond)
	_, err = s.Trim(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	file, inUse := s.DiskUsage()
	require.Less(t, inUse, file, "retention freed pages")
	require.NoError(t, s.Close())

	require.NotEqual(t, uint64(noFreelist), fileMeta(t, dir).freelist, "the list of free pages is in the file after a clean close")
	require.NoError(t, Verify(filepath.Join(dir, FileName)))
	s, err = Open(Options{Dir: dir, CompactAbove: 1 << 30})
	require.NoError(t, err)
	defer s.Close()
	file2, inUse2 := s.DiskUsage()
	require.Equal(t, file, file2)
	require.InDelta(t, inUse, inUse2, 4*4096, "the free pages read from the list are those the store had (%d, then %d bytes in use)", inUse, inUse2)
	_, err = s.PauseRun(ctx, p, "r", "bot", time.Now())
	require.NoError(t, err)
	require.NoError(t, s.Sync())
	require.Equal(t, uint64(noFreelist), fileMeta(t, dir).freelist, "a later change takes the list out of the file")
}

// TestVerifyCountsKeys: the key counts a start sizes its maps from are
// those of the file, per bucket and project.
func TestVerifyCountsKeys(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir})
	require.NoError(t, err)
	want := map[string]int{"ops": 700, "web": 3}
	for p, n := range want {
		for range n {
			items := []domain.Item{{Question: "Deploy?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}}}
			now := time.Now().UTC()
			q := &domain.Question{ID: domain.NewQuestionID(p), ProjectID: p, RunID: "r-" + domain.NewQuestionID(p), AgentID: "bot",
				Kind: domain.KindQuestion, Status: domain.StatusPending, Questions: items, Targets: []domain.Target{},
				CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour), Fingerprint: domain.Fingerprint(items)}
			_, err := s.Create(ctx, q)
			require.NoError(t, err)
		}
	}
	require.NoError(t, s.Close())
	got, err := verifyCounting(filepath.Join(dir, FileName), true)
	require.NoError(t, err)
	for p, n := range want {
		require.Equal(t, n, got["q"][p], "questions of %s", p)
		require.Equal(t, n, got["run"][p], "runs of %s", p)
	}
	require.Len(t, got["q"], len(want))
}
