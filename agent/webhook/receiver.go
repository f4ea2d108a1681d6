package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// Resume is the body of a resume webhook (docs/agents.md "Webhook mode") with its delivery id.
type Resume struct {
	Event       string          `json:"event"`
	Question    domain.Question `json:"question"`
	Run         ResumeRun       `json:"run"`
	UserMessage string          `json:"user_message"`
	// Attempt counts the bridge's attempts at this delivery (1 on the
	// first; 0 from bridges before it was sent).
	Attempt int `json:"attempt,omitempty"`
	// DeliveryID is X-Askbridge-Delivery: the same on every retry.
	DeliveryID string `json:"-"`
}

// ResumeRun names the continuation run.
type ResumeRun struct {
	ID          string `json:"id"`
	ResumedFrom string `json:"resumed_from,omitempty"`
	AgentID     string `json:"agent_id"`
	ProjectID   string `json:"project_id"`
}

// Deduper remembers deliveries. Begin reports whether a delivery id is new
// (and claims it), already done, or being handled right now; Finish marks a
// claimed delivery done (ok) or forgets it so a retry is handled again.
// Implement it on a shared store when several replicas receive webhooks.
type Deduper interface {
	Begin(ctx context.Context, id string) (DeliveryState, error)
	Finish(ctx context.Context, id string, ok bool) error
}

// DeliveryState is what a Deduper knows about a delivery id.
type DeliveryState int

// Delivery states.
const (
	DeliveryNew        DeliveryState = iota // claimed now: handle it
	DeliveryDone                            // handled before: a duplicate
	DeliveryInProgress                      // being handled by another request
)

// MaxBody bounds the webhook body the receiver reads.
const MaxBody = 1 << 20

// Receiver is an http.Handler for resume webhooks. It verifies
// X-Askbridge-Signature over the raw body before parsing anything, refuses
// timestamps outside the tolerance, and hands each delivery to Handle once:
// duplicates (the bridge delivers at least once) are acknowledged without
// calling Handle.
//
// A delivery, and its signature, count as seen only once Handle
// succeeded: a retry after a failure is handled again, even one sent
// within the same second.
//
// Responses: 200 handled or duplicate; 401 bad or stale signature; 400 not a
// resume webhook; 503 with Retry-After while the same delivery is being
// handled, or when Handle fails (the bridge retries); 500 when the
// receiver has no secret (the bridge retries until it has one).
//
// Build it with NewReceiver, which refuses an empty secret.
type Receiver struct {
	// Secret is the webhook signing secret (webhooks.secret or the agent's
	// webhook_secret). It must not be empty: anyone can sign with an
	// empty secret.
	Secret []byte
	// Handle runs the continuation. An error makes the bridge retry.
	Handle func(ctx context.Context, r Resume) error
	// Tolerance of the signature timestamp (default DefaultTolerance).
	Tolerance time.Duration
	// Dedupe remembers deliveries (default: in memory, 48 h).
	Dedupe Deduper
	// Now is the clock (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger

	once sync.Once
}

// NewReceiver returns a Receiver that verifies with secret and runs handle
// for each new delivery; it refuses an empty secret (ErrNoSecret), as
// anyone can sign with one.
func NewReceiver(secret []byte, handle func(ctx context.Context, r Resume) error) (*Receiver, error) {
	if len(secret) == 0 {
		return nil, ErrNoSecret
	}
	if handle == nil {
		return nil, errors.New("webhook: NewReceiver needs a handler that runs the continuation")
	}
	return &Receiver{Secret: secret, Handle: handle}, nil
}

func (rv *Receiver) init() {
	rv.once.Do(func() {
		if rv.Dedupe == nil {
			rv.Dedupe = NewMemoryDeduper(48 * time.Hour)
		}
		if rv.Now == nil {
			rv.Now = time.Now
		}
		if rv.Logger == nil {
			rv.Logger = slog.New(slog.DiscardHandler)
		}
	})
}

func (rv *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rv.init()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if len(rv.Secret) == 0 {
		rv.Logger.Error("resume webhook not handled", "err", ErrNoSecret)
		http.Error(w, ErrNoSecret.Error(), http.StatusInternalServerError)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		http.Error(w, "body too large or unreadable", http.StatusRequestEntityTooLarge)
		return
	}
	id := r.Header.Get(HeaderDelivery)
	sig, err := VerifyDelivery(rv.Secret, r.Header.Get(HeaderSignature), id, body, rv.Tolerance, rv.Now())
	if err != nil {
		rv.Logger.Warn("resume webhook refused", "err", err, "remote", r.RemoteAddr)
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	if id == "" {
		http.Error(w, "missing "+HeaderDelivery, http.StatusBadRequest)
		return
	}

	var res Resume
	if err := json.Unmarshal(body, &res); err != nil || res.Event == "" || res.Question.ID == "" {
		http.Error(w, "not a resume webhook body", http.StatusBadRequest)
		return
	}
	res.DeliveryID = id
	state, err := rv.Dedupe.Begin(r.Context(), id)
	if err != nil {
		rv.Logger.Error("resume webhook dedupe failed", "delivery", id, "err", err)
		retryLater(w)
		return
	}
	switch state {
	case DeliveryDone:
		rv.Logger.Info("duplicate resume webhook dropped", "delivery", id, "question", res.Question.ID)
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "duplicate\n")
		return
	case DeliveryInProgress:
		retryLater(w)
		return
	}
	// A delivery id not handled yet: a signature handled (or being
	// handled) under another id is a captured delivery sent again (a v1
	// signature does not cover the id). A signature counts as used only
	// once its delivery was handled, so a retry after a failed handler —
	// the same signature when it comes within the same second from a
	// bridge that did not sign each attempt anew — is handled.
	sigKey := "signature:" + sig
	if seen, err := rv.Dedupe.Begin(r.Context(), sigKey); err != nil || seen != DeliveryNew {
		_ = rv.Dedupe.Finish(context.WithoutCancel(r.Context()), id, false)
		if err != nil {
			rv.Logger.Error("resume webhook dedupe failed", "delivery", id, "err", err)
			retryLater(w)
			return
		}
		rv.Logger.Warn("resume webhook refused", "err", ErrReplayed, "delivery", id, "remote", r.RemoteAddr)
		http.Error(w, ErrReplayed.Error(), http.StatusUnauthorized)
		return
	}
	herr := rv.Handle(r.Context(), res)
	fctx := context.WithoutCancel(r.Context())
	if ferr := errors.Join(rv.Dedupe.Finish(fctx, sigKey, herr == nil), rv.Dedupe.Finish(fctx, id, herr == nil)); ferr != nil {
		rv.Logger.Error("resume webhook dedupe failed", "delivery", id, "err", ferr)
	}
	if herr != nil {
		rv.Logger.Error("resume webhook handler failed; the bridge will retry", "delivery", id, "err", herr)
		retryLater(w)
		return
	}
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "ok\n")
}

func retryLater(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "5")
	http.Error(w, "try again later", http.StatusServiceUnavailable)
}

// MemoryDeduper is an in-process Deduper that forgets deliveries after ttl
// (keep it longer than the bridge's 24 h of retries).
type MemoryDeduper struct {
	mu    sync.Mutex
	ttl   time.Duration
	seen  map[string]memEntry
	now   func() time.Time
	sweep time.Time
}

type memEntry struct {
	done bool
	at   time.Time
}

// NewMemoryDeduper returns an in-memory Deduper.
func NewMemoryDeduper(ttl time.Duration) *MemoryDeduper {
	return &MemoryDeduper{ttl: ttl, seen: map[string]memEntry{}, now: time.Now}
}

// Begin implements Deduper.
func (d *MemoryDeduper) Begin(_ context.Context, id string) (DeliveryState, error) {
	if id == "" {
		return 0, errors.New("webhook: empty delivery id")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	if now.Sub(d.sweep) > time.Minute {
		for k, e := range d.seen {
			if now.Sub(e.at) > d.ttl {
				delete(d.seen, k)
			}
		}
		d.sweep = now
	}
	if e, ok := d.seen[id]; ok && now.Sub(e.at) <= d.ttl {
		if e.done {
			return DeliveryDone, nil
		}
		return DeliveryInProgress, nil
	}
	d.seen[id] = memEntry{at: now}
	return DeliveryNew, nil
}

// Finish implements Deduper.
func (d *MemoryDeduper) Finish(_ context.Context, id string, ok bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if ok {
		d.seen[id] = memEntry{done: true, at: d.now()}
	} else {
		delete(d.seen, id)
	}
	return nil
}
