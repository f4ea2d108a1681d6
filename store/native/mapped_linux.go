package native

import (
	"syscall"

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
	var size int64
	_ = db.View(func(tx *bolt.Tx) error {
		size = tx.Size()
		return nil
	})
	data := db.Info().Data
	if data == 0 || size <= 0 {
		return
	}
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, data, uintptr(size), syscall.MADV_DONTNEED)
}
