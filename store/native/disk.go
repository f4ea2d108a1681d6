package native

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/segmentio/encoding/json"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// The database file holds one bucket per kind of record; a key is
// "<project>\x00<id>" (events and audit entries: the project, \x00 and
// their 16-byte stream id, so a bucket reads back in stream order). Every
// index lives in memory only and is rebuilt from the records at start.

// FileName is the database's name in the data directory.
const FileName = "askbridge.db"

// ErrInUse is returned by Open when another process holds the data
// directory.
var ErrInUse = errors.New("the data directory is in use by another askbridge process")

var (
	bProj  = []byte("proj")
	bQ     = []byte("q")
	bRun   = []byte("run")
	bIdem  = []byte("idem")
	bDraft = []byte("draft")
	bDlv   = []byte("dlv")
	bOnce  = []byte("once")
	bEv    = []byte("ev")
	bAu    = []byte("au")
)

var buckets = [][]byte{bProj, bQ, bRun, bIdem, bDraft, bDlv, bOnce, bEv, bAu}

// inOrder reports whether new keys of bucket b come after every key it
// holds (events and audit entries: a project's stream ids only grow), so
// its pages are best written full: the library splits a full page in two
// halves by default, which for keys written in order leaves every page
// half empty behind the last one (the data file twice the size of its
// entries). Questions' ids are random, so their bucket keeps the default.
func inOrder(b []byte) bool { return bytes.Equal(b, bEv) || bytes.Equal(b, bAu) }

// openDisk opens (or creates) the database in dir, holding its lock, and
// loads it.
func (c *core) openDisk(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create the data directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, FileName)
	sizes, err := verifyExisting(path, dir)
	if err != nil {
		return err
	}
	db, err := openFile(path, dir)
	if err != nil {
		return err
	}
	for _, leftover := range []string{".backup-*", ".new-*"} { // copies a crash left behind (the lock is ours)
		left, _ := filepath.Glob(path + leftover)
		for _, f := range left {
			_ = os.Remove(f)
		}
	}
	if db, err = c.compact(db, path, dir); err != nil {
		return err
	}
	err = db.Update(createBuckets)
	if err == nil {
		c.sizes = sizes
		err = c.load(db)
		c.sizes = nil
	}
	if err != nil {
		db.Close()
		return fmt.Errorf("cannot read the data file %s: %w", path, err)
	}
	c.db = db
	c.writerWG.Add(2)
	go c.writer()
	go func() {
		defer c.writerWG.Done()
		handBack(db, cmp.Or(c.opts.handBack, handBackEvery), cmp.Or(c.opts.handBackCap, handBackCap), c.stopped)
	}()
	if sizes.total() >= 10000 {
		// The load ran with a higher GC percent (load) and left its
		// garbage in a heap of several times what it keeps: collected
		// and given back to the system at once, while the store serves,
		// instead of staying in the RSS until the heap next shrinks.
		go debug.FreeOSMemory()
	}
	return nil
}

// total is how many keys were counted.
func (s counts) total() int {
	n := 0
	for _, ps := range s {
		for _, k := range ps {
			n += k
		}
	}
	return n
}

// boltOptions: the free-page list kept in memory as a map, and not written
// at each commit (as etcd runs bbolt): after retention frees many pages the
// list is large, and writing it with every ask and answer would lengthen
// each synced commit; at start bbolt finds the free pages by reading the
// tree instead.
func boltOptions(lock time.Duration) *bolt.Options {
	return &bolt.Options{Timeout: lock, FreelistType: bolt.FreelistMapType, NoFreelistSync: true}
}

// keepFreePages writes the list of free pages into the file once the last
// change is committed (at Close), so the next start reads it instead of
// walking every page of the file to find them (which, at a million
// records, costs seconds and maps the whole file). The next commit takes
// it out again (boltOptions), so a start after a crash walks the file as
// before; a failed write leaves the file as it was.
func keepFreePages(db *bolt.DB) {
	db.NoFreelistSync = false
	_ = db.Update(func(*bolt.Tx) error { return nil })
	db.NoFreelistSync = true
}

// verifyExisting checks the data file at path, when there is one, before
// the database library opens it (Verify), and returns how many keys each
// bucket holds per project; when there is none, it makes one (create).
func verifyExisting(path, dir string) (counts, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, create(path, dir)
	}
	var sizes counts
	err := readLocked(path, 300*time.Millisecond, func() (err error) {
		sizes, err = verifyCounting(path, true)
		return err
	})
	if errors.Is(err, errLocked) {
		return nil, inUse(dir)
	}
	return sizes, err
}

// create makes an empty data file at path whole or not at all: written
// and synced under another name, then linked in place (a link, unlike a
// rename, fails when another process made one meanwhile). So the store
// never leaves an empty file, and an empty one is refused (Verify). Where
// links are not supported, the database library creates it in place.
func create(path, dir string) error {
	tmp, err := os.CreateTemp(dir, FileName+".new-*")
	if err != nil {
		return fmt.Errorf("cannot create the data file in %s: %w", dir, err)
	}
	name := tmp.Name()
	_ = tmp.Close()
	defer os.Remove(name)
	db, err := bolt.Open(name, 0o600, boltOptions(0))
	if err != nil {
		return fmt.Errorf("cannot create the data file in %s: %w", dir, err)
	}
	err = db.Update(createBuckets)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot create the data file in %s: %w", dir, err)
	}
	if err := os.Link(name, path); err != nil {
		return nil // another process made one (its lock decides), or no links here
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

func createBuckets(tx *bolt.Tx) error {
	for _, b := range buckets {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return err
		}
	}
	return nil
}

// inUse is the error for a data directory another process holds, naming
// that process's PID when it wrote one.
func inUse(dir string) error {
	holder, stop := "", "Stop the other one"
	if pid := holderPID(dir); pid > 0 {
		holder, stop = fmt.Sprintf(", PID %d", pid), fmt.Sprintf("Stop it (kill %d)", pid)
	}
	return fmt.Errorf("%w%s (%s): one process owns a data directory. %s or give this one another "+
		"--data-dir (BRIDGE_DATA_DIR); to run several replicas, set REDIS_URL so they share one Redis", ErrInUse, holder, dir, stop)
}

func openFile(path, dir string) (*bolt.DB, error) {
	db, err := bolt.Open(path, 0o600, boltOptions(300*time.Millisecond))
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, inUse(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot open the data file %s: %w", path, err)
	}
	writePID(dir)
	return db, nil
}

// compact rewrites the data file without its free pages when it is
// larger than Options.CompactAbove and more than half free: the file
// keeps the size it reached (free pages are reused, never returned), so
// after retention dropped most of what it held, it is rewritten at start.
// A failure leaves the file as it was.
func (c *core) compact(db *bolt.DB, path, dir string) (*bolt.DB, error) {
	var size int64
	_ = db.View(func(tx *bolt.Tx) error {
		size = tx.Size()
		return nil
	})
	free := int64(db.Stats().FreePageN) * int64(db.Info().PageSize)
	if size <= c.opts.CompactAbove || free*2 <= size {
		return db, nil
	}
	tmp := path + ".compact"
	_ = os.Remove(tmp)
	dst, err := bolt.Open(tmp, 0o600, boltOptions(0))
	if err == nil {
		err = bolt.Compact(dst, db, 64<<20)
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		_ = os.Remove(tmp)
		c.log.Warn("could not compact the data file; going on with it as it is", "err", err)
		return db, nil
	}
	_ = db.Close()
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return openFile(path, dir)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // the rename is durable
		_ = d.Close()
	}
	c.log.Info("compacted the data file", "before_bytes", size, "free_bytes", free)
	return openFile(path, dir)
}

func splitKey(k []byte) (string, string) {
	i := bytes.IndexByte(k, 0)
	if i < 0 {
		return "", string(k)
	}
	return string(k[:i]), string(k[i+1:])
}

func (c *core) proj(name string) *proj {
	p := c.projects[name]
	if p == nil {
		p = newProj(name)
		if c.sizes != nil {
			c.sizes.presize(p)
		}
		c.projects[name] = p
	}
	return p
}

// presize makes p's maps and lists the size the data file says they will
// be once loaded (its key counts), so loading does not grow them step by
// step: at a million records, each growth rehashes what is already in.
func (s counts) presize(p *proj) {
	n := func(b []byte) int { return s[string(b)][p.name] }
	if k := n(bQ); k > 0 {
		p.qs = make(map[string]*qrec, k)
	}
	if k := n(bRun); k > 0 {
		p.runs = make(map[string]*runrec, k)
	}
	if k := n(bAu); k > 0 {
		p.audit = make([]auref, 0, k)
		p.auByQ = make(map[string]*auq, min(k, max(n(bQ), 16)))
	}
	if k := n(bEv); k > 0 {
		p.events = make([]*evrec, 0, k)
	}
}

// load rebuilds the state and every index from the database: the
// questions and everything else in two read transactions at once (they
// fill different parts of a project), with the collector running less
// often, since everything read stays.
func (c *core) load(db *bolt.DB) error {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	var mu sync.Mutex
	projOf := func(name string) *proj {
		mu.Lock()
		defer mu.Unlock()
		return c.proj(name)
	}
	errs := make(chan error, 1)
	c.loading = true
	go func() {
		c.staged = stage{}
		err := db.View(func(tx *bolt.Tx) error { return c.loadQuestions(tx, projOf) })
		c.staged.build()
		c.staged = nil
		errs <- err
	}()
	err := db.View(func(tx *bolt.Tx) error { return c.loadRest(tx, projOf) })
	err = errors.Join(err, <-errs)
	c.loading = false
	unmapLoaded(db)
	for _, p := range c.projects {
		for _, h := range p.hist {
			slices.SortFunc(h, cmpItem)
		}
		// A question's audit entries name it with the string its record
		// is kept under, not a copy of their own.
		for id := range p.qs {
			if q := p.auByQ[id]; q != nil {
				delete(p.auByQ, id)
				q.q = id
				p.auByQ[id] = q
			}
		}
	}
	return err
}

func (c *core) loadQuestions(tx *bolt.Tx, projOf func(string) *proj) error {
	return tx.Bucket(bQ).ForEach(func(k, v []byte) error {
		project, id := splitKey(k)
		line, _, _ := bytes.Cut(v, []byte{'\n'})
		r := &qrec{} // its doc stays in the file (c.doc)
		if err := json.Unmarshal(line, &r.m); err != nil {
			c.log.Warn("skipping an unreadable question record", "project", project, "question", id, "err", err)
			return nil
		}
		r.m.Status = statusName(r.m.Status)
		p := projOf(project)
		c.index(p, id, r)
		p.seq = max(p.seq, r.m.Seq)
		return nil
	})
}

func (c *core) loadRest(tx *bolt.Tx, projOf func(string) *proj) error {
	_ = tx.Bucket(bProj).ForEach(func(k, _ []byte) error {
		projOf(string(k)).registered = true
		return nil
	})
	each := func(b []byte, f func(p *proj, id string, v []byte) error) error {
		return tx.Bucket(b).ForEach(func(k, v []byte) error {
			project, id := splitKey(k)
			return f(projOf(project), id, v)
		})
	}
	runs := stage{}
	if err := each(bRun, func(p *proj, id string, v []byte) error {
		if ttl, ok := runTTL(v); ok {
			p.runs[id] = nil // in the file (holdRun)
			runs.insert(p.runTTL, item{ttl, id})
		}
		return nil
	}); err != nil {
		return err
	}
	runs.build()
	if err := each(bIdem, func(p *proj, id string, v []byte) error {
		r := &ttlrec{}
		if json.Unmarshal(v, r) == nil {
			p.idem[id] = r
			p.idemTTL.ReplaceOrInsert(item{r.TTL, id})
		}
		return nil
	}); err != nil {
		return err
	}
	if err := each(bDraft, func(p *proj, id string, v []byte) error {
		r := &draftrec{}
		if json.Unmarshal(v, r) == nil {
			p.drafts[id] = r
			p.draftTTL.ReplaceOrInsert(item{r.TTL, id})
		}
		return nil
	}); err != nil {
		return err
	}
	now := wallMS()
	if err := each(bDlv, func(p *proj, id string, v []byte) error {
		r := &dlvrec{}
		if json.Unmarshal(v, r) == nil {
			if r.Lease != "" {
				// Leased by the process before this one, which is gone
				// (one process owns the directory): due again now, not
				// when the lease would have run out.
				r.Lease, r.Due = "", min(r.Due, now)
			}
			p.dlv[id] = r
			p.outbox.ReplaceOrInsert(item{r.Due, id})
		}
		return nil
	}); err != nil {
		return err
	}
	_ = tx.Bucket(bOnce).ForEach(func(k, v []byte) error {
		if len(v) == 8 {
			until := int64(binary.BigEndian.Uint64(v))
			c.once[string(k)] = until
			c.onceTTL.ReplaceOrInsert(item{until, string(k)})
		}
		return nil
	})
	if err := each(bEv, func(p *proj, id string, v []byte) error {
		if e, ok := decodeEv(evidFromKey(id), v); ok {
			p.events = append(p.events, e)
			p.lastEv = e.id
		}
		return nil
	}); err != nil {
		return err
	}
	return each(bAu, func(p *proj, id string, v []byte) error {
		if q, ok := decodeAuQ(v); ok {
			p.appendAudit(&aurec{id: evidFromKey(id), Q: q}, false)
		}
		return nil
	})
}

// runTTL reads a run record's lifetime: its last field (runrec.TTL), else
// the whole record.
func runTTL(v []byte) (int64, bool) {
	if i := bytes.LastIndex(v, []byte(`,"t":`)); i >= 0 && len(v) > 0 && v[len(v)-1] == '}' {
		if n, err := strconv.ParseInt(string(v[i+5:len(v)-1]), 10, 64); err == nil {
			return n, true
		}
	}
	var r struct {
		TTL int64 `json:"t"`
	}
	if json.Unmarshal(v, &r) != nil {
		return 0, false
	}
	return r.TTL, true
}

// statusName is s as the constant of that name, so records read back do
// not each hold a copy of their status.
func statusName(s string) string {
	for _, st := range []domain.Status{domain.StatusPending, domain.StatusAnswered, domain.StatusCancelled, domain.StatusExpired} {
		if s == string(st) {
			return string(st)
		}
	}
	return s
}

func evidFromKey(s string) evid {
	if len(s) != 16 {
		return evid{}
	}
	b := []byte(s)
	return evid{ms: int64(binary.BigEndian.Uint64(b[:8])), seq: int64(binary.BigEndian.Uint64(b[8:]))}
}

func onceValue(until int64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(until))
	return b[:]
}

// DiskUsage is the size of the data file and how much of it holds data
// (the rest is free pages the next writes reuse), once every change made
// so far is committed (trims are not awaited); zeros in memory.
func (s *Store) DiskUsage() (file, inUse int64) {
	if s.db == nil {
		return 0, 0
	}
	_ = s.Sync()
	_ = s.db.View(func(tx *bolt.Tx) error {
		file = tx.Size()
		return nil
	})
	st := s.db.Stats()
	inUse = file - int64(st.FreePageN+st.PendingPageN)*int64(s.db.Info().PageSize)
	return file, inUse
}

// handBackEvery is how often the pages of the data file that reads and
// commits mapped in since are given back (unmapLoaded). Reads keep
// mapping pages in: a waiting agent's question, a list, the B+tree pages a
// commit walks. Left alone, a long-running bridge's RSS grows towards the
// whole file (with 17,000 parked waits on 100,000 questions, 351 MB of a
// 714 MB RSS were such pages), although the kernel keeps them in its page
// cache either way and the next access maps them again without reading
// the disk (a minor fault, about a microsecond a page).
const handBackEvery = 10 * time.Second

// handBackCap is how much of the data file reads and commits may map in
// before it is given back without waiting for the period: a burst of reads
// (agents starting to wait on tens of thousands of questions, a list of
// all of them) would otherwise hold up to the whole file for the period.
const handBackCap = 32 << 20
