package native

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"strconv"
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

// tree is an ordered index.
type tree = btree.BTreeG[item]

func newTree() *tree { return btree.NewG(16, lessItem) }

// upTo calls f with the entries whose key is at most k, smallest first,
// until f returns false.
func upTo(t *tree, k int64, f func(item) bool) {
	t.AscendLessThan(item{k: k + 1}, f)
}

// proj is everything kept of one project.
type proj struct {
	name       string
	registered bool // listed by Projects (it asked a question or paused a run)
	seq        int64

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
	audit  []*aurec // audit[auHead:] are the trail
	auHead int
	auBase int64              // absolute index of audit[0]
	auByQ  map[string][]int64 // question id -> absolute indexes in audit
	lastAu evid
}

func newProj(name string) *proj {
	return &proj{name: name, qs: map[string]*qrec{}, all: newTree(), byStatus: map[string]*tree{},
		deadlines: newTree(), escal: newTree(), exp: newTree(), ttl: newTree(),
		runs: map[string]*runrec{}, runTTL: newTree(), idem: map[string]*ttlrec{}, idemTTL: newTree(),
		drafts: map[string]*draftrec{}, draftTTL: newTree(), dlv: map[string]*dlvrec{}, outbox: newTree(),
		auByQ: map[string][]int64{}}
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
}

type qmeta struct {
	Seq      int64  `json:"s"`
	Status   string `json:"st"`
	Run      string `json:"r"`
	FP       string `json:"f,omitempty"`
	Read     bool   `json:"rd,omitempty"`
	Updated  int64  `json:"u"` // unix ns
	Resumed  string `json:"rr,omitempty"`
	Esc      int    `json:"el,omitempty"`
	Deadline int64  `json:"x"`            // ms
	EscNext  int64  `json:"en,omitempty"` // ms, 0: none
	Exp      int64  `json:"ex,omitempty"` // ms: final, when the sweeper drops it
	TTL      int64  `json:"t"`            // wall-clock ms when it goes
	Idem     string `json:"i,omitempty"`  // its idempotency key's name
	Votes    []vrec `json:"v,omitempty"`
	VSeq     int    `json:"vs,omitempty"`
}

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
	if m.Resumed != "" {
		h["resumed_run_id"] = m.Resumed
	}
	for _, v := range m.Votes {
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
	ID          string            `json:"id"`
	Agent       string            `json:"a,omitempty"`
	Status      string            `json:"st,omitempty"`
	ResumedFrom string            `json:"rf,omitempty"`
	ResumedBy   string            `json:"rb,omitempty"`
	Pending     string            `json:"p,omitempty"`
	Created     int64             `json:"c"`
	Updated     int64             `json:"u"`
	FPs         map[string]string `json:"f,omitempty"` // fingerprint -> id ("id|until ms" once answered)
	Qs          []string          `json:"q,omitempty"` // the run's questions in creation order
	TTL         int64             `json:"t"`
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

type evrec struct {
	id   evid
	Type string          `json:"y"`
	Q    string          `json:"q,omitempty"`
	Run  string          `json:"r,omitempty"`
	At   int64           `json:"at"`
	Data json.RawMessage `json:"d,omitempty"`
}

type aurec struct {
	id     evid
	Type   string `json:"y"`
	Q      string `json:"q,omitempty"`
	Run    string `json:"r,omitempty"`
	By     string `json:"b,omitempty"`
	Detail string `json:"d,omitempty"`
	At     int64  `json:"at"`
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
