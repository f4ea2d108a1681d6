// Package resume delivers resume webhooks (docs/agents.md "Webhook mode"): it takes deliveries
// from the store's durable queue, signs and POSTs them, and retries with
// exponential backoff for 24 h. A delivery leased by a replica that dies is
// picked up by another when the lease runs out; a replica renews the leases
// of what it is sending, so nothing is sent twice unless something failed.
//
// Delivery is fair: deliveries are claimed continuously as workers free up,
// from every project in turn, and each destination host gets at most
// PerHost workers (one while it fails, after a growing pause), so a dead or
// slow receiver only ever delays its own deliveries.
package resume

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/tracing"
	"github.com/askbridge/askbridge/server/egress"

	"go.opentelemetry.io/otel/trace"
)

// Store is what the deliverer needs of the store: the delivery queue, the
// question a delivery was enqueued for (deliveries of older releases carry
// no snapshot), and the audit trail and event stream where an outcome is
// told.
type Store interface {
	lifecycle.DeliveryQueue
	Get(ctx context.Context, project, id string) (*domain.Question, error)
	AppendAudit(ctx context.Context, e domain.AuditEntry) error
	AppendEvent(ctx context.Context, ev domain.Event) error
}

// Config configures a Deliverer.
type Config struct {
	Store Store
	// Secret returns the signing secret for an agent (its own, else the
	// bridge's); nil or empty means the delivery cannot be signed.
	Secret func(agentID string) []byte
	// Egress decides where webhooks may go (default: egress.New with no
	// allow list: loopback, private, link-local, metadata … refused).
	Egress *egress.Policy
	// Client sends the webhooks (default: Egress's client). A client
	// without a Transport gets Egress's; redirects are never followed.
	Client *http.Client
	// AttemptTimeout bounds one attempt (default 15s).
	AttemptTimeout time.Duration
	Clock          lifecycle.Clock
	Logger         *slog.Logger
	// Observe is told each resume webhook attempt's outcome: delivered,
	// retried, failed.
	Observe func(outcome string)
	// Senders send the deliveries queued by surfaces and pagers (see
	// Sender); ObserveSender is told each of their outcomes: sent,
	// retried, failed, dropped.
	Senders       []Sender
	ObserveSender func(sender, outcome string)
	// Poll is how often the queue is read when nothing else wakes the
	// deliverer (default 500ms).
	Poll time.Duration
	// Lease is how long a claimed delivery is reserved before another
	// replica may take it over (default 60s); it is renewed every Lease/3
	// while the delivery is in flight.
	Lease time.Duration
	// MinBackoff, MaxBackoff and GiveUpAfter shape retries (1s, 5min, 24h).
	MinBackoff, MaxBackoff, GiveUpAfter time.Duration
	// Workers bounds deliveries in flight on this replica (default 64).
	Workers int
	// PerHost bounds deliveries in flight to one host (default 8).
	PerHost int
	// HostMaxPause caps the pause of a failing host's circuit (default 30s).
	HostMaxPause time.Duration
	// Batch is how many deliveries one read of the queue claims (default 64).
	Batch int
	// TracerProvider records each attempt as a span (nil: none recorded;
	// the question's traceparent is still sent).
	TracerProvider trace.TracerProvider
}

// Deliverer sends resume webhooks.
type Deliverer struct {
	cfg    Config
	client *http.Client
	tracer trace.Tracer

	mu    sync.Mutex
	hosts *hosts
	held  map[string]lifecycle.Delivery // in flight on this replica, by id
	// unsigned: agents whose resume webhooks were held for want of a
	// secret; unwarned: those not named in a warning yet.
	unsigned map[string]bool
	unwarned []string
	othersAt time.Time           // when the lanes of senders this replica lacks were last read
	waiting  map[string][]waiter // claimed deliveries waiting for their busy host, by host
	wg       sync.WaitGroup
	freed    chan struct{}
	kick     chan struct{}
}

// New builds a Deliverer with defaults filled in.
func New(cfg Config) *Deliverer {
	if cfg.AttemptTimeout <= 0 {
		cfg.AttemptTimeout = 15 * time.Second
	}
	if cfg.Egress == nil {
		cfg.Egress = egress.MustNew(egress.Config{})
	}
	client := cfg.Egress.Client(cfg.AttemptTimeout)
	if cfg.Client != nil {
		c := *cfg.Client
		if c.Transport == nil {
			c.Transport = client.Transport
		}
		c.CheckRedirect = client.CheckRedirect
		client = &c
	}
	if cfg.Clock == nil {
		cfg.Clock = lifecycle.SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Observe == nil {
		cfg.Observe = func(string) {}
	}
	if cfg.ObserveSender == nil {
		cfg.ObserveSender = func(string, string) {}
	}
	if cfg.Secret == nil {
		cfg.Secret = func(string) []byte { return nil }
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 500 * time.Millisecond
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 60 * time.Second
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = time.Second
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 5 * time.Minute
	}
	if cfg.GiveUpAfter <= 0 {
		cfg.GiveUpAfter = 24 * time.Hour
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 64
	}
	if cfg.PerHost <= 0 {
		cfg.PerHost = 8
	}
	if cfg.HostMaxPause <= 0 {
		cfg.HostMaxPause = 30 * time.Second
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 64
	}
	return &Deliverer{cfg: cfg, client: client, tracer: tracing.Tracer(cfg.TracerProvider), hosts: newHosts(cfg.PerHost, cfg.MinBackoff, cfg.HostMaxPause),
		held: map[string]lifecycle.Delivery{}, waiting: map[string][]waiter{}, unsigned: map[string]bool{}, freed: make(chan struct{}, 1), kick: make(chan struct{}, 1)}
}

// Payload is the body of a resume webhook.
type Payload struct {
	Event       string           `json:"event"`
	Question    *domain.Question `json:"question"`
	Run         RunRef           `json:"run"`
	UserMessage string           `json:"user_message"`
	// Attempt counts the attempts at this delivery (1 on the first) and
	// Nonce is random per attempt: each attempt's body, hence its
	// signature, differs from every other's, even within one second.
	Attempt int    `json:"attempt"`
	Nonce   string `json:"nonce"`
}

// RunRef names the run that continues.
type RunRef struct {
	ID          string `json:"id"`
	ResumedFrom string `json:"resumed_from,omitempty"`
	AgentID     string `json:"agent_id"`
	ProjectID   string `json:"project_id"`
}

// Run delivers until ctx ends; in-flight deliveries finish first (and keep
// their leases meanwhile).
func (d *Deliverer) Run(ctx context.Context) {
	rctx, stopRenew := context.WithCancel(context.WithoutCancel(ctx))
	renewed := make(chan struct{})
	go func() { defer close(renewed); d.renewLoop(rctx) }()
	t := time.NewTicker(d.cfg.Poll)
	defer t.Stop()
	for {
		last := time.Now()
		d.fill(ctx)
		select {
		case <-ctx.Done():
			d.wg.Wait()
			stopRenew()
			<-renewed
			return
		case <-t.C:
		case <-d.freed:
		case <-d.kick:
		}
		// However often it is woken, the queue is read at most every 20 ms.
		if wait := minGap - time.Since(last); wait > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		}
	}
}

const minGap = 20 * time.Millisecond

// othersEvery is how often the lanes of senders this replica lacks are
// read.
const othersEvery = 10 * time.Second

// Kick tells the deliverer a delivery was just enqueued (this replica took
// an answer in webhook mode), so it reads the queue now rather than at its
// next poll. It never blocks.
func (d *Deliverer) Kick() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

// Transitioned kicks the deliverer when a webhook-mode question ends on
// this replica: its resume webhook goes out now, not at the next poll.
// Deliverer is a lifecycle.Observer.
func (d *Deliverer) Transitioned(q *domain.Question) {
	if q.WebhookMode() {
		d.Kick()
	}
}

// Once claims and starts the deliveries due now, waits for them, and
// returns how many it claimed (tests step an injected clock with it).
func (d *Deliverer) Once(ctx context.Context) int {
	n := d.fill(ctx)
	d.wg.Wait()
	return n
}

// LaneQueue is a delivery queue kept in lanes: one for the resume
// webhooks (lifecycle.SenderWebhook), one per sender (its name, the part
// of its deliveries' event before the dot). Both stores are one; a queue
// that is not is claimed in due order, all lanes together.
type LaneQueue interface {
	// ClaimLanes leases up to want[lane] due deliveries of each lane
	// named, each lane in due order, projects in turn; want[""] is for
	// each sender's lane not named.
	ClaimLanes(ctx context.Context, now time.Time, lease time.Duration, want map[string]int) ([]lifecycle.Delivery, error)
}

// fill claims due deliveries while there are free workers and full
// batches keep coming (deliveries put back for their host's sake make room
// for the next ones at once). From a LaneQueue it claims each sender's
// lane only as far as the sender's circuit has room and the resume
// webhooks' lane apart, so no resume webhook waits behind a queue of mails
// or pages, nor they behind it.
func (d *Deliverer) fill(ctx context.Context) int {
	defer d.warnUnsigned()
	lanes, _ := d.cfg.Store.(LaneQueue)
	total := 0
	for round := range 64 {
		if ctx.Err() != nil {
			return total
		}
		now := d.cfg.Clock.Now()
		d.mu.Lock()
		free := d.cfg.Workers - len(d.held)
		var want map[string]int
		if lanes != nil && free > 0 {
			want = map[string]int{lifecycle.SenderWebhook: free}
			// "": the lanes of senders this replica lacks, looked at now
			// and then (put back until a replica that has the sender
			// takes them, or they are given up).
			if now.Sub(d.othersAt) >= othersEvery {
				d.othersAt, want[""] = now, free
			}
			for _, s := range d.cfg.Senders {
				if n := min(d.hosts.room(circuitKey(s), now), free); n > 0 {
					want[s.Name()] = n
				}
			}
		}
		d.mu.Unlock()
		if free <= 0 {
			return total
		}
		// After a round that put deliveries back for their host's sake,
		// claim a whole batch to get past them quickly.
		asked := free
		if round > 0 {
			asked = max(free, d.cfg.Batch)
		}
		var ds []lifecycle.Delivery
		var err error
		if lanes != nil {
			want[lifecycle.SenderWebhook] = asked
			ds, err = lanes.ClaimLanes(ctx, now, d.cfg.Lease, want)
		} else {
			ds, err = d.cfg.Store.ClaimDeliveries(ctx, now, d.cfg.Lease, asked)
		}
		if err != nil && ctx.Err() == nil {
			d.cfg.Logger.Warn("reading the resume queue failed", "err", err)
		}
		more := false
		if lanes != nil {
			got := map[string]int{}
			for _, dl := range ds {
				l := lifecycle.DeliverySender(dl.Event)
				if _, named := want[l]; !named {
					l = ""
				}
				got[l]++
			}
			for l, n := range want {
				more = more || got[l] >= n
			}
		} else {
			more = len(ds) >= asked
		}
		for _, dl := range ds {
			d.dispatch(ctx, dl, now)
		}
		total += len(ds)
		if err != nil || !more {
			return total
		}
	}
	return total
}

// dispatch starts a claimed delivery, or puts it back unsent (not counted
// as an attempt) when its host is busy or paused or no worker is free.
func (d *Deliverer) dispatch(ctx context.Context, dl lifecycle.Delivery, now time.Time) {
	log := d.cfg.Logger.With("delivery", dl.ID, "question", dl.QuestionID, "project", dl.ProjectID, "attempt", dl.Attempts)
	if dl.Expired {
		d.fail(ctx, dl, log, "its record expired before it could be sent (the bridge was stopped for longer than deliveries are kept)")
		return
	}
	if s := d.senderFor(dl.Event); s != nil {
		d.start(ctx, dl, now, circuitKey(s), log, func(ctx context.Context) bool { return d.send(ctx, s, dl, log) })
		return
	}
	if name := lifecycle.DeliverySender(dl.Event); name != lifecycle.SenderWebhook {
		d.holdNoSender(ctx, dl, name, now, log)
		return
	}
	q := dl.Question
	if q == nil { // enqueued by an older release: read the question
		var err error
		if q, err = d.cfg.Store.Get(ctx, dl.ProjectID, dl.QuestionID); err != nil {
			if domain.ErrorCode(err) == domain.ENotFound {
				d.fail(ctx, dl, log, "the question no longer exists")
			} else {
				d.retry(ctx, dl, log, err.Error())
			}
			return
		}
	}
	if !q.WebhookMode() {
		d.fail(ctx, dl, log, "the question has no resume url")
		return
	}
	secret := d.cfg.Secret(q.AgentID)
	if len(secret) == 0 {
		d.hold(ctx, dl, q.AgentID, now, log)
		return
	}
	if !dl.CreatedAt.IsZero() && now.Sub(dl.CreatedAt) > d.cfg.GiveUpAfter {
		d.fail(ctx, dl, log, "gave up after "+d.cfg.GiveUpAfter.String()+" without a successful delivery")
		return
	}
	d.start(ctx, dl, now, hostOf(q.Resume.URL), log, func(ctx context.Context) bool { return d.deliver(ctx, dl, q, secret, log) })
}

// start runs attempt for a claimed delivery on a worker, or puts the
// delivery back unsent (not counted as an attempt) when its destination
// (a webhook host, or a sender) is paused or no worker is free. A
// delivery to a host that is merely busy (PerHost in flight, none failed)
// waits on this replica, leased, for the next of them to end, as long as
// no more than PerHost wait so: a burst of answers to one receiver goes
// out as fast as the receiver takes them, not a put-back pause later.
func (d *Deliverer) start(ctx context.Context, dl lifecycle.Delivery, now time.Time, host string, log *slog.Logger, attempt func(context.Context) bool) {
	d.mu.Lock()
	ok, at := len(d.held) < d.cfg.Workers, now
	if ok {
		ok, at = d.hosts.admit(host, now)
		if !ok && d.hosts.busy(host, now) && len(d.waiting[host]) < d.cfg.PerHost {
			d.held[dl.ID] = dl
			d.waiting[host] = append(d.waiting[host], waiter{dl: dl, log: log, attempt: attempt})
			d.mu.Unlock()
			return
		}
	}
	if ok {
		d.held[dl.ID] = dl
	}
	d.mu.Unlock()
	if !ok {
		d.putBack(ctx, dl, now, at, log)
		return
	}
	d.launch(ctx, dl, now, host, attempt)
}

// waiter is a claimed delivery waiting for its busy host (start).
type waiter struct {
	dl      lifecycle.Delivery
	log     *slog.Logger
	attempt func(context.Context) bool
}

// putBack returns a claimed delivery to the queue unsent, due at at.
func (d *Deliverer) putBack(ctx context.Context, dl lifecycle.Delivery, now, at time.Time, log *slog.Logger) {
	// Spread what comes back at once over a tenth of the wait.
	if wait := at.Sub(now); wait > 10*time.Millisecond {
		at = at.Add(rand.N(wait / 10))
	}
	dl.Attempts--
	if err := d.cfg.Store.RetryDelivery(context.WithoutCancel(ctx), dl, at); err != nil {
		log.Warn("putting a delivery back failed; it is retried when its lease ends", "err", err)
	}
}

// launch runs an admitted delivery's attempt on a worker; when it ends,
// the next delivery waiting for the same host starts, or, if the host
// can take none now (it failed, or the deliverer stops), every one
// waiting for it is put back.
func (d *Deliverer) launch(ctx context.Context, dl lifecycle.Delivery, started time.Time, host string, attempt func(context.Context) bool) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		reached := attempt(context.WithoutCancel(ctx))
		now := d.cfg.Clock.Now()
		d.mu.Lock()
		delete(d.held, dl.ID)
		d.hosts.done(host, started, now, reached)
		var next, back []waiter
		if q := d.waiting[host]; len(q) > 0 {
			for len(q) > 0 && ctx.Err() == nil {
				if ok, _ := d.hosts.admit(host, now); !ok {
					break
				}
				next, q = append(next, q[0]), q[1:]
			}
			// Still busy: the rest wait on. Failed, paused or stopping:
			// they go back to the queue.
			if !d.hosts.busy(host, now) || ctx.Err() != nil {
				back, q = q, nil
			}
			if len(q) == 0 {
				delete(d.waiting, host)
			} else {
				d.waiting[host] = q
			}
		}
		for _, w := range back {
			delete(d.held, w.dl.ID)
		}
		at := d.hosts.pausedUntil(host, now)
		d.mu.Unlock()
		for _, w := range back {
			d.putBack(ctx, w.dl, now, at, w.log)
		}
		for _, w := range next {
			d.launch(ctx, w.dl, now, host, w.attempt)
		}
		select {
		case d.freed <- struct{}{}:
		default:
		}
	}()
}

// renewLoop keeps the leases of the deliveries in flight, so no other
// replica takes over a delivery that is merely slow.
func (d *Deliverer) renewLoop(ctx context.Context) {
	t := time.NewTicker(max(d.cfg.Lease/3, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		d.mu.Lock()
		ds := make([]lifecycle.Delivery, 0, len(d.held))
		for _, dl := range d.held {
			ds = append(ds, dl)
		}
		d.mu.Unlock()
		if len(ds) == 0 {
			continue
		}
		lost, err := d.cfg.Store.RenewDeliveries(ctx, ds, d.cfg.Clock.Now().Add(d.cfg.Lease))
		if err != nil && ctx.Err() == nil {
			d.cfg.Logger.Warn("renewing delivery leases failed; another replica may send them too", "err", err)
		}
		for _, id := range lost {
			d.cfg.Logger.Warn("lost the lease of a delivery in flight; another replica may send it too", "delivery", id)
		}
	}
}

// hostOf is the destination a delivery counts against: the url's host and
// port.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return strings.ToLower(u.Host)
}
