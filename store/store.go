// Package store implements core.Store on Redis through go-redis's
// UniversalClient (standalone, Sentinel, Cluster), and the embedded default:
// the same code against an in-process Redis-compatible server (miniredis).
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/redis/go-redis/v9"
)

// Options configures a Store.
type Options struct {
	// URL of Redis: redis://, rediss://, unix://; Sentinel with
	// redis+sentinel://host:26379?master_name=mymaster&addr=host2:26379;
	// Cluster with redis+cluster://host:7000?addr=host:7001. Empty: the
	// embedded in-process store (lost on restart).
	URL string
	// Prefix of every key (default "askbridge").
	Prefix string
	// EventsMaxLen bounds each project's event stream (default 10000).
	EventsMaxLen int
	// PoolSize bounds Redis connections per replica (default 32), whatever
	// the number of waiters; the pub/sub connection comes on top (per Cluster
	// master for the pool).
	PoolSize int
	// Retention keeps a final question this long, and bounds every other
	// key and index entry of a project (default 7 days; the router's
	// retention). See Trim and README "Redis keys and lifetimes".
	Retention time.Duration
	// AuditRetention keeps audit entries this long (default: Retention).
	AuditRetention time.Duration
	// DeliveryKeep keeps an undelivered resume webhook this long, whatever
	// the retention of its question (default 25h: the deliverer gives up
	// after 24h). Set it above the deliverer's GiveUpAfter.
	DeliveryKeep time.Duration
	Logger       *slog.Logger
}

// Store is core.Store on Redis.
type Store struct {
	rdb       redis.UniversalClient
	prefix    string
	maxLen    int
	log       *slog.Logger
	embedded  *embedded
	hub       *hub
	retention time.Duration // of final records, events, runs
	auditKeep time.Duration // of audit entries
	channel   string
	// deliveryKeep is Options.DeliveryKeep; claims counts claims, so each
	// has its own lease token, and rotates the order projects are read in.
	deliveryKeep time.Duration
	claims       atomic.Uint64
	leaseID      string

	trimMu     sync.Mutex
	trimCursor map[string]int64 // per project: where the next scan of all starts

	projMu     sync.Mutex
	known      map[string]bool // projects registered (or read) by this replica
	projLoaded bool            // known includes the projects set as read once

	cancel context.CancelFunc
	done   chan struct{}
}

var _ core.Store = (*Store)(nil)

// Open connects to Redis (or starts the embedded store when opts.URL is
// empty) and starts the replica's single subscriber loop.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.Prefix == "" {
		opts.Prefix = "askbridge"
	}
	if strings.ContainsAny(opts.Prefix, "{}") {
		return nil, fmt.Errorf("store: prefix %q must not contain { or }", opts.Prefix)
	}
	if opts.EventsMaxLen <= 0 {
		opts.EventsMaxLen = 10000
	}
	if opts.PoolSize <= 0 {
		opts.PoolSize = 32
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Retention <= 0 {
		opts.Retention = defaultRetention
	}
	if opts.DeliveryKeep <= 0 {
		opts.DeliveryKeep = DefaultDeliveryKeep
	}
	if opts.AuditRetention <= 0 {
		opts.AuditRetention = opts.Retention
	}
	s := &Store{prefix: opts.Prefix, maxLen: opts.EventsMaxLen, log: opts.Logger, retention: opts.Retention,
		auditKeep: opts.AuditRetention, channel: opts.Prefix + ":notify", known: map[string]bool{},
		trimCursor: map[string]int64{}, done: make(chan struct{}),
		deliveryKeep: opts.DeliveryKeep, leaseID: newLeaseID()}
	url := opts.URL
	if url == "" {
		e, err := startEmbedded()
		if err != nil {
			return nil, err
		}
		s.embedded = e
		url = "redis://" + e.addr()
	}
	uo, err := ParseURL(url)
	if err != nil {
		s.closeEmbedded()
		return nil, err
	}
	uo.PoolSize = opts.PoolSize
	// go-redis (since v9.2x) keeps a second pool of up to 10 connections,
	// with 128 KiB buffers each, for pipelines. The store's pipelines are
	// a few commands (a record's two keys, a page of a list), so they share
	// the one pool: a replica holds PoolSize + 1 (pub/sub) connections.
	uo.PipelinePoolSize = -1
	s.rdb = redis.NewUniversalClient(uo)
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		s.rdb.Close()
		s.closeEmbedded()
		return nil, fmt.Errorf("store: cannot reach Redis at %s: %w", RedactURL(url), err)
	}
	s.hub = newHub()
	lctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	ready := make(chan struct{})
	go s.subscribe(lctx, ready)
	select {
	case <-ready:
	case <-time.After(5 * time.Second):
	}
	return s, nil
}

// EmbeddedURL is the address of the embedded server, so further replicas
// in the same process (tests) can share it; "" for a real Redis.
func (s *Store) EmbeddedURL() string {
	if s.embedded == nil {
		return ""
	}
	return "redis://" + s.embedded.addr()
}

// Embedded reports whether this is the in-process store.
func (s *Store) Embedded() bool { return s.embedded != nil }

// Client exposes the Redis client (for readiness checks and tools).
func (s *Store) Client() redis.UniversalClient { return s.rdb }

// Close stops the subscriber loop and closes connections.
func (s *Store) Close() error {
	s.cancel()
	<-s.done
	err := s.rdb.Close()
	s.closeEmbedded()
	return err
}

func (s *Store) closeEmbedded() {
	if s.embedded != nil {
		s.embedded.close()
	}
}

// ParseURL turns a Redis URL into UniversalOptions; see Options.URL.
func ParseURL(raw string) (*redis.UniversalOptions, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("store: invalid Redis URL %s", RedactURL(raw))
	}
	switch u.Scheme {
	case "redis+sentinel", "rediss+sentinel":
		u.Scheme = strings.TrimSuffix(u.Scheme, "+sentinel")
		fo, err := redis.ParseFailoverURL(u.String())
		if err != nil {
			return nil, fmt.Errorf("store: invalid Sentinel URL %s: %v", RedactURL(raw), redactErr(err, u))
		}
		if fo.MasterName == "" {
			return nil, fmt.Errorf("store: Sentinel URL %s needs ?master_name=", RedactURL(raw))
		}
		return &redis.UniversalOptions{Addrs: fo.SentinelAddrs, MasterName: fo.MasterName, Username: fo.Username,
			Password: fo.Password, SentinelUsername: fo.SentinelUsername, SentinelPassword: fo.SentinelPassword,
			DB: fo.DB, TLSConfig: fo.TLSConfig}, nil
	case "redis+cluster", "rediss+cluster":
		u.Scheme = strings.TrimSuffix(u.Scheme, "+cluster")
		co, err := redis.ParseClusterURL(u.String())
		if err != nil {
			return nil, fmt.Errorf("store: invalid Cluster URL %s: %v", RedactURL(raw), redactErr(err, u))
		}
		return &redis.UniversalOptions{Addrs: co.Addrs, Username: co.Username, Password: co.Password,
			TLSConfig: co.TLSConfig, IsClusterMode: true}, nil
	case "redis", "rediss", "unix":
		o, err := redis.ParseURL(raw)
		if err != nil {
			return nil, fmt.Errorf("store: invalid Redis URL %s: %v", RedactURL(raw), redactErr(err, u))
		}
		uo := &redis.UniversalOptions{Addrs: []string{o.Addr}, Username: o.Username, Password: o.Password,
			DB: o.DB, TLSConfig: o.TLSConfig}
		if o.Network == "unix" {
			uo.Dialer = func(ctx context.Context, _, addr string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", addr)
			}
		}
		return uo, nil
	}
	return nil, fmt.Errorf("store: unsupported Redis URL scheme %q (use redis://, rediss://, unix://, redis+sentinel:// or redis+cluster://)", u.Scheme)
}

// RedactURL hides the password of a Redis URL for logs and errors.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

func redactErr(err error, u *url.URL) string {
	msg := err.Error()
	if p, ok := u.User.Password(); ok && p != "" {
		msg = strings.ReplaceAll(msg, p, "xxxxx")
	}
	return msg
}

// base is the key prefix of a project; the hash tag keeps a project's keys
// in one Cluster slot.
func (s *Store) base(project string) string { return s.prefix + ":{" + project + "}:" }

func (s *Store) qkey(project, id string) string { return s.base(project) + "q:" + id }

func ms(t time.Time) int64 { return t.UnixMilli() }

// stamp is how times are written in hashes and streams: Unix nanoseconds,
// which Redis keeps as an 8-byte integer in listpacks and streams.
func stamp(t time.Time) string { return strconv.FormatInt(t.UnixNano(), 10) }

// parseStamp reads a time written by stamp, or as RFC 3339 (the earlier
// layout); the zero time when empty or unreadable.
func parseStamp(s string) time.Time {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(0, n).UTC()
	}
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// common are the first nine arguments of every question script.
func (s *Store) common(project string, now time.Time, retention time.Duration) []any {
	if retention <= 0 {
		retention = s.retention
	}
	return []any{s.base(project), ms(now), stamp(now), retention.Milliseconds(), core.ReattachWindow.Milliseconds(),
		s.maxLen, s.channel, project, minID(now.Add(-s.auditKeep))}
}

const defaultRetention = 7 * 24 * time.Hour

// minID is the stream id before which entries are older than t.
func minID(t time.Time) string {
	if t.UnixMilli() < 0 {
		return "0-0"
	}
	return fmt.Sprintf("%d-0", ms(t))
}

func personJSON(p *core.Person) string {
	if p == nil {
		return ""
	}
	b, _ := json.Marshal(p)
	return string(b)
}

func (s *Store) register(ctx context.Context, project string) error {
	s.projMu.Lock()
	ok := s.known[project]
	s.projMu.Unlock()
	if ok {
		return nil
	}
	if err := s.rdb.SAdd(ctx, s.prefix+":projects", project).Err(); err != nil {
		return err
	}
	s.projMu.Lock()
	s.known[project] = true
	s.projMu.Unlock()
	return nil
}

// Create implements core.Store.
func (s *Store) Create(ctx context.Context, q *core.Question) (core.CreateResult, error) {
	if err := s.register(ctx, q.ProjectID); err != nil {
		return core.CreateResult{}, s.wrap(err)
	}
	supJSON, _ := json.Marshal(result{CancelReason: core.CancelSuperseded})
	now := q.CreatedAt
	// Keys live while the question may be pending, plus retention; once
	// final, retention from then (finalize in scripts.go).
	ttl := q.ExpiresAt.Sub(now) + s.retention
	esc := int64(0)
	if len(q.Escalation) > 0 {
		esc = ms(q.CreatedAt.Add(time.Duration(q.Escalation[0].After)))
	}
	asked := fmt.Sprintf("%d question(s) by %s", len(q.Questions), q.AgentID)
	args := append(s.common(q.ProjectID, now, 0), q.ID, q.RunID, q.AgentID, encodeDoc(q),
		ms(q.ExpiresAt), q.Fingerprint, q.IdempotencyKey, supJSON, ttl.Milliseconds(), esc, asked, boolArg(q.Kind == core.KindApproval))
	res, err := createScript.Run(ctx, s.rdb, []string{s.qkey(q.ProjectID, q.ID)}, args...).StringSlice()
	if err != nil {
		return core.CreateResult{}, s.wrap(err)
	}
	if res[0] == "run_owned" {
		return core.CreateResult{}, errRunOwned(q.RunID)
	}
	out := core.CreateResult{}
	id := res[1]
	if res[0] == "reattach" {
		out.Reattached = true
	} else if len(res) > 2 && res[2] != "" {
		if sup, err := s.Get(ctx, q.ProjectID, res[2]); err == nil {
			out.Superseded = sup
		}
	}
	out.Question, err = s.Get(ctx, q.ProjectID, id)
	return out, err
}

// errRunOwned refuses a run id another agent started; it does not say which.
func errRunOwned(run string) error {
	return &core.Error{Code: core.EConflict, Message: fmt.Sprintf("run %s belongs to another agent", run),
		Details: []core.Detail{{Field: "run_id", Problem: "a run belongs to the agent that started it; use a run id of your own"}}}
}

// Locate implements core.Store. There is no id→project index: ids made by
// core.NewQuestionID carry a hash of their project, so Locate first looks
// in the projects with that hash (one round trip, usually one key), then,
// for other ids (an older release's) or a miss, in every project.
func (s *Store) Locate(ctx context.Context, id string) (string, error) {
	hint, hinted := core.ProjectHint(id)
	tried := map[string]bool{}
	for pass := range 3 {
		// 0: hinted projects as known; 1: the same after reading the
		// projects set; 2: every project.
		ps, err := s.projectList(ctx, pass == 1)
		if err != nil {
			return "", err
		}
		var cands []string
		for _, p := range ps {
			if !tried[p] && (pass == 2 || !hinted || core.ProjectHash(p) == hint) {
				cands = append(cands, p)
				tried[p] = true
			}
		}
		if len(cands) == 0 {
			continue
		}
		pipe := s.rdb.Pipeline()
		cmds := make([]*redis.IntCmd, len(cands))
		for i, p := range cands {
			cmds[i] = pipe.Exists(ctx, s.qkey(p, id))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return "", s.wrap(err)
		}
		for i, c := range cmds {
			if c.Val() == 1 {
				return cands[i], nil
			}
		}
	}
	return "", core.Errorf(core.ENotFound, "no question %s", id)
}

// projectList returns the projects known to this replica; refresh reads
// them from Redis first (another replica may have registered one).
func (s *Store) projectList(ctx context.Context, refresh bool) ([]string, error) {
	s.projMu.Lock()
	loaded := s.projLoaded
	s.projMu.Unlock()
	if refresh || !loaded {
		ps, err := s.rdb.SMembers(ctx, s.prefix+":projects").Result()
		if err != nil {
			return nil, s.wrap(err)
		}
		s.projMu.Lock()
		for _, p := range ps {
			s.known[p] = true
		}
		s.projLoaded = true
		s.projMu.Unlock()
	}
	s.projMu.Lock()
	defer s.projMu.Unlock()
	out := make([]string, 0, len(s.known))
	for p := range s.known {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// Get implements core.Store. Unlike a list, which skips a corrupt record,
// Get reports it as the error it is rather than as "not found".
func (s *Store) Get(ctx context.Context, project, id string) (*core.Question, error) {
	pipe := s.rdb.Pipeline()
	hc, dc := pipe.HGetAll(ctx, s.qkey(project, id)), pipe.Get(ctx, s.base(project)+"d:"+id)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, s.wrap(err)
	}
	if len(hc.Val()) == 0 || dc.Err() != nil {
		return nil, core.Errorf(core.ENotFound, "no question %s in project %s", id, project)
	}
	q, _, err := decode(project, id, hc.Val(), dc.Val())
	return q, err
}

// List implements core.Store.
func (s *Store) List(ctx context.Context, project string, status core.Status, limit int) ([]*core.Question, error) {
	if limit <= 0 {
		limit = 500
	}
	if status == core.StatusPending {
		return s.listPending(ctx, project, limit)
	}
	// Non-pending filters scan more of the index to fill the page.
	scan := limit
	if status != "" {
		scan = limit * 4
	}
	ids, err := s.rdb.ZRevRange(ctx, s.base(project)+"all", 0, int64(scan-1)).Result()
	if err != nil {
		return nil, s.wrap(err)
	}
	qs, _, err := s.getMany(ctx, project, "all", ids)
	if err != nil {
		return nil, err
	}
	out := make([]*core.Question, 0, len(qs))
	for i := len(qs) - 1; i >= 0; i-- { // oldest first
		if status == "" || qs[i].Status == status {
			out = append(out, qs[i])
		}
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, nil
}

// listPending lists the newest limit pending questions, oldest first. The
// deadlines index holds exactly the pending questions, so no index of its
// own is kept for them; creation order is each record's sequence number.
func (s *Store) listPending(ctx context.Context, project string, limit int) ([]*core.Question, error) {
	ids, err := s.rdb.ZRange(ctx, s.base(project)+"deadlines", 0, -1).Result()
	if err != nil {
		return nil, s.wrap(err)
	}
	if len(ids) > limit { // keep the newest: read only the sequence numbers first
		pipe := s.rdb.Pipeline()
		cmds := make([]*redis.StringCmd, len(ids))
		for i, id := range ids {
			cmds[i] = pipe.HGet(ctx, s.qkey(project, id), "seq")
		}
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return nil, s.wrap(err)
		}
		seqs := make(map[string]int64, len(ids))
		for i, c := range cmds {
			seqs[ids[i]], _ = strconv.ParseInt(c.Val(), 10, 64)
		}
		sort.Slice(ids, func(i, j int) bool { return seqs[ids[i]] > seqs[ids[j]] })
		ids = ids[:limit]
	}
	qs, seqs, err := s.getMany(ctx, project, "deadlines", ids)
	if err != nil {
		return nil, err
	}
	order := make(map[*core.Question]int64, len(qs))
	out := qs[:0]
	for i, q := range qs {
		if q.Status == core.StatusPending {
			order[q] = seqs[i]
			out = append(out, q)
		}
	}
	sort.Slice(out, func(i, j int) bool { return order[out[i]] < order[out[j]] })
	return out, nil
}

// getMany reads questions in one round trip, with their sequence numbers,
// and drops index entries whose record has expired.
func (s *Store) getMany(ctx context.Context, project, index string, ids []string) ([]*core.Question, []int64, error) {
	if len(ids) == 0 {
		return nil, nil, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	docs := make([]*redis.StringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGetAll(ctx, s.qkey(project, id))
		docs[i] = pipe.Get(ctx, s.base(project)+"d:"+id)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, nil, s.wrap(err)
	}
	out := make([]*core.Question, 0, len(ids))
	seqs := make([]int64, 0, len(ids))
	var gone []any
	for i, c := range cmds {
		h := c.Val()
		if len(h) == 0 || docs[i].Err() != nil {
			gone = append(gone, ids[i])
			continue
		}
		q, seq, err := decode(project, ids[i], h, docs[i].Val())
		if err != nil {
			s.log.Warn("skipping corrupt question record", "project", project, "question", ids[i], "err", err)
			continue
		}
		out = append(out, q)
		seqs = append(seqs, seq)
	}
	if len(gone) > 0 && index != "" {
		s.rdb.ZRem(ctx, s.base(project)+index, gone...)
	}
	return out, seqs, nil
}

// RunQuestions implements core.Store. A run's questions are fields
// q:<seq> of its hash (runs of the earlier layout: the zset runq:<run>).
func (s *Store) RunQuestions(ctx context.Context, project, run string) ([]*core.Question, error) {
	pipe := s.rdb.Pipeline()
	hc := pipe.HGetAll(ctx, s.base(project)+"run:"+run)
	zc := pipe.ZRangeWithScores(ctx, s.base(project)+"runq:"+run, 0, -1)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, s.wrap(err)
	}
	type entry struct {
		seq int64
		id  string
	}
	var es []entry
	for k, v := range hc.Val() {
		if n, ok := strings.CutPrefix(k, "q:"); ok {
			seq, _ := strconv.ParseInt(n, 10, 64)
			es = append(es, entry{seq, v})
		}
	}
	for _, z := range zc.Val() {
		es = append(es, entry{int64(z.Score), fmt.Sprint(z.Member)})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].seq < es[j].seq })
	ids := make([]string, 0, len(es))
	for i, e := range es {
		if i == 0 || e.id != es[i-1].id {
			ids = append(ids, e.id)
		}
	}
	qs, _, err := s.getMany(ctx, project, "", ids)
	if qs == nil && err == nil {
		qs = []*core.Question{}
	}
	return qs, err
}

// AttachCopy implements core.Store: the copy's line in d:<id> replaces the
// line of the same target, or is added.
func (s *Store) AttachCopy(ctx context.Context, project, id string, t core.Target) error {
	n, err := attachScript.Run(ctx, s.rdb, []string{s.qkey(project, id), s.base(project) + "d:" + id},
		t.Platform, t.Channel, t.ThreadTS, copyLine(t)).Int()
	if err != nil {
		return s.wrap(err)
	}
	if n == 0 {
		return core.Errorf(core.ENotFound, "no question %s in project %s", id, project)
	}
	return nil
}

// Transition implements core.Store.
func (s *Store) Transition(ctx context.Context, project, id string, tr core.Transition) (*core.Question, error) {
	if !tr.To.Final() {
		return nil, core.Errorf(core.EInvalid, "cannot move a question to %q", tr.To)
	}
	at := tr.At
	if at.IsZero() {
		at = time.Now().UTC()
	}
	resJSON := resultJSON(tr, at)
	requirePaused := "0"
	if tr.RequirePausedRun {
		requirePaused = "1"
	}
	args := append(s.common(project, at, tr.Retention), id, string(tr.To), resJSON, core.EventForStatus(tr.To),
		requirePaused, tr.ContinuationRunID, tr.DeliveryID, personJSON(tr.By), transitionDetail(tr), s.deliveryKeep.Milliseconds())
	out, err := transitionScript.Run(ctx, s.rdb, []string{s.qkey(project, id)}, args...).StringSlice()
	if err != nil {
		return nil, s.wrap(err)
	}
	switch out[0] {
	case "notfound":
		return nil, core.Errorf(core.ENotFound, "no question %s in project %s", id, project)
	case "run_not_paused":
		q, _ := s.Get(ctx, project, id)
		state := out[1]
		if state == "" {
			state = "unknown"
		}
		return q, core.Errorf(core.ERunNotPaused, "run is %s: report the pause (POST .../agent-runs/{run}/pause) before answering a webhook-mode question", state)
	case "final":
		q, err := s.Get(ctx, project, id)
		if err != nil {
			return nil, err
		}
		return q, core.StatusError(q)
	}
	return s.Get(ctx, project, id)
}

func resultJSON(tr core.Transition, at time.Time) string {
	res := result{RespondedBy: tr.By, CancelReason: tr.CancelReason, CancelNote: tr.CancelNote, Defaulted: tr.Defaulted}
	if tr.Answer != nil {
		res.Answers, res.Selections, res.Response = tr.Answer.Answers, tr.Answer.Selections, tr.Answer.Response
		res.setApproval(tr.Answer)
	}
	if tr.To == core.StatusAnswered || (tr.To == core.StatusCancelled && tr.By != nil) {
		res.RespondedAt = &at
	}
	b, _ := json.Marshal(res)
	return string(b)
}

// transitionDetail is the audit trail's one-line account of a transition.
func transitionDetail(tr core.Transition) string {
	switch {
	case tr.Answer != nil && tr.Defaulted:
		return "default on timeout: " + tr.Answer.Response
	case tr.Answer != nil:
		return tr.Answer.Response
	case tr.CancelReason != "" && tr.CancelNote != "":
		return tr.CancelReason + ": " + tr.CancelNote
	case tr.CancelReason != "":
		return tr.CancelReason
	}
	return ""
}

// MarkRead implements core.Store.
func (s *Store) MarkRead(ctx context.Context, project, id string) (*core.Question, error) {
	n, err := markReadScript.Run(ctx, s.rdb, []string{s.qkey(project, id)}).Int()
	if err != nil {
		return nil, s.wrap(err)
	}
	if n == 0 {
		return nil, core.Errorf(core.ENotFound, "no notification %s in project %s", id, project)
	}
	return s.Get(ctx, project, id)
}

// Due implements core.Store.
func (s *Store) Due(ctx context.Context, now time.Time, limit int) ([]core.Ref, error) {
	return s.dueIn(ctx, "deadlines", now, limit)
}

// dueIn lists, across projects, the members of a per-project time index
// whose time has come.
func (s *Store) dueIn(ctx context.Context, index string, now time.Time, limit int) ([]core.Ref, error) {
	projects, err := s.Projects(ctx)
	if err != nil {
		return nil, err
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.StringSliceCmd, len(projects))
	for i, p := range projects {
		cmds[i] = pipe.ZRangeByScore(ctx, s.base(p)+index, &redis.ZRangeBy{Min: "-inf",
			Max: strconv.FormatInt(ms(now), 10), Count: int64(limit)})
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, s.wrap(err)
	}
	var refs []core.Ref
	for i, c := range cmds {
		for _, id := range c.Val() {
			refs = append(refs, core.Ref{ProjectID: projects[i], ID: id})
		}
	}
	return refs, nil
}

// Projects implements core.Store.
func (s *Store) Projects(ctx context.Context) ([]string, error) {
	ps, err := s.rdb.SMembers(ctx, s.prefix+":projects").Result()
	sort.Strings(ps)
	return ps, s.wrap(err)
}

// Run implements core.Store.
func (s *Store) Run(ctx context.Context, project, id string) (*core.Run, error) {
	h, err := s.rdb.HGetAll(ctx, s.base(project)+"run:"+id).Result()
	if err != nil {
		return nil, s.wrap(err)
	}
	if len(h) == 0 || h["status"] == "" {
		return nil, core.Errorf(core.ENotFound, "no run %s in project %s", id, project)
	}
	r := &core.Run{ID: h["id"], ProjectID: project, AgentID: h["agent_id"], Status: core.RunStatus(h["status"]),
		ResumedFrom: h["resumed_from"], ResumedBy: h["resumed_by"]}
	r.CreatedAt = parseStamp(h["created_at"])
	r.UpdatedAt = parseStamp(h["updated_at"])
	return r, nil
}

// PauseRun implements core.Store.
func (s *Store) PauseRun(ctx context.Context, project, id, agentID string, at time.Time) (*core.Run, error) {
	if err := s.register(ctx, project); err != nil {
		return nil, s.wrap(err)
	}
	args := append(s.common(project, at, 0), id, agentID)
	out, err := pauseScript.Run(ctx, s.rdb, []string{s.base(project) + "run:" + id}, args...).StringSlice()
	if err != nil {
		return nil, s.wrap(err)
	}
	if out[0] == "run_owned" {
		return nil, errRunOwned(id)
	}
	if out[0] == "resumed" {
		r, _ := s.Run(ctx, project, id)
		return r, core.Errorf(core.EConflict, "run %s was already resumed as run %s", id, out[1])
	}
	return s.Run(ctx, project, id)
}

// Events implements core.Store.
func (s *Store) Events(ctx context.Context, project, after string, limit int) ([]core.Event, error) {
	if after == "$" {
		return nil, nil
	}
	if after == "" {
		after = "0-0"
	}
	if limit <= 0 {
		limit = 100
	}
	res, err := s.rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{s.base(project) + "events", after},
		Count: int64(limit), Block: -1}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		if strings.Contains(err.Error(), "Invalid stream ID") || strings.Contains(err.Error(), "invalid stream ID") {
			return nil, core.Errorf(core.EInvalid, "Last-Event-ID %q is not an event id", after)
		}
		return nil, s.wrap(err)
	}
	var out []core.Event
	for _, st := range res {
		for _, m := range st.Messages {
			ev := core.Event{ID: m.ID, ProjectID: project, Type: str(m.Values["type"]),
				QuestionID: str(m.Values["question"]), RunID: str(m.Values["run"])}
			ev.At = parseStamp(str(m.Values["at"]))
			if d := str(m.Values["data"]); d != "" {
				ev.Data = json.RawMessage(d)
			}
			out = append(out, ev)
		}
	}
	return out, nil
}

// LastEventID returns the id of the newest event of a project ("0-0" when none).
func (s *Store) LastEventID(ctx context.Context, project string) (string, error) {
	res, err := s.rdb.XRevRangeN(ctx, s.base(project)+"events", "+", "-", 1).Result()
	if err != nil || len(res) == 0 {
		return "0-0", s.wrap(err)
	}
	return res[0].ID, nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// AppendEvent implements core.Store.
func (s *Store) AppendEvent(ctx context.Context, ev core.Event) error {
	if ev.At.IsZero() {
		ev.At = time.Now().UTC()
	}
	vals := []any{"type", ev.Type, "question", ev.QuestionID, "run", ev.RunID, "at", stamp(ev.At)}
	if len(ev.Data) > 0 {
		vals = append(vals, "data", string(ev.Data))
	}
	pipe := s.rdb.Pipeline()
	pipe.XAdd(ctx, &redis.XAddArgs{Stream: s.base(ev.ProjectID) + "events", MaxLen: int64(s.maxLen), Approx: true, Values: vals})
	pipe.Publish(ctx, s.channel, ev.ProjectID+"\x1f"+ev.QuestionID)
	_, err := pipe.Exec(ctx)
	return s.wrap(err)
}

// PutDraft implements core.Store. A question's drafts are one hash,
// draft:<id> (a field per person), so they go with the question when it
// becomes final; ttl bounds the hash in any case.
func (s *Store) PutDraft(ctx context.Context, project, id, person string, draft map[string][]string, ttl time.Duration) error {
	if ttl <= 0 {
		ttl = s.retention
	}
	b, _ := json.Marshal(draft)
	pipe := s.rdb.TxPipeline()
	pipe.HSet(ctx, s.base(project)+"draft:"+id, person, b)
	pipe.PExpire(ctx, s.base(project)+"draft:"+id, ttl)
	_, err := pipe.Exec(ctx)
	return s.wrap(err)
}

// GetDraft implements core.Store (drafts of the earlier layout, one
// string key draft:<id>:<person>, are read too).
func (s *Store) GetDraft(ctx context.Context, project, id, person string) (map[string][]string, error) {
	pipe := s.rdb.Pipeline()
	hc := pipe.HGet(ctx, s.base(project)+"draft:"+id, person)
	lc := pipe.Get(ctx, s.base(project)+"draft:"+id+":"+person)
	out := map[string][]string{}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return out, s.wrap(err)
	}
	b := hc.Val()
	if b == "" {
		b = lc.Val()
	}
	if b != "" {
		_ = json.Unmarshal([]byte(b), &out)
	}
	return out, nil
}

// Once implements core.Store. The key lives for ttl (retention when ttl
// is not positive).
func (s *Store) Once(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		ttl = s.retention
	}
	ok, err := s.rdb.SetNX(ctx, s.prefix+":once:"+key, 1, ttl).Result()
	return ok, s.wrap(err)
}

// Ping implements core.Store.
func (s *Store) Ping(ctx context.Context) error { return s.wrap(s.rdb.Ping(ctx).Err()) }

// wrap turns Redis failures into an unavailable error that carries no
// connection details.
func (s *Store) wrap(err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return nil
	}
	var ce *core.Error
	if errors.As(err, &ce) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &unavailable{cause: err}
}

// errUnavailable is what callers and users see of a Redis failure: no
// address, no driver detail.
var errUnavailable = &core.Error{Code: core.EUnavailable, Message: "the store is unavailable; try again in a moment"}

// unavailable is a Redis failure. Its Error() keeps the cause for the log;
// errors.As finds the plain core.Error shown to users.
type unavailable struct{ cause error }

func (u *unavailable) Error() string { return errUnavailable.Message + ": " + u.cause.Error() }

func (u *unavailable) Unwrap() []error { return []error{errUnavailable, u.cause} }

// Vote implements core.Store.
func (s *Store) Vote(ctx context.Context, project, id string, v core.Vote, required int, veto bool, tr core.Transition) (*core.Question, bool, error) {
	if v.At.IsZero() {
		v.At = time.Now().UTC()
	}
	at := v.At
	if tr.At.IsZero() {
		tr.At = at
	}
	vote, _ := json.Marshal(v)
	vetoArg, requirePaused := "0", "0"
	if veto {
		vetoArg = "1"
	}
	if tr.RequirePausedRun {
		requirePaused = "1"
	}
	args := append(s.common(project, at, tr.Retention), id, v.By.Platform+":"+v.By.ID, vote, v.Label, required, vetoArg,
		resultJSON(tr, tr.At), requirePaused, tr.ContinuationRunID, tr.DeliveryID, personJSON(&v.By), s.deliveryKeep.Milliseconds())
	out, err := voteScript.Run(ctx, s.rdb, []string{s.qkey(project, id)}, args...).StringSlice()
	if err != nil {
		return nil, false, s.wrap(err)
	}
	switch out[0] {
	case "notfound":
		return nil, false, core.Errorf(core.ENotFound, "no question %s in project %s", id, project)
	case "run_not_paused":
		q, _ := s.Get(ctx, project, id)
		return q, false, core.Errorf(core.ERunNotPaused, "run is %s: report the pause (POST .../agent-runs/{run}/pause) before answering a webhook-mode question", out[1])
	case "final":
		q, err := s.Get(ctx, project, id)
		if err != nil {
			return nil, false, err
		}
		return q, false, core.StatusError(q)
	}
	q, err := s.Get(ctx, project, id)
	return q, out[0] == "resolved", err
}

// DueEscalations implements core.Store.
func (s *Store) DueEscalations(ctx context.Context, now time.Time, limit int) ([]core.Ref, error) {
	return s.dueIn(ctx, "escal", now, limit)
}

// Escalate implements core.Store.
func (s *Store) Escalate(ctx context.Context, project, id string, level int, next time.Time, detail string, at time.Time) (bool, error) {
	nextMS := int64(0)
	if !next.IsZero() {
		nextMS = ms(next)
	}
	args := append(s.common(project, at, 0), id, level, nextMS, detail)
	n, err := escalateScript.Run(ctx, s.rdb, []string{s.qkey(project, id)}, args...).Int()
	return n == 1, s.wrap(err)
}

// AppendAudit implements core.Store.
func (s *Store) AppendAudit(ctx context.Context, e core.AuditEntry) error {
	if e.At.IsZero() {
		e.At = time.Now().UTC()
	}
	cutoff := minID(e.At.Add(-s.auditKeep))
	return s.wrap(s.rdb.XAdd(ctx, &redis.XAddArgs{Stream: s.base(e.ProjectID) + "audit", MinID: cutoff, Approx: true,
		Values: []any{"type", e.Type, "question", e.QuestionID, "run", e.RunID, "by", personJSON(e.By),
			"detail", e.Detail, "at", stamp(e.At)}}).Err())
}

// Audit implements core.Store.
func (s *Store) Audit(ctx context.Context, project, question string, limit int) ([]core.AuditEntry, error) {
	if limit <= 0 {
		limit = 1000
	}
	out := []core.AuditEntry{}
	start := "-"
	for len(out) < limit {
		msgs, err := s.rdb.XRangeN(ctx, s.base(project)+"audit", start, "+", 1000).Result()
		if err != nil {
			return out, s.wrap(err)
		}
		for _, m := range msgs {
			if question != "" && str(m.Values["question"]) != question {
				continue
			}
			e := core.AuditEntry{ID: m.ID, Type: str(m.Values["type"]), ProjectID: project,
				QuestionID: str(m.Values["question"]), RunID: str(m.Values["run"]), Detail: str(m.Values["detail"])}
			if b := str(m.Values["by"]); b != "" {
				var p core.Person
				if json.Unmarshal([]byte(b), &p) == nil {
					e.By = &p
				}
			}
			e.At = parseStamp(str(m.Values["at"]))
			out = append(out, e)
			if len(out) >= limit {
				break
			}
		}
		if len(msgs) < 1000 {
			break
		}
		start = "(" + msgs[len(msgs)-1].ID
	}
	return out, nil
}

// boolArg is a script argument for a flag.
func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// LogRedisTo sends go-redis's own log lines (pool and reconnect notices) to
// log as structured records instead of raw lines on stderr. go-redis keeps
// one logger per process, so the program calls this once at start.
func LogRedisTo(log *slog.Logger) { redis.SetLogger(redisLogger{log}) }

type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, "redis client notice", "detail", fmt.Sprintf(format, v...))
}
