package pagerduty

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// ErrDrop is returned by Send for a page with nothing left to send: a
// trigger whose question ended while it was queued. The application maps
// it to the deliverer's own drop.
var ErrDrop = errors.New("the question has ended; the page is no longer needed")

// SenderConfig configures a Sender.
type SenderConfig struct {
	Client *Client
	// Questions reads a question as it is now (a trigger of a question that
	// has ended is dropped).
	Questions lifecycle.QuestionReader
	// Profiles are the page settings by name (domain.Page.Profile).
	Profiles map[string]Profile
	// PublicURL is the bridge's address people open; the page links to
	// the question's page under it.
	PublicURL string
	Clock     lifecycle.Clock
	Logger    *slog.Logger
}

// Sender sends the page deliveries the Router queues
// (pagerduty.trigger, pagerduty.resolve): the resume deliverer's Sender.
// Its errors say what a failure means: ErrDrop, Permanent() (a 400, an
// unknown setting), RetryAfter() (a 429); anything else is retried.
type Sender struct {
	cfg SenderConfig
	log *slog.Logger
}

// NewSender builds a Sender.
func NewSender(cfg SenderConfig) *Sender {
	if cfg.Clock == nil {
		cfg.Clock = lifecycle.SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Sender{cfg: cfg, log: cfg.Logger.With("adapter", Pager)}
}

// Name is the sender's name in delivery events.
func (s *Sender) Name() string { return Pager }

// Send makes one attempt at a page delivery.
func (s *Sender) Send(ctx context.Context, d lifecycle.Delivery) error {
	kind, ok := strings.CutPrefix(d.Event, Pager+".")
	if !ok || (kind != lifecycle.PageTrigger && kind != lifecycle.PageResolve) {
		return lifecycle.Permanent(fmt.Errorf("pagerduty: unknown delivery event %q", d.Event))
	}
	var p lifecycle.PagePayload
	if err := json.Unmarshal(d.Payload, &p); err != nil {
		return lifecycle.Permanent(fmt.Errorf("pagerduty: unreadable page delivery: %v", err))
	}
	prof, ok := s.cfg.Profiles[p.Profile]
	if !ok {
		return lifecycle.Permanent(fmt.Errorf("pagerduty: no page setting %q in this bridge's configuration (page.pagerduty of a route or escalation step)", p.Profile))
	}
	q, err := s.question(ctx, d)
	if err != nil {
		return err
	}
	var ev Event
	if kind == lifecycle.PageTrigger {
		if q.Status != domain.StatusPending {
			return ErrDrop
		}
		ev = TriggerEvent(q, prof, s.cfg.PublicURL, s.cfg.Clock.Now())
	} else {
		ev = ResolveEvent(q, prof)
	}
	err = s.cfg.Client.Enqueue(ctx, ev)
	if errors.Is(err, ErrInvalidEvent) {
		return lifecycle.Permanent(err)
	}
	return err
}

// question is the delivery's question as it is now, else as it was queued.
func (s *Sender) question(ctx context.Context, d lifecycle.Delivery) (*domain.Question, error) {
	if s.cfg.Questions != nil {
		q, err := s.cfg.Questions.Get(ctx, d.ProjectID, d.QuestionID)
		if err == nil {
			return q, nil
		}
		if domain.ErrorCode(err) != domain.ENotFound {
			return nil, err // the store is unreachable: retried
		}
	}
	if d.Event == Pager+"."+lifecycle.PageTrigger {
		return nil, ErrDrop // the question is gone: nobody can answer a page for it
	}
	if d.Question != nil {
		return d.Question, nil
	}
	return &domain.Question{ID: d.QuestionID, ProjectID: d.ProjectID}, nil
}
