package native

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
)

// probeEvery is how often a store whose commit failed tries a write again.
const probeEvery = time.Second

// diskError is why the store cannot write, in words an operator can act
// on; err is the system's own.
type diskError struct {
	msg   string
	ready string // the same without the path, for /readyz
	err   error
}

func (e *diskError) Error() string { return e.msg }
func (e *diskError) Unwrap() error { return e.err }

// Readiness is the problem as /readyz shows it: what is wrong, without
// the data directory's path.
func (e *diskError) Readiness() string { return e.ready }

// diskProblem says what a failed write to the data directory dir means.
func diskProblem(dir string, err error) error {
	const again = "; the bridge takes changes again by itself once a write succeeds"
	e := &diskError{err: err}
	switch {
	case errors.Is(err, syscall.ENOSPC):
		e.msg = fmt.Sprintf("the disk holding %s is full: free space there or give it more", dir) + again
		e.ready = "the disk holding the data directory is full"
	case errors.Is(err, syscall.EDQUOT):
		e.msg = fmt.Sprintf("the disk quota of the user running the bridge is used up on %s: raise it or free space there", dir) + again
		e.ready = "the disk quota on the data directory is used up"
	case errors.Is(err, syscall.EROFS):
		e.msg = fmt.Sprintf("%s is on a file system mounted read-only: mount it read-write", dir) + again
		e.ready = "the data directory is on a read-only file system"
	case errors.Is(err, syscall.EIO):
		e.msg = fmt.Sprintf("the disk holding %s reports input/output errors: check it (dmesg) and, once it works, "+
			"check the data file (askbridge check-data)", dir) + again
		e.ready = "the disk holding the data directory reports input/output errors"
	default:
		e.msg = fmt.Sprintf("cannot write to the data file in %s: %v", dir, err) + again
		e.ready = "cannot write to the data file"
	}
	return e
}

// recoverWrites tries a write of size bytes (what the failed commit held)
// every probeEvery, and once one succeeds lets changes in again.
func (c *core) recoverWrites(size int) {
	defer c.writerWG.Done()
	size = min(max(size, 4096), 4<<20)
	t := time.NewTicker(probeEvery)
	defer t.Stop()
	for {
		select {
		case <-c.stopped:
			return
		case <-t.C:
		}
		err := c.probe(size)
		if err == nil {
			c.failed.Store(nil)
			c.log.Info("the embedded store writes to its data directory again; it takes changes again")
			return
		}
		cause := diskProblem(c.opts.Dir, err)
		if p := c.failed.Load(); p == nil || (*p).Error() != cause.Error() {
			c.log.Error("the embedded store still cannot write", "problem", cause.Error(), "err", err)
		}
		c.failed.Store(&cause)
	}
}

var bProbe = []byte("probe")

// probe writes size bytes in a bucket of its own, commits, and removes
// them: whether a commit as large as the one that failed would succeed.
func (c *core) probe(size int) error {
	blob := make([]byte, size)
	r := rand.NewChaCha8([32]byte{})
	_, _ = r.Read(blob) // not all zeros: a compressing file system would store nothing
	err := c.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bProbe)
		if err == nil {
			err = b.Put([]byte("probe"), blob)
		}
		if err == nil {
			err = c.hook()
		}
		return err
	})
	if err != nil {
		return err
	}
	return c.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bProbe); err != nil {
			return err
		}
		return c.hook()
	})
}
