package native_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store/native"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestChangesMadeOnTopOfAFailedCommitAreTakenBack: an ask made while an
// answer's commit is under way is made on top of it; when that commit
// fails, both are refused and neither is anywhere.
func TestChangesMadeOnTopOfAFailedCommitAreTakenBack(t *testing.T) {
	f := &faults{}
	dir := t.TempDir()
	s := open(t, native.Options{Dir: dir, CommitHook: f.hook})
	p := "ops"
	q := newQ(p, "run-1")
	_, err := s.Create(ctx, q)
	require.NoError(t, err)

	held, release := f.holdCommits(t)
	answered := make(chan error, 1)
	go func() {
		_, err := s.Transition(ctx, p, q.ID, answer("alice"))
		answered <- err
	}()
	<-held
	next := newQ(p, "run-1") // supersedes q in memory: made on top of the answer
	asked := make(chan error, 1)
	go func() {
		_, err := s.Create(ctx, next)
		asked <- err
	}()
	require.Eventually(t, func() bool { return s.Queued() >= 1 }, 5*time.Second, 5*time.Millisecond)
	f.fail(dir)(t)
	release()
	assert.Equal(t, domain.EUnavailable, domain.ErrorCode(<-answered))
	assert.Equal(t, domain.EUnavailable, domain.ErrorCode(<-asked))

	got, err := s.Get(ctx, p, q.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusPending, got.Status, "the answer whose commit failed was taken back")
	_, err = s.Get(ctx, p, next.ID)
	assert.Equal(t, domain.ENotFound, domain.ErrorCode(err), "the ask made on top of it was taken back too")
}

// TestDiskFullSaysSoAndRecovers: a commit that fails with ENOSPC makes the
// store unready with the words "the disk holding DIR is full" (the path
// only in the log's words, not in what /readyz shows), and ready again by
// itself once writes succeed.
func TestDiskFullSaysSoAndRecovers(t *testing.T) {
	f := &faults{}
	dir := t.TempDir()
	s := open(t, native.Options{Dir: dir, CommitHook: f.hook})
	q := newQ("ops", "run-1")
	_, err := s.Create(ctx, q)
	require.NoError(t, err)

	heal := f.fail(dir)(t)
	_, err = s.Transition(ctx, "ops", q.ID, answer("alice"))
	require.Error(t, err)
	var shown *domain.Error
	require.True(t, errors.As(err, &shown))
	assert.Equal(t, "the store is unavailable; try again in a moment", shown.Message, "what an API caller is told")
	ping := s.Ping(ctx)
	require.Error(t, ping, "not ready while writes fail")
	assert.Contains(t, ping.Error(), "the disk holding "+dir+" is full")
	var r interface{ Readiness() string }
	require.True(t, errors.As(ping, &r), "%v", ping)
	assert.Equal(t, "the disk holding the data directory is full", r.Readiness())
	time.Sleep(1500 * time.Millisecond) // a probe or two fail meanwhile
	require.Error(t, s.Ping(ctx), "still not ready while writes still fail")

	heal()
	require.Eventually(t, func() bool { return s.Ping(ctx) == nil }, 10*time.Second, 50*time.Millisecond,
		"ready again by itself once writes succeed")
	_, err = s.Transition(ctx, "ops", q.ID, answer("alice"))
	require.NoError(t, err, "changes are taken again without a restart")
}

// TestDiskFullOnARealFileSystem fills a real 8 MiB tmpfs under a running
// store: the ask whose commit failed is nowhere, the store says the disk is
// full, and once space is freed it takes changes again without a restart;
// what it acknowledged survives a reopen. It needs to mount a file system
// (root), and is skipped otherwise.
func TestDiskFullOnARealFileSystem(t *testing.T) {
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", mnt).Run() })
	dir := filepath.Join(mnt, "data")
	s, err := native.Open(native.Options{Dir: dir})
	require.NoError(t, err)
	defer s.Close()
	p := "ops"
	var ids []string
	for i := range 40 {
		q := newQ(p, fmt.Sprintf("run-%d", i))
		_, err := s.Create(ctx, q)
		require.NoError(t, err)
		ids = append(ids, q.ID)
	}
	filler := filepath.Join(mnt, "filler")
	fill(t, filler)

	var refused *domain.Question // an ask whose commit failed
	for i := 0; i < 200 && refused == nil; i++ {
		q := newQ(p, fmt.Sprintf("more-%d", i))
		q.Context = strings.Repeat("x", 4000)
		if _, err := s.Create(ctx, q); err != nil {
			assert.Equal(t, domain.EUnavailable, domain.ErrorCode(err), "%v", err)
			refused = q
		}
	}
	require.NotNil(t, refused, "no write failed on a full disk")
	_, err = s.Get(ctx, p, refused.ID)
	assert.Equal(t, domain.ENotFound, domain.ErrorCode(err), "the ask whose commit failed is nowhere")
	_, err = s.Transition(ctx, p, ids[0], answer("alice"))
	assert.Equal(t, domain.EUnavailable, domain.ErrorCode(err), "changes are refused while the disk is full")
	got, err := s.Get(ctx, p, ids[0])
	require.NoError(t, err)
	assert.Equal(t, domain.StatusPending, got.Status)
	ping := s.Ping(ctx)
	require.Error(t, ping)
	assert.Contains(t, ping.Error(), "the disk holding "+dir+" is full")

	require.NoError(t, os.Remove(filler))
	require.Eventually(t, func() bool { return s.Ping(ctx) == nil }, 10*time.Second, 50*time.Millisecond,
		"ready again by itself once space is freed")
	_, err = s.Transition(ctx, p, ids[0], answer("alice"))
	require.NoError(t, err)
	require.NoError(t, s.Close())

	again, err := native.Open(native.Options{Dir: dir})
	require.NoError(t, err)
	defer again.Close()
	got, err = again.Get(ctx, p, ids[0])
	require.NoError(t, err)
	assert.Equal(t, domain.StatusAnswered, got.Status, "what was acknowledged survives")
	_, err = again.Get(ctx, p, refused.ID)
	assert.Equal(t, domain.ENotFound, domain.ErrorCode(err))
}

// fill writes path until the file system is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			require.True(t, errors.Is(err, syscall.ENOSPC), "%v", err)
			return
		}
	}
}

// TestReadersAnswerAfterAFailedCommit: after a failed commit that
// registered a project and marked a key, the project list, the marks and
// the backlog answer at once (nothing they read waits for a commit that
// will not come while changes are refused).
func TestReadersAnswerAfterAFailedCommit(t *testing.T) {
	f := &faults{}
	dir := t.TempDir()
	s := open(t, native.Options{Dir: dir, CommitHook: f.hook})
	held, release := f.holdCommits(t)
	asked := make(chan error, 1)
	go func() {
		_, err := s.Create(ctx, newQ("fresh", "run-1"))
		asked <- err
	}()
	<-held
	first, err := s.Once(ctx, "mark-1", time.Hour) // queued behind the ask
	require.NoError(t, err)
	require.True(t, first)
	f.fail(dir)(t)
	release()
	require.Error(t, <-asked)

	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	ps, err := s.Projects(short)
	require.NoError(t, err, "the project list answers")
	assert.NotContains(t, ps, "fresh", "the project whose first ask failed is not listed")
	marked, err := s.Marked(short, "mark-1")
	require.NoError(t, err, "the marks answer")
	assert.False(t, marked, "the mark whose commit failed is not kept")
	_, err = s.Backlog(short)
	require.NoError(t, err, "the backlog answers")
}
