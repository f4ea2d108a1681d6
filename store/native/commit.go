package native

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"errors"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A change is made in memory under the lock, numbered, and queued for the
// disk in the order made; the writer commits everything queued meanwhile
// in one transaction (one fsync). What a change touched (a question, a
// project's lists, the Once keys) carries its number, and a reader returns
// only once the numbers of what it read are committed (view): nobody is
// shown a change a crash could take back. A commit that fails takes back
// every change not committed: the state is read again from the file, as at
// a restart, and readers that read a taken-back change read again.

// batch is the changes of one operation, written in the order made. The
// operation's wake-ups (after) run once they are committed.
type batch struct {
	c       *core
	durable bool
	ops     []op
	after   []func()
	done    chan error
	at      time.Time
	ver     uint64   // its number (apply)
	projs   []string // the projects it touched
	recs    []*qrec  // the questions it wrote
	runs    []runRef // the runs it wrote
	once    bool     // it touched the Once keys
	reg     bool     // it registered a project
}

type op struct {
	b    []byte
	k, v []byte // v nil: delete
}

func key(project, id string) []byte {
	k := make([]byte, 0, len(project)+1+len(id))
	return append(append(append(k, project...), 0), id...)
}

func (w *batch) put(b []byte, k []byte, v []byte) {
	if w.durable {
		w.ops = append(w.ops, op{b: b, k: k, v: v})
		w.touch(b, k)
	}
}

func (w *batch) del(b []byte, k []byte) {
	if w.durable {
		w.ops = append(w.ops, op{b: b, k: k})
		w.touch(b, k)
	}
}

// touch notes what a change to key k of bucket b makes readers wait for:
// a project's records (the key's project) or the Once keys.
func (w *batch) touch(b, k []byte) {
	switch {
	case bytes.Equal(b, bOnce):
		w.once = true
		return
	case bytes.Equal(b, bProj): // the key is the project
		w.reg = true
	default: // the key is the project, \x00 and an id
		if i := bytes.IndexByte(k, 0); i >= 0 {
			k = k[:i]
		}
	}
	for _, p := range w.projs {
		if p == string(k) {
			return
		}
	}
	w.projs = append(w.projs, string(k))
}

func (w *batch) later(f func()) { w.after = append(w.after, f) }

func (w *batch) putJSON(b []byte, k []byte, v any) {
	if w.durable {
		j, _ := stdjson.Marshal(v)
		w.put(b, k, j)
	}
}

func (w *batch) putQ(project, id string, r *qrec) {
	if w.durable {
		w.c.hold(project, id, r)
		w.put(bQ, key(project, id), r.encode())
		w.recs = append(w.recs, r)
	}
}

// write runs fn under the lock, queues its changes for the disk in the
// order they were made, and returns once they are committed (at once in
// memory), after which the wake-ups fn registered run. What a caller is
// told was done (an ask, an answer, a vote, a pause, a queued delivery)
// goes through write. When fn changed nothing, write returns once what fn
// read is committed.
func (c *core) write(fn func(w *batch) error) error { return c.apply(fn, true) }

// note is write without waiting for the commit, for changes whose loss in
// a crash costs at most a repeat: a posted copy's reference, the read
// flag, a draft, a dedupe mark, an event or audit entry made on its own, a
// delivery's renewal, retry or finish (deliveries are at least once), a
// trim. They are committed in order with the others, so a write that
// follows one is committed with or after it; readers wait for them as for
// any change.
func (c *core) note(fn func(w *batch) error) error { return c.apply(fn, false) }

// Sync returns once every change made so far is committed.
func (c *core) Sync() error {
	if c.db == nil {
		return nil
	}
	return c.apply(func(w *batch) error {
		w.ops = append(w.ops, op{}) // a commit of nothing, after the others
		return nil
	}, true)
}

func (c *core) apply(fn func(w *batch) error, wait bool) error {
	for {
		w := &batch{c: c, durable: c.db != nil}
		c.mu.Lock()
		c.release()
		if p := c.failed.Load(); p != nil {
			c.mu.Unlock()
			return &unavailable{cause: *p}
		}
		err := fn(w)
		var seen, epoch uint64
		switch {
		case w.durable && len(w.ops) > 0:
			c.applied++
			w.ver = c.applied
			c.stamp(w)
			w.done = make(chan error, 1)
			w.at = time.Now()
			c.qmu.Lock()
			if c.closing {
				w.done <- errors.New("the store is closed")
			} else {
				c.queue = append(c.queue, w)
				c.qcond.Signal()
			}
			c.qmu.Unlock()
		case w.durable:
			seen, epoch = c.applied, c.epoch.Load() // what fn read
		}
		c.mu.Unlock()
		if w.done != nil && wait {
			if cerr := <-w.done; cerr != nil {
				return &unavailable{cause: cerr}
			}
		}
		if w.done == nil && wait && seen > 0 {
			ok, serr := c.settled(context.Background(), seen, epoch)
			if serr != nil {
				return serr
			}
			if !ok {
				continue // what fn read was taken back: decide again
			}
		}
		for _, f := range w.after {
			f()
		}
		return err
	}
}

// stamp gives what w changed its number (under the lock).
func (c *core) stamp(w *batch) {
	for _, name := range w.projs {
		if p := c.projects[name]; p != nil {
			p.ver = w.ver
		}
	}
	for _, r := range w.recs {
		r.ver = w.ver
	}
	for _, r := range w.runs {
		r.r.ver = w.ver
	}
	if w.once {
		c.onceVer = w.ver
	}
	if w.reg {
		c.regVer = w.ver
	}
}

// view runs read under the read lock and returns once what it read is
// committed: read returns the number of the last change to what it read
// (a question's, its project's, c.applied for anything). It runs read
// again when a failed commit took that change back, and gives up with
// ctx.
func (c *core) view(ctx context.Context, read func() uint64) error {
	for {
		c.mu.RLock()
		seen := read()
		epoch := c.epoch.Load()
		c.mu.RUnlock()
		ok, err := c.settled(ctx, seen, epoch)
		if err != nil || ok {
			return err
		}
	}
}

// settled waits until the changes numbered up to seen are committed
// (true), or a failed commit took back changes made in epoch (false).
func (c *core) settled(ctx context.Context, seen, epoch uint64) (bool, error) {
	for {
		d := c.durable.Load() // before the epoch: see rollback
		if c.epoch.Load() != epoch {
			return false, nil
		}
		if d >= seen {
			return true, nil
		}
		c.pubMu.Lock()
		ch := c.pubCh
		c.pubMu.Unlock()
		if c.durable.Load() >= seen || c.epoch.Load() != epoch {
			continue
		}
		select {
		case <-ch:
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return false, ctx.Err()
			}
			return false, &unavailable{cause: errors.New("a change is still waiting for the disk")}
		}
	}
}

// published wakes the readers waiting in settled.
func (c *core) published() {
	c.pubMu.Lock()
	close(c.pubCh)
	c.pubCh = make(chan struct{})
	c.pubMu.Unlock()
}

// writer commits queued batches: all those queued while the previous
// commit ran go in one transaction, with one fsync. Their changes are
// published once committed; a failed commit takes them back (rollback).
func (c *core) writer() {
	defer c.writerWG.Done()
	for {
		c.qmu.Lock()
		for len(c.queue) == 0 && !c.closing {
			c.qcond.Wait()
		}
		if len(c.queue) == 0 {
			c.qmu.Unlock()
			return
		}
		bs := c.queue
		c.queue = nil
		c.queuedAt = bs[0].at
		c.qmu.Unlock()
		err := c.db.Update(func(tx *bolt.Tx) error {
			for _, w := range bs {
				for _, o := range w.ops {
					if o.b == nil {
						continue
					}
					b := tx.Bucket(o.b)
					if inOrder(o.b) {
						b.FillPercent = 1 // see inOrder
					}
					var err error
					if o.v == nil {
						err = b.Delete(o.k)
					} else {
						err = b.Put(o.k, o.v)
					}
					if err != nil {
						return err
					}
				}
			}
			return c.hook()
		})
		if err != nil {
			bs = c.rollback(bs, err)
		} else {
			c.durable.Store(bs[len(bs)-1].ver)
			c.published()
		}
		c.qmu.Lock()
		c.queuedAt = time.Time{}
		if err == nil {
			for _, w := range bs {
				c.cold = append(c.cold, w.recs...)
				c.coldRuns = append(c.coldRuns, w.runs...)
			}
		}
		c.qmu.Unlock()
		for _, w := range bs {
			w.done <- err
		}
	}
}

func (c *core) hook() error {
	if h := c.opts.CommitHook; h != nil {
		return h()
	}
	return nil
}

// rollback takes back every change not committed after a commit failed
// with err: the batches of that commit and every batch queued since
// (made on top of them) fail, the state is read again from the file, and
// changes are refused until a probe write succeeds (recoverWrites). It
// returns every batch that failed.
func (c *core) rollback(bs []*batch, err error) []*batch {
	cause := diskProblem(c.opts.Dir, err)
	c.mu.Lock()
	c.qmu.Lock()
	bs = append(bs, c.queue...)
	c.queue = nil
	c.qmu.Unlock()
	c.failed.Store(&cause)
	size := 0
	for _, w := range bs {
		for _, o := range w.ops {
			size += len(o.k) + len(o.v)
		}
	}
	// The epoch moves before anything committed later moves durable, so a
	// reader that sees that commit sees the epoch too (settled).
	c.epoch.Add(1)
	c.projects, c.once, c.onceTTL = map[string]*proj{}, map[string]int64{}, newTree()
	lerr := c.load(c.db)
	// What is in memory now is all committed: nothing read from it waits.
	c.applied, c.onceVer, c.regVer = c.durable.Load(), 0, 0
	c.mu.Unlock()
	c.published()
	c.log.Error("the embedded store could not commit a change; it refuses changes until a write succeeds again "+
		"and takes them again by itself", "problem", cause.Error(), "err", err, "changes_taken_back", len(bs))
	if lerr != nil {
		stuck := error(&diskError{msg: "the data file could not be read again after a failed write: restart the bridge", err: lerr})
		c.failed.Store(&stuck)
		c.log.Error("the embedded store could not read its data file again after a failed write; restart the bridge", "err", lerr)
		return bs
	}
	c.writerWG.Add(1)
	go c.recoverWrites(size)
	return bs
}

// pendingSince is when the oldest change not yet committed was made
// (zero when none).
func (c *core) pendingSince() time.Time {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	if !c.queuedAt.IsZero() {
		return c.queuedAt
	}
	if len(c.queue) > 0 {
		return c.queue[0].at
	}
	return time.Time{}
}

func (c *core) closeDisk() error {
	if c.db == nil {
		return nil
	}
	c.qmu.Lock()
	c.closing = true
	c.qcond.Broadcast()
	c.qmu.Unlock()
	close(c.stopped)
	c.writerWG.Wait()
	keepFreePages(c.db)
	removePID(c.opts.Dir)
	return c.db.Close()
}

// A question's doc (its immutable part, copies and result: most of its
// bytes) is kept in memory only while a change to it is not committed;
// once committed it is read from the file when asked for, so the heap
// holds a record's indexes and short fields, not the record. In memory
// (no file) every doc stays.

// doc is r's doc: in memory while a change to it waits for its commit,
// else read from the file, where the committed record is the one in
// memory (release drops a doc only once its last change is committed,
// and every change holds it again first). Under the lock.
func (c *core) doc(project, id string, r *qrec) string {
	if r.doc != "" || c.db == nil {
		return r.doc
	}
	var doc string
	_ = c.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bQ).Get(key(project, id)); v != nil {
			if i := bytes.IndexByte(v, '\n'); i >= 0 {
				doc = string(v[i+1:])
			}
		}
		return nil
	})
	return doc
}

// hold keeps r's doc in memory for a change about to be made to r (under
// the write lock) and returns it.
func (c *core) hold(project, id string, r *qrec) string {
	if r.doc == "" && c.db != nil {
		r.doc = c.doc(project, id, r)
		c.qmu.Lock()
		c.cold = append(c.cold, r) // released by the next change when that one is not made
		c.qmu.Unlock()
	}
	return r.doc
}

// release drops the docs of the records whose last change is committed
// (under the write lock): what the writer committed since the last call.
func (c *core) release() {
	c.qmu.Lock()
	rs, runs := c.cold, c.coldRuns
	c.cold, c.coldRuns = nil, nil
	c.qmu.Unlock()
	d := c.durable.Load()
	for _, r := range rs {
		if r.ver <= d {
			r.doc = ""
		}
	}
	for _, r := range runs {
		if r.r.ver <= d && r.p.runs[r.r.ID] == r.r {
			r.p.runs[r.r.ID] = nil
		}
	}
}

// Runs are kept alike: p.runs names every run, and holds the record only
// while a change to it waits for its commit (nil: in the file).
type runRef struct {
	p *proj
	r *runrec
}

// peekRun is the run id of p (nil for none), read from the file when it
// is not in memory; under the lock, for reading.
func (c *core) peekRun(p *proj, id string) *runrec {
	r, ok := p.runs[id]
	if !ok || r != nil || c.db == nil {
		return r
	}
	_ = c.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bRun).Get(key(p.name, id)); v != nil {
			r = &runrec{}
			if stdjson.Unmarshal(v, r) != nil {
				r = nil
			}
		}
		return nil
	})
	if r != nil {
		r.ID = id
	}
	return r
}

// holdRun is peekRun for a change about to be made (under the write
// lock): the run stays in memory until that change is committed.
func (c *core) holdRun(p *proj, id string) *runrec {
	r, ok := p.runs[id]
	if !ok || r != nil || c.db == nil {
		return r
	}
	if r = c.peekRun(p, id); r != nil {
		p.runs[id] = r
		c.qmu.Lock()
		c.coldRuns = append(c.coldRuns, runRef{p, r}) // released by the next change when that one is not made
		c.qmu.Unlock()
	}
	return r
}
