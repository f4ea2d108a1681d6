package native

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/google/btree"
)

// item is an index entry: a time or sequence number, and what it names.
type item struct {
	k  int64
	id string
}

func lessItem(a, b item) bool { return a.k < b.k || (a.k == b.k && a.id < b.id) }

// histAdd adds it to the ordered slice s: at its end when it is the newest
// (every ask), else in its place; unsorted tolerates disorder while the
// state is loaded (sortHist puts it in order after).
func histAdd(s []item, it item, unsorted bool) []item {
	if unsorted || len(s) == 0 || lessItem(s[len(s)-1], it) {
		return append(s, it)
	}
	i, found := slices.BinarySearchFunc(s, it, cmpItem)
	if found {
		return s
	}
	return slices.Insert(s, i, it)
}

func histDel(s []item, it item) []item {
	if i, found := slices.BinarySearchFunc(s, it, cmpItem); found {
		return slices.Delete(s, i, i+1)
	}
	return s
}

func cmpItem(a, b item) int {
	if lessItem(a, b) {
		return -1
	}
	if lessItem(b, a) {
		return 1
	}
	return 0
}

// tree is an ordered index.
type tree = btree.BTreeG[item]

func newTree() *tree { return btree.NewG(16, lessItem) }

// stage holds index entries read at start, to build each tree at once
// (build); a nil stage inserts at once.
type stage map[*tree][]item

func (s stage) insert(t *tree, it item) {
	if s == nil {
		t.ReplaceOrInsert(it)
		return
	}
	s[t] = append(s[t], it)
}

// build inserts the entries in order, every other one first, then the
// rest: each insertion lands beside the previous one (no cache misses), and
// the nodes the first pass leaves half full (a B-tree split in the middle)
// are filled by the second, so the trees take less memory than entries
// inserted in any order and less time. The trees are built side by side,
// one per core (each tree is its own, free list included), since a start
// waits for the last.
func (s stage) build() {
	todo := make(chan *tree, len(s))
	for t := range s {
		todo <- t
	}
	close(todo)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(s)) {
		wg.Go(func() {
			for t := range todo {
				items := s[t]
				slices.SortFunc(items, cmpItem)
				for _, from := range []int{0, 1} {
					for i := from; i < len(items); i += 2 {
						t.ReplaceOrInsert(items[i])
					}
				}
			}
		})
	}
	wg.Wait()
	clear(s)
}

// upTo calls f with the entries whose key is at most k, smallest first,
// until f returns false.
func upTo(t *tree, k int64, f func(item) bool) {
	t.AscendLessThan(item{k: k + 1}, f)
}

// proj is everything kept of one project.
type proj struct {
	name       string
	hash       uint32 // domain.ProjectHash(name), what question ids carry (locate)
	registered bool   // listed by Projects (it asked a question or paused a run)
	seq        int64
	ver        uint64 // the last change to anything of the project (commit.go)

	qs        map[string]*qrec
	all       *tree            // seq -> id
	byStatus  map[string]*tree // status -> (seq -> id)
	deadlines *tree            // pending: expires ms -> id
	escal     *tree            // pending: next escalation ms -> id
	exp       *tree            // final: at + retention ms -> id (the sweeper's)
	ttl       *tree            // every record: wall-clock ms when it goes whatever happens

	runs   map[string]*runrec
	runTTL *tree

	idem    map[string]*ttlrec // "<len>:<agent>:<key>" -> question id
	idemTTL *tree

	drafts   map[string]*draftrec // question id -> drafts
	draftTTL *tree

	dlv    map[string]*dlvrec
	outbox *tree // due ms -> delivery id

	events []*evrec // events[evHead:] are the stream
	evHead int
	lastEv evid
	audit  []auref // audit[auHead:] are the trail
	auHead int
	auBase int64             // absolute index of audit[0]
	auByQ  map[string]*auq   // question id -> its entries
	hist   map[string][]item // history key -> exp, id of the answered questions asked that way, in order
	lastAu evid
}

func newProj(name string) *proj {
	return &proj{name: name, hash: domain.ProjectHash(name), qs: map[string]*qrec{}, all: newTree(), byStatus: map[string]*tree{},
		deadlines: newTree(), escal: newTree(), exp: newTree(), ttl: newTree(),
		runs: map[string]*runrec{}, runTTL: newTree(), idem: map[string]*ttlrec{}, idemTTL: newTree(),
		drafts: map[string]*draftrec{}, draftTTL: newTree(), dlv: map[string]*dlvrec{}, outbox: newTree(),
		auByQ: map[string]*auq{}, hist: map[string][]item{}}
}

func (p *proj) status(s string) *tree {
	t := p.byStatus[s]
	if t == nil {
		t = newTree()
		p.byStatus[s] = t
	}
	return t
}

// qrec is a question: the short fields package store keeps in the
// record's hash (meta) and its immutable part with copy and result lines
// (doc), so both stores decode it with store.DecodeRecord.
type qrec struct {
	m   qmeta
	doc string
	ver uint64 // the last change to it (commit.go)
}

type qmeta struct {
	Seq      int64  `json:"s"`
	Status   string `json:"st"`
	Run      string `json:"r"`
	FP       string `json:"f,omitempty"`
	Read     bool   `json:"rd,omitempty"`
	Updated  int64  `json:"u"` // unix ns
	Esc      int    `json:"el,omitempty"`
	Deadline int64  `json:"x"`            // ms
	EscNext  int64  `json:"en,omitempty"` // ms, 0: none
	Exp      int64  `json:"ex,omitempty"` // ms: final, when the sweeper drops it
	TTL      int64  `json:"t"`            // wall-clock ms when it goes
	Idem     string `json:"i,omitempty"`  // its idempotency key's name
	Hist     string `json:"h,omitempty"`  // its history key (domain.HistoryKey)

	// What few questions have, apart (nil when none), so every record in
	// memory is the smaller; its fields are the record's on disk.
	*Extra
}

// Extra is what few questions have: a continuation, a batch, votes, and
// deliveries to queue when it ends.
type Extra struct {
	Resumed string `json:"rr,omitempty"`
	Batch   string `json:"b,omitempty"` // an approval's batch id
	Votes   []vrec `json:"v,omitempty"`
	VSeq    int    `json:"vs,omitempty"`

	// End are the deliveries to queue when it ends (onend.go).
	End []onEnd `json:"oe,omitempty"`
}

// x is m's Extra, made when it has none (to set a field).
func (m *qmeta) x() *Extra {
	if m.Extra == nil {
		m.Extra = &Extra{}
	}
	return m.Extra
}

// extra is m's Extra, or an empty one (to read).
func (m *qmeta) extra() *Extra {
	if m.Extra == nil {
		return &noExtra
	}
	return m.Extra
}

var noExtra Extra

type vrec struct {
	P string `json:"p"` // platform:id
	V string `json:"v"` // the vote as JSON
	L string `json:"l"` // its label
	O int    `json:"o"` // voting order
}

// fields is the record's hash as package store keeps it.
func (m *qmeta) fields() map[string]string {
	h := map[string]string{"status": m.Status, "run": m.Run, "fp": m.FP, "seq": strconv.FormatInt(m.Seq, 10),
		"updated_at": strconv.FormatInt(m.Updated, 10), "esc_level": strconv.Itoa(m.Esc)}
	if m.Read {
		h["read"] = "1"
	}
	x := m.extra()
	if x.Resumed != "" {
		h["resumed_run_id"] = x.Resumed
	}
	if x.Batch != "" {
		h["b"] = x.Batch
	}
	for _, v := range x.Votes {
		h["vote:"+v.P], h["vlabel:"+v.P], h["vorder:"+v.P] = v.V, v.L, strconv.Itoa(v.O)
	}
	return h
}

func (r *qrec) live(now int64) bool { return r.m.TTL == 0 || r.m.TTL > now }

// encode is the record on disk: the meta as one line of JSON, then doc.
func (r *qrec) encode() []byte {
	m, _ := json.Marshal(&r.m)
	out := make([]byte, 0, len(m)+1+len(r.doc))
	out = append(append(append(out, m...), '\n'), r.doc...)
	return out
}

type runrec struct {
	ID          string   `json:"id"`
	Agent       string   `json:"a,omitempty"`
	Status      string   `json:"st,omitempty"`
	ResumedFrom string   `json:"rf,omitempty"`
	ResumedBy   string   `json:"rb,omitempty"`
	Pending     string   `json:"p,omitempty"`  // its pending question
	NP          int      `json:"np,omitempty"` // its pending approvals (asked with a batch)
	Batch       string   `json:"b,omitempty"`  // its latest batch of approvals
	BatchAt     int64    `json:"ba,omitempty"` // ms when that batch last grew
	Created     int64    `json:"c"`
	Updated     int64    `json:"u"`
	FPs         fps      `json:"f,omitempty"` // fingerprint -> id ("id|until ms" once answered)
	Qs          []string `json:"q,omitempty"` // the run's questions in creation order
	TTL         int64    `json:"t"`
	ver         uint64   // the last change to it (commit.go)
}

// fps maps a run's re-ask fingerprints to questions: pairs in a slice (a
// run has a few), which read back faster than a map.
type fps []string

func (f fps) get(fp string) (string, bool) {
	for i := 0; i+1 < len(f); i += 2 {
		if f[i] == fp {
			return f[i+1], true
		}
	}
	return "", false
}

func (f *fps) set(fp, v string) {
	for i := 0; i+1 < len(*f); i += 2 {
		if (*f)[i] == fp {
			(*f)[i+1] = v
			return
		}
	}
	*f = append(*f, fp, v)
}

func (f *fps) del(fp string) {
	for i := 0; i+1 < len(*f); i += 2 {
		if (*f)[i] == fp {
			*f = append((*f)[:i:i], (*f)[i+2:]...)
			return
		}
	}
}

func (r *runrec) live(now int64) bool { return r.TTL == 0 || r.TTL > now }

type ttlrec struct {
	ID  string `json:"id"`
	TTL int64  `json:"t"`
}

type draftrec struct {
	M   map[string]string `json:"m"` // person -> selections as JSON
	TTL int64             `json:"t"`
}

type dlvrec struct {
	Question string          `json:"q,omitempty"`
	Event    string          `json:"e"`
	Attempts int             `json:"n"`
	Created  int64           `json:"c"` // unix ns
	Lease    string          `json:"l,omitempty"`
	Due      int64           `json:"d"`           // ms
	Meta     *qmeta          `json:"m,omitempty"` // the question as enqueued
	Doc      string          `json:"doc,omitempty"`
	Payload  json.RawMessage `json:"p,omitempty"`
	TTL      int64           `json:"t"` // wall-clock ms
}

// evid is a stream id: milliseconds and a sequence within them.
type evid struct{ ms, seq int64 }

func (e evid) String() string {
	return strconv.FormatInt(e.ms, 10) + "-" + strconv.FormatInt(e.seq, 10)
}

func (e evid) less(o evid) bool { return e.ms < o.ms || (e.ms == o.ms && e.seq < o.seq) }

// next is the id after e at wall-clock ms now (never going back).
func (e evid) next(now int64) evid {
	if now > e.ms {
		return evid{ms: now}
	}
	return evid{ms: e.ms, seq: e.seq + 1}
}

func (e evid) key() []byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(e.ms))
	binary.BigEndian.PutUint64(b[8:], uint64(e.seq))
	return b[:]
}

// parseEvid reads "ms-seq" or "ms".
func parseEvid(s string) (evid, bool) {
	msPart, seqPart, has := cutDash(s)
	ms, err := strconv.ParseInt(msPart, 10, 64)
	if err != nil || ms < 0 {
		return evid{}, false
	}
	var seq int64
	if has {
		if seq, err = strconv.ParseInt(seqPart, 10, 64); err != nil || seq < 0 {
			return evid{}, false
		}
	}
	return evid{ms, seq}, true
}

func cutDash(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '-' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// Events and audit entries are most of what is kept, so on disk they are
// length-prefixed fields rather than JSON: reading them back at start
// costs a few slices each.
type evrec struct {
	id   evid
	Type string
	Q    string
	Run  string
	At   int64
	Data json.RawMessage
}

type aurec struct {
	id     evid
	Type   string
	Q      string
	Run    string
	By     string
	Detail string
	At     int64
}

func (e *evrec) encode() []byte {
	return fields(nil, e.At, e.Type, e.Q, e.Run, string(e.Data))
}

func decodeEv(id evid, b []byte) (*evrec, bool) {
	at, f, ok := unfields(b, 4)
	if !ok {
		return nil, false
	}
	e := &evrec{id: id, At: at, Type: f[0], Q: f[1], Run: f[2]}
	if f[3] != "" {
		e.Data = json.RawMessage(f[3])
	}
	return e, true
}

// auref is an audit entry as kept in memory: its id and question; the
// entry itself is read from the file (nil e) but in memory.
type auref struct {
	id evid
	q  *auq
	e  *aurec
}

// auq is a question's audit entries: absolute indexes in proj.audit.
type auq struct {
	q   string
	idx []int64
}

func (e *aurec) encode() []byte {
	return fields(nil, e.At, e.Type, e.Q, e.Run, e.By, e.Detail)
}

// decodeAuQ reads what loading needs of an audit entry: its question.
func decodeAuQ(b []byte) (string, bool) {
	_, k := binary.Varint(b)
	if k <= 0 {
		return "", false
	}
	b = b[k:]
	for i := 0; i < 2; i++ { // its type, then its question
		l, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < l {
			return "", false
		}
		if i == 1 {
			return string(b[n : n+int(l)]), true
		}
		b = b[n+int(l):]
	}
	return "", false
}

func decodeAu(id evid, b []byte) (*aurec, bool) {
	at, f, ok := unfields(b, 5)
	if !ok {
		return nil, false
	}
	return &aurec{id: id, At: at, Type: f[0], Q: f[1], Run: f[2], By: f[3], Detail: f[4]}, true
}

// fields writes a number and strings, each string after its length.
func fields(b []byte, n int64, ss ...string) []byte {
	b = binary.AppendVarint(b, n)
	for _, s := range ss {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// unfields reads what fields wrote: the number and n strings.
func unfields(b []byte, n int) (int64, []string, bool) {
	v, k := binary.Varint(b)
	if k <= 0 {
		return 0, nil, false
	}
	b = b[k:]
	out := make([]string, n)
	for i := range out {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return 0, nil, false
		}
		out[i] = string(b[k : k+int(l)])
		b = b[k+int(l):]
	}
	return v, out, true
}

func (e *evrec) event(project string) domain.Event {
	return domain.Event{ID: e.id.String(), ProjectID: project, Type: e.Type, QuestionID: e.Q, RunID: e.Run,
		At: time.Unix(0, e.At).UTC(), Data: e.Data}
}

func newLeaseID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func ms(t time.Time) int64 { return t.UnixMilli() }

// wallMS is the wall clock in ms: what record lifetimes (like Redis TTLs)
// are measured against.
func wallMS() int64 { return time.Now().UnixMilli() }
