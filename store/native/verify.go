package native

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// Verify reads the data file at path page by page, without mapping it,
// and says what is wrong with it, if anything, in words an operator can
// act on. The database library trusts its file: on one cut short or with
// damaged pages it crashes the process while opening it, which no
// recover() can catch (a fault reading past the end of the mapping, a
// panic in a goroutine of its own). So Open verifies the file first: its
// size against its header, and every page reachable from its header
// (each page once, of the kind and at the place expected, its entries
// within it and in order), which is what the library relies on.
func Verify(path string) error {
	_, err := verifyCounting(path, false)
	return err
}

// counts is how many keys each bucket holds per project (the part of a
// key before its \x00), as the verification read them.
type counts map[string]map[string]int

// verifyCounting is Verify, also counting the keys of each bucket per
// project when count is set: a start sizes its maps from them, so
// filling them does not grow each one step by step (the file is read
// once, here).
func verifyCounting(path string, count bool) (counts, error) {
	v, err := verifyFile(path, count)
	if v == nil {
		return nil, err
	}
	return v.counts, err
}

func verifyFile(path string, count bool) (*verifier, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the data file %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot read the data file %s: %w", path, err)
	}
	if st.Size() == 0 {
		return nil, &DamagedError{Path: path, Empty: true, What: "is empty (0 bytes)"}
	}
	v := &verifier{f: f, size: st.Size()}
	if count {
		v.counts = counts{}
	}
	if what := v.verify(); what != "" {
		return nil, &DamagedError{Path: path, What: what}
	}
	return v, nil
}

// DamagedError is a data file the store refuses to open: what is wrong
// with it and what to do.
type DamagedError struct {
	Path  string
	What  string // what is wrong, after "the data file PATH "
	Empty bool
}

func (e *DamagedError) Error() string {
	if e.Empty {
		return fmt.Sprintf("the data file %s %s: the bridge never leaves an empty data file, so it was cut short "+
			"(a full disk, a copy that failed). Restore the last backup in its place (askbridge backup makes one), "+
			"or delete it to start with an empty store", e.Path, e.What)
	}
	return fmt.Sprintf("the data file %s is damaged: it %s. Restore the last backup in its place (askbridge backup "+
		"makes one; askbridge check-data FILE checks a file), or move it aside to start with an empty store "+
		"(what it held is then lost)", e.Path, e.What)
}

// The file's layout (bbolt's format 2): pages of pageSize bytes, each with
// a 16-byte header (id, flags, count, overflow); pages 0 and 1 are the two
// copies of the header (meta), the newest valid one is the file's state.
const (
	pageHeader   = 16
	elemSize     = 16 // a branch or leaf entry
	flagBranch   = 0x01
	flagLeaf     = 0x02
	flagMeta     = 0x04
	flagFreelist = 0x10
	bucketEntry  = 0x01
	metaMagic    = 0xED0CDAED
	metaVersion  = 2
	noFreelist   = ^uint64(0)
	maxDepth     = 64
)

type meta struct {
	pageSize uint32
	root     uint64 // the root page of the bucket of buckets
	freelist uint64
	hwm      uint64 // pages in use: the file holds at least hwm pages
	txid     uint64
}

// parseMeta reads a header copy at the start of b (a page); ok is false
// when it is not a valid one.
func parseMeta(b []byte) (m meta, ok bool) {
	if len(b) < pageHeader+64 {
		return m, false
	}
	ne := binary.NativeEndian
	b = b[pageHeader:]
	if ne.Uint32(b[0:]) != metaMagic || ne.Uint32(b[4:]) != metaVersion {
		return m, false
	}
	h := fnv.New64a()
	_, _ = h.Write(b[:56])
	if h.Sum64() != ne.Uint64(b[56:]) {
		return m, false
	}
	m = meta{pageSize: ne.Uint32(b[8:]), root: ne.Uint64(b[16:]), freelist: ne.Uint64(b[32:]),
		hwm: ne.Uint64(b[40:]), txid: ne.Uint64(b[48:])}
	return m, m.pageSize >= 512 && m.pageSize&(m.pageSize-1) == 0
}

type verifier struct {
	f        *os.File
	size     int64
	pageSize int64
	m        meta
	reached  []uint64 // a bit per page
	bufs     [maxDepth + 1][]byte

	// Key counts (nil: not counted): the bucket being read, the project
	// of its last key and how many keys in a row had it.
	counts  counts
	bucket  string
	project []byte
	run     int
}

// countKey counts a key of the bucket being read: the keys of a project
// are next to each other, so one map update per run of them.
func (v *verifier) countKey(k []byte) {
	if i := bytes.IndexByte(k, 0); i >= 0 {
		k = k[:i]
	}
	if v.run > 0 && bytes.Equal(k, v.project) {
		v.run++
		return
	}
	v.flushCount()
	v.project, v.run = append(v.project[:0], k...), 1
}

func (v *verifier) flushCount() {
	if v.run == 0 {
		return
	}
	m := v.counts[v.bucket]
	if m == nil {
		m = map[string]int{}
		v.counts[v.bucket] = m
	}
	m[string(v.project)] += v.run
	v.run = 0
}

// verify returns what is wrong with the file ("" when nothing is).
func (v *verifier) verify() string {
	m, what := v.header()
	if what != "" {
		return what
	}
	v.m, v.pageSize = m, int64(m.pageSize)
	if need := int64(m.hwm) * v.pageSize; need > v.size || m.hwm < 3 {
		return fmt.Sprintf("is %d bytes long, but its header says it holds %d: it was cut short "+
			"(a full disk, an interrupted copy)", v.size, need)
	}
	if m.root < 2 || m.root >= m.hwm {
		return "has a damaged header (its root page is out of place)"
	}
	v.reached = make([]uint64, (m.hwm+63)/64)
	v.mark(0)
	v.mark(1)
	if what := v.tree(m.root, nil, nil, 0); what != "" {
		return what
	}
	if m.freelist != noFreelist {
		return v.freelist(m.freelist)
	}
	return ""
}

// header finds the file's state as the library does: the page size from
// the first header copy, else from the second (tried at each size), then
// the newest valid copy.
func (v *verifier) header() (meta, string) {
	const notOurs = "is not a data file of the embedded store, or both copies of its header are damaged"
	buf := make([]byte, 4096)
	n, _ := v.f.ReadAt(buf, 0)
	m0, ok0 := parseMeta(buf[:n])
	pageSize := int64(m0.pageSize)
	if !ok0 {
		for i := 0; i <= 14; i++ {
			pos := int64(1024) << i
			if pos >= v.size-1024 {
				break
			}
			n, _ := v.f.ReadAt(buf, pos)
			if m, ok := parseMeta(buf[:n]); ok {
				pageSize = int64(m.pageSize)
				break
			}
		}
	}
	if pageSize == 0 {
		return meta{}, notOurs
	}
	if v.size < 2*pageSize {
		return meta{}, fmt.Sprintf("is %d bytes long, shorter than its two header pages: it was cut short "+
			"(a full disk, an interrupted copy)", v.size)
	}
	n, _ = v.f.ReadAt(buf, pageSize)
	m1, ok1 := parseMeta(buf[:n])
	ok0 = ok0 && int64(m0.pageSize) == pageSize
	ok1 = ok1 && int64(m1.pageSize) == pageSize
	switch {
	case ok0 && ok1 && m1.txid > m0.txid, ok1 && !ok0:
		return m1, ""
	case ok0:
		return m0, ""
	}
	return meta{}, notOurs
}

func (v *verifier) mark(id uint64) bool {
	w, bit := id/64, uint64(1)<<(id%64)
	if v.reached[w]&bit != 0 {
		return false
	}
	v.reached[w] |= bit
	return true
}

// page reads page id (with its overflow pages) into the buffer of depth d
// and checks its header: that it is page id, of a kind in want, within
// the file, and reached once.
func (v *verifier) page(id uint64, d int, want ...uint16) ([]byte, string) {
	if id < 2 || id >= v.m.hwm {
		return nil, fmt.Sprintf("has a damaged page: a reference to page %d, beyond its %d pages", id, v.m.hwm)
	}
	// The page in one read; its overflow pages, if its header names any,
	// in a second.
	if int64(cap(v.bufs[d])) < v.pageSize {
		v.bufs[d] = make([]byte, v.pageSize)
	}
	first := v.bufs[d][:v.pageSize]
	if _, err := v.f.ReadAt(first, int64(id)*v.pageSize); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Sprintf("cannot be read at page %d (%v)", id, err)
	}
	h := first[:pageHeader]
	ne := binary.NativeEndian
	if got := ne.Uint64(h[0:]); got != id {
		return nil, fmt.Sprintf("has a damaged page %d (it says it is page %d)", id, got)
	}
	flags, overflow := ne.Uint16(h[8:]), uint64(ne.Uint32(h[12:]))
	kind := false
	for _, w := range want {
		kind = kind || flags == w
	}
	if !kind {
		return nil, fmt.Sprintf("has a damaged page %d (of an unknown kind, %#x)", id, flags)
	}
	if id+overflow >= v.m.hwm {
		return nil, fmt.Sprintf("has a damaged page %d (it runs past the end of the data)", id)
	}
	for i := id; i <= id+overflow; i++ {
		if !v.mark(i) {
			return nil, fmt.Sprintf("has a damaged page %d (referenced twice)", i)
		}
	}
	if overflow == 0 {
		return first, ""
	}
	n := int64(1+overflow) * v.pageSize
	if int64(cap(v.bufs[d])) < n {
		v.bufs[d] = append(make([]byte, 0, n), first...)
	}
	b := v.bufs[d][:n]
	if _, err := v.f.ReadAt(b[v.pageSize:], int64(id+1)*v.pageSize); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Sprintf("cannot be read at page %d (%v)", id, err)
	}
	return b, ""
}

// tree checks the b-tree whose root is page id: every key at least lo
// (nil: none) and below hi (nil: none), in order.
func (v *verifier) tree(id uint64, lo, hi []byte, d int) string {
	if d >= maxDepth {
		return fmt.Sprintf("has a damaged page %d (a tree deeper than any the store writes)", id)
	}
	b, what := v.page(id, d, flagBranch, flagLeaf)
	if what != "" {
		return what
	}
	return v.entries(id, b, lo, hi, d)
}

// entries checks the entries of page b (id, or the page of an inline
// bucket in page id) and what they lead to.
func (v *verifier) entries(id uint64, b, lo, hi []byte, d int) string {
	ne := binary.NativeEndian
	flags, count := ne.Uint16(b[8:]), int(ne.Uint16(b[10:]))
	bad := func(why string) string { return fmt.Sprintf("has a damaged page %d (%s)", id, why) }
	if pageHeader+count*elemSize > len(b) {
		return bad("more entries than fit in it")
	}
	// A leaf entry is flags, pos, ksize, vsize; a branch entry pos, ksize,
	// page (the key at pos bytes from the entry).
	key := func(i int) (k, val []byte, ok bool) {
		e := pageHeader + i*elemSize
		var pos, ksize, vsize int
		if flags == flagLeaf {
			pos, ksize, vsize = int(ne.Uint32(b[e+4:])), int(ne.Uint32(b[e+8:])), int(ne.Uint32(b[e+12:]))
		} else {
			pos, ksize = int(ne.Uint32(b[e:])), int(ne.Uint32(b[e+4:]))
		}
		if pos < 0 || ksize < 0 || vsize < 0 || e+pos+ksize+vsize > len(b) {
			return nil, nil, false
		}
		return b[e+pos : e+pos+ksize], b[e+pos+ksize : e+pos+ksize+vsize], true
	}
	var prev []byte
	for i := range count {
		e := pageHeader + i*elemSize
		k, val, ok := key(i)
		if !ok {
			return bad("an entry runs past its end")
		}
		switch {
		case i > 0 && bytes.Compare(prev, k) >= 0, i == 0 && lo != nil && bytes.Compare(lo, k) > 0,
			hi != nil && bytes.Compare(k, hi) >= 0:
			return bad("its keys are out of order")
		}
		prev = k
		if flags == flagBranch {
			next := hi
			if i+1 < count {
				if next, _, ok = key(i + 1); !ok {
					return bad("an entry runs past its end")
				}
			}
			if what := v.tree(ne.Uint64(b[e+8:]), k, next, d+1); what != "" {
				return what
			}
			continue
		}
		if ne.Uint32(b[e:])&bucketEntry == 0 {
			if v.counts != nil {
				v.countKey(k)
			}
			continue
		}
		if len(val) < 16 {
			return bad("a bucket entry too short")
		}
		if what := v.bucketTree(id, k, val, d); what != "" {
			return what
		}
	}
	return ""
}

// bucketTree checks the bucket named k whose entry in page id is val.
func (v *verifier) bucketTree(id uint64, k, val []byte, d int) string {
	if v.counts != nil {
		v.flushCount()
		v.bucket = string(k)
		defer v.flushCount()
	}
	ne := binary.NativeEndian
	if root := ne.Uint64(val); root != 0 {
		return v.tree(root, nil, nil, d+1)
	}
	inline := val[16:]
	if len(inline) < pageHeader || ne.Uint16(inline[8:]) != flagLeaf {
		return fmt.Sprintf("has a damaged page %d (%s)", id, "a damaged inline bucket")
	}
	return v.entries(id, inline, nil, nil, d+1)
}

// freelist checks the list of free pages: within the data, each once, and
// none in use.
func (v *verifier) freelist(id uint64) string {
	b, what := v.page(id, 0, flagFreelist)
	if what != "" {
		return what
	}
	ne := binary.NativeEndian
	start, count := pageHeader, uint64(ne.Uint16(b[10:]))
	if count == 0xFFFF {
		count = ne.Uint64(b[pageHeader:])
		start += 8
	}
	if count > uint64(len(b)-start)/8 {
		return fmt.Sprintf("has a damaged list of free pages (page %d)", id)
	}
	for i := range count {
		p := ne.Uint64(b[start+int(i)*8:])
		if p < 2 || p >= v.m.hwm || !v.mark(p) {
			return fmt.Sprintf("has a damaged list of free pages (page %d names page %d)", id, p)
		}
	}
	return ""
}
