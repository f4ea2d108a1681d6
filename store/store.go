package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store/internal/wakehub"
	"github.com/redis/go-redis/v9"
)

// Options configures a Store.
type Options struct {
	// URL of Redis: redis://, rediss://, unix://; Sentinel with
	// redis+sentinel://host:26379?master_name=mymaster&addr=host2:26379;
	// Cluster with redis+cluster://host:7000?addr=host:7001. Empty: an
	// in-process Redis-compatible server (tests; lost on restart).
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
	// retention). See Trim and docs/operations.md "Redis keys and lifetimes".
	Retention time.Duration
	// AuditRetention keeps audit entries this long (default: Retention).
	AuditRetention time.Duration
	// DeliveryKeep keeps an undelivered resume webhook this long, whatever
	// the retention of its question (default 25h: the deliverer gives up
	// after 24h). Set it above the deliverer's GiveUpAfter.
	DeliveryKeep time.Duration
	Logger       *slog.Logger
}

// Store is lifecycle.Store on Redis.
type Store struct {
	rdb       redis.UniversalClient
	prefix    string
	maxLen    int
	log       *slog.Logger
	embedded  *embedded
	hub       *wakehub.Hub
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

var _ lifecycle.Store = (*Store)(nil)

const defaultRetention = 7 * 24 * time.Hour

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
	s.hub = wakehub.New()
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

// Ping implements lifecycle.Store.
func (s *Store) Ping(ctx context.Context) error { return s.wrap(s.rdb.Ping(ctx).Err()) }

// wrap turns Redis failures into an unavailable error that carries no
// connection details.
func (s *Store) wrap(err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return nil
	}
	var ce *domain.Error
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
var errUnavailable = &domain.Error{Code: domain.EUnavailable, Message: "the store is unavailable; try again in a moment"}

// unavailable is a Redis failure. Its Error() keeps the cause for the log;
// errors.As finds the plain domain.Error shown to users.
type unavailable struct{ cause error }

func (u *unavailable) Error() string { return errUnavailable.Message + ": " + u.cause.Error() }

func (u *unavailable) Unwrap() []error { return []error{errUnavailable, u.cause} }

// LogRedisTo sends go-redis's own log lines (pool and reconnect notices) to
// log as structured records instead of raw lines on stderr. go-redis keeps
// one logger per process, so the program calls this once at start.
func LogRedisTo(log *slog.Logger) { redis.SetLogger(redisLogger{log}) }

type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, "redis client notice", "detail", fmt.Sprintf(format, v...))
}
