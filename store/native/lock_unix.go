//go:build unix

package native

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// errLocked: another process holds the data file (flock, as the database
// library locks it).
var errLocked = errors.New("locked")

// readLocked runs fn with the file at path held under a shared lock, so
// that no askbridge process writes it meanwhile; errLocked when one holds
// it for longer than wait.
func readLocked(path string, wait time.Duration, fn func() error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			return errLocked
		}
		time.Sleep(50 * time.Millisecond)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return fn()
}
