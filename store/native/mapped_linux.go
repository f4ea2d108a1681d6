package native

import (
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
)

// unmapLoaded gives back the pages of the mapped data file that reading
// the state at start touched: every record was read once to build the
// indexes, and is read again only when asked for (a question's doc, a
// run), so those pages need not stay in this process's resident set. They
// stay in the kernel's page cache, as a file read with read(2) does, and
// a later access maps them again without reading the disk. Without this, a
// restarted bridge's RSS holds the whole file.
func unmapLoaded(db *bolt.DB) {
	// Inside a read transaction: it holds bbolt's map lock, so the file
	// cannot be mapped again elsewhere (it grows) while the range is given
	// back. Outside one, the old range could by then be another mapping's.
	_ = db.View(func(tx *bolt.Tx) error {
		data, size := db.Info().Data, tx.Size()
		if data != 0 && size > 0 {
			_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, data, uintptr(size), syscall.MADV_DONTNEED)
		}
		return nil
	})
}

// handBack gives back the mapped pages every period until stop is closed.
func handBack(db *bolt.DB, every time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			unmapLoaded(db)
		}
	}
}
