package native_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/askbridge/askbridge/store/native"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// filled writes a data file with n questions, half of them answered, and
// returns its directory.
func filled(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	s, err := native.Open(native.Options{Dir: dir})
	require.NoError(t, err)
	for i := range n {
		q := newQ("ops", fmt.Sprintf("run-%d", i))
		_, err := s.Create(ctx, q)
		require.NoError(t, err)
		if i%2 == 0 {
			_, err = s.Transition(ctx, "ops", q.ID, answer("alice"))
			require.NoError(t, err)
		}
	}
	require.NoError(t, s.Close())
	return dir
}

// copyDir copies the data file of src into a new directory.
func copyDir(t *testing.T, src string) (dir, path string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(src, native.FileName))
	require.NoError(t, err)
	dir = t.TempDir()
	path = filepath.Join(dir, native.FileName)
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return dir, path
}

// rootPage is the page where the questions' tree starts.
func rootPage(t *testing.T, path string) int64 {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	require.NoError(t, err)
	defer db.Close()
	var root int64
	require.NoError(t, db.View(func(tx *bolt.Tx) error {
		root = int64(tx.Bucket([]byte("q")).Root())
		return nil
	}))
	require.NotZero(t, root, "the questions fill pages of their own")
	return root * int64(os.Getpagesize())
}

// TestDamagedDataFileRefusedWithoutACrash: a data file cut to half, cut to
// 8 KiB, with 200 bytes flipped in the questions' tree, or empty is
// refused at start with an error naming the file, what is wrong and what
// to do; the store never panics or crashes on it, and leaves it as it
// was.
func TestDamagedDataFileRefusedWithoutACrash(t *testing.T) {
	src := filled(t, 400)
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
		want   []string
	}{
		{"cut to half", func(t *testing.T, path string) {
			st, err := os.Stat(path)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(path, st.Size()/2))
		}, []string{"is damaged", "it was cut short", "Restore the last backup", "move it aside"}},
		{"cut to 8 KiB", func(t *testing.T, path string) {
			require.NoError(t, os.Truncate(path, 8<<10))
		}, []string{"is damaged", "it was cut short", "Restore the last backup", "move it aside"}},
		{"200 bytes flipped", func(t *testing.T, path string) {
			at := rootPage(t, path) + 100
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			require.NoError(t, err)
			defer f.Close()
			b := make([]byte, 200)
			_, err = f.ReadAt(b, at)
			require.NoError(t, err)
			for i := range b {
				b[i] ^= 0xA5
			}
			_, err = f.WriteAt(b, at)
			require.NoError(t, err)
		}, []string{"is damaged", "damaged page", "Restore the last backup", "move it aside"}},
		{"empty", func(t *testing.T, path string) {
			require.NoError(t, os.Truncate(path, 0))
		}, []string{"is empty (0 bytes)", "the bridge never leaves an empty data file", "Restore the last backup", "delete it to start with an empty store"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, path := copyDir(t, src)
			tc.damage(t, path)
			before, err := os.ReadFile(path)
			require.NoError(t, err)
			s, err := native.Open(native.Options{Dir: dir})
			if s != nil {
				s.Close()
			}
			require.Error(t, err, "a damaged data file must be refused")
			assert.Contains(t, err.Error(), "the data file "+path)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			after, rerr := os.ReadFile(path)
			require.NoError(t, rerr)
			assert.Equal(t, before, after, "the refused file is left as it was")
			assert.Equal(t, err.Error(), native.Verify(path).Error(), "check-data says the same")
		})
	}
}

// TestVerifyPassesWhatTheStoreWrites: files the store writes (with pages
// freed by retention, after a compaction) pass Verify, and bbolt's own
// check agrees.
func TestVerifyPassesWhatTheStoreWrites(t *testing.T) {
	dir := filled(t, 600)
	path := filepath.Join(dir, native.FileName)
	require.NoError(t, native.Verify(path))
	s, err := native.Open(native.Options{Dir: dir, Retention: time.Millisecond})
	require.NoError(t, err)
	time.Sleep(5 * time.Millisecond)
	_, err = s.Trim(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, native.Verify(path), "with freed pages")
	s, err = native.Open(native.Options{Dir: dir, CompactAbove: 1})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, native.Verify(path), "after a compaction")

	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	}))
}
