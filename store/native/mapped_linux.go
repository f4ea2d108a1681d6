package native

import (
	"os"
	"strconv"
	"strings"
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

// handBack gives back the mapped pages until stop is closed: once the
// process's file-backed resident memory has grown by limit bytes since the
// last time (looked at every second), or when the period ends if it grew
// at all; an idle store gives back nothing. The growth is measured, not
// estimated, as reads are not the only ones to map pages in: a commit
// walks the B+tree through the map too.
func handBack(db *bolt.DB, every time.Duration, limit int64, stop <-chan struct{}) {
	poll := min(every, time.Second)
	t := time.NewTicker(poll)
	defer t.Stop()
	base, last := fileResident(), time.Now()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		now := fileResident()
		base = min(base, now) // the kernel may have taken pages back itself
		due := time.Since(last) >= every-poll/2
		switch {
		case now < 0: // not known: every period, whatever was read
			if !due {
				continue
			}
		case now-base >= limit:
		case due && now > base:
		default:
			continue
		}
		unmapLoaded(db)
		base, last = fileResident(), time.Now()
	}
}

// fileResident is this process's resident file-backed memory in bytes
// (the third field of /proc/self/statm, which counts shared memory too:
// only its changes matter here), or -1 if it cannot be read.
func fileResident() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	f := strings.Fields(string(b))
	if err != nil || len(f) < 3 {
		return -1
	}
	n, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return -1
	}
	return n * int64(os.Getpagesize())
}
