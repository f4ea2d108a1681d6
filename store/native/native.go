package native

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store/internal/wakehub"
	bolt "go.etcd.io/bbolt"
)

// Options configures the native store.
type Options struct {
	// Dir is the data directory; empty keeps everything in memory (lost on
	// restart: tests and demos).
	Dir string
	// Retention keeps a final question this long (default 7 days).
	Retention time.Duration
	// AuditRetention keeps audit entries this long (default: Retention).
	AuditRetention time.Duration
	// DeliveryKeep keeps an undelivered delivery this long (default 25 h).
	DeliveryKeep time.Duration
	// EventsMaxLen bounds each project's event stream (default 10000).
	EventsMaxLen int
	// CompactAbove: at start, a data file larger than this (default
	// 8 MiB) that is more than half free pages (what retention dropped)
	// is rewritten without them, so its size on disk follows what is kept.
	CompactAbove int64
	// CommitBudget is how long a queued change may wait for its commit
	// before Ping reports the store unavailable (default 2 s).
	CommitBudget time.Duration
	Logger       *slog.Logger
	// CommitHook, when set, runs in every write transaction just before
	// it commits: an error fails the commit as a full disk would, and a
	// hook that blocks holds the commit as a slow disk would (tests).
	CommitHook func() error
	// handBack is how often mapped pages of the data file are given back
	// (default handBackEvery; tests).
	handBack time.Duration
	// handBackCap is how many bytes of mapped pages make the store give
	// them back at once (default handBackCap; tests).
	handBackCap int64
}

const (
	defaultRetention    = 7 * 24 * time.Hour
	defaultDeliveryKeep = 25 * time.Hour
)

// Store is lifecycle.Store in this process. Replica returns further
// handles on the same state (tests of several replicas).
type Store struct {
	*core
	owner bool
	waits *waits // the waits made through this handle (lifecycle.Stats)
}

var _ lifecycle.Store = (*Store)(nil)

// core is the state every handle shares. mu guards everything but the
// commit queue; a change is made in memory under mu, queued for the disk
// in the same order, acknowledged and shown to readers once committed
// (commit.go).
type core struct {
	opts Options
	log  *slog.Logger

	mu       sync.RWMutex
	projects map[string]*proj
	once     map[string]int64 // key -> until (unix ms)
	onceTTL  *tree
	claims   atomic.Uint64
	leaseID  string
	loading  bool   // the state is being read back (load): indexes sorted after
	staged   stage  // while loading, the questions' index entries (index), built after
	sizes    counts // while loading at start, how many keys each bucket holds per project

	hub *wakehub.Hub // in-process watchers: one process, so no pub/sub

	// The database (nil in memory) and its commit queue.
	db       *bolt.DB
	qmu      sync.Mutex
	qcond    *sync.Cond
	queue    []*batch
	queuedAt time.Time // when the oldest queued batch was queued
	cold     []*qrec   // records written by the last commits: their docs go back to the file (release)
	coldRuns []runRef  // runs written by the last commits: they go back to the file (release)
	closing  bool
	failed   atomic.Pointer[error] // why changes are refused (a failed commit), until a write succeeds
	writerWG sync.WaitGroup
	stopped  chan struct{} // closed by Close
	closed   atomic.Bool

	// Publication (commit.go): applied numbers the changes made (under
	// mu), durable is the last one committed, epoch counts the failed
	// commits whose changes were taken back; readers wait on pubCh.
	applied uint64
	onceVer uint64 // the last change to the Once keys
	regVer  uint64 // the last project registered
	durable atomic.Uint64
	epoch   atomic.Uint64
	pubMu   sync.Mutex
	pubCh   chan struct{}
}

// Open opens the store: in memory when opts.Dir is empty, else the
// database in opts.Dir, which it loads (rebuilding every index) and locks
// against a second process.
func Open(opts Options) (*Store, error) {
	if opts.Retention <= 0 {
		opts.Retention = defaultRetention
	}
	if opts.AuditRetention <= 0 {
		opts.AuditRetention = opts.Retention
	}
	if opts.DeliveryKeep <= 0 {
		opts.DeliveryKeep = defaultDeliveryKeep
	}
	if opts.EventsMaxLen <= 0 {
		opts.EventsMaxLen = 10000
	}
	if opts.CompactAbove <= 0 {
		opts.CompactAbove = 8 << 20
	}
	if opts.CommitBudget <= 0 {
		opts.CommitBudget = 2 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &core{opts: opts, log: opts.Logger, projects: map[string]*proj{},
		once: map[string]int64{}, onceTTL: newTree(), hub: wakehub.New(), leaseID: newLeaseID(),
		stopped: make(chan struct{}), pubCh: make(chan struct{})}
	c.qcond = sync.NewCond(&c.qmu)
	if opts.Dir != "" {
		if err := c.openDisk(opts.Dir); err != nil {
			return nil, err
		}
	}
	return &Store{core: c, owner: true, waits: newWaits()}, nil
}

// Replica is another handle on the same store, as a second replica would
// be on a shared Redis; closing it does nothing.
func (s *Store) Replica() *Store { return &Store{core: s.core, waits: newWaits()} }

// Durable reports whether the store writes to a data directory.
func (s *Store) Durable() bool { return s.db != nil }

// Dir is the data directory ("" in memory).
func (s *Store) Dir() string { return s.opts.Dir }

// Close waits for queued changes to be committed and closes the
// database. Only the handle Open returned closes anything.
func (s *Store) Close() error {
	if !s.owner || !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	return s.closeDisk()
}

// errUnavailable is what callers and users see when the store cannot
// answer.
var errUnavailable = &domain.Error{Code: domain.EUnavailable, Message: "the store is unavailable; try again in a moment"}

// unavailable keeps the cause for the log; errors.As finds the plain
// domain.Error shown to users.
type unavailable struct{ cause error }

func (u *unavailable) Error() string   { return errUnavailable.Message + ": " + u.cause.Error() }
func (u *unavailable) Unwrap() []error { return []error{errUnavailable, u.cause} }

// Ping reports whether the store answers within ctx: its lock is free
// for a read, the last commit did not fail and no change has waited for
// its commit longer than Options.CommitBudget.
func (c *core) Ping(ctx context.Context) error {
	if p := c.failed.Load(); p != nil {
		return &unavailable{cause: *p}
	}
	got := make(chan struct{})
	go func() {
		c.mu.RLock()
		_ = len(c.projects) // a read, to learn the store answers
		c.mu.RUnlock()
		close(got)
	}()
	select {
	case <-got:
	case <-ctx.Done():
		return &unavailable{cause: errors.New("the embedded store did not answer in time (it is busy)")}
	}
	if since := c.pendingSince(); !since.IsZero() && time.Since(since) > c.opts.CommitBudget {
		waited := time.Since(since)
		return &unavailable{cause: fmt.Errorf("a change has waited %s for the disk", waited.Round(time.Millisecond))}
	}
	return nil
}

// Watch implements lifecycle.EventLog.
func (c *core) Watch(project, id string) (<-chan struct{}, func()) {
	return c.hub.Watch(wakehub.Key(project, id))
}

// WatchFinal implements lifecycle.EventLog: f gets the final record when
// the question becomes final, nil on any other wake-up.
func (c *core) WatchFinal(project, id string, f func(q *domain.Question)) func() {
	return c.hub.WatchFinal(wakehub.Key(project, id), f)
}
