package pagerduty

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// DefaultOnCallTTL is how long the Resolver keeps who is on call: short, so
// a hand-off counts within a minute even without an escalation step.
const DefaultOnCallTTL = 30 * time.Second

// emailTTL is how long the Resolver keeps the chat identity of an email.
const emailTTL = 10 * time.Minute

// ResolverConfig configures a Resolver.
type ResolverConfig struct {
	Client *Client
	// TTL is how long on-call lists are kept (default DefaultOnCallTTL).
	TTL time.Duration
	// MaxLevel admits the on-call of escalation policies' levels 1 to
	// MaxLevel (default 1).
	MaxLevel int
	// People maps a PagerDuty user's email (any case) to the chat people it
	// is ("discord:4455", "slack:U0123"): surfaces without a lookup by
	// email, or people whose chat email differs.
	People map[string][]string
	// Lookup finds the chat person of an email ("slack:U0123"), e.g. Slack
	// users.lookupByEmail; "" and no error when there is none. Optional.
	Lookup func(ctx context.Context, email string) (string, error)
	// Observe is told of each read: "ok" or "failed".
	Observe func(op, outcome string)
	Clock   lifecycle.Clock
}

// Resolver admits whoever is on call for PagerDuty schedules and escalation
// policies as responders (lifecycle.GroupResolver): it reads GET /oncalls,
// keeps the list briefly, and matches on-call people to chat people by
// email. When PagerDuty cannot be read nobody is admitted through it.
type Resolver struct {
	cfg    ResolverConfig
	people map[string][]string

	mu     sync.Mutex
	lists  map[string]*onCallList
	emails map[string]emailEntry
}

type onCallList struct {
	mu      sync.Mutex // one read at a time per list
	entries []OnCall
	at      time.Time
}

type emailEntry struct {
	key string
	at  time.Time
}

var (
	_ lifecycle.GroupResolver = (*Resolver)(nil)
	_ lifecycle.HolderLister  = (*Resolver)(nil)
)

// NewResolver builds a Resolver.
func NewResolver(cfg ResolverConfig) *Resolver {
	if cfg.TTL == 0 {
		cfg.TTL = DefaultOnCallTTL
	}
	if cfg.MaxLevel <= 0 {
		cfg.MaxLevel = 1
	}
	if cfg.Clock == nil {
		cfg.Clock = lifecycle.SystemClock{}
	}
	if cfg.Observe == nil {
		cfg.Observe = func(string, string) {}
	}
	people := map[string][]string{}
	for email, keys := range cfg.People {
		people[strings.ToLower(strings.TrimSpace(email))] = keys
	}
	return &Resolver{cfg: cfg, people: people, lists: map[string]*onCallList{}, emails: map[string]emailEntry{}}
}

// GroupKinds implements lifecycle.GroupResolver.
func (r *Resolver) GroupKinds() []string { return []string{KindSchedules, KindPolicies} }

// Refresh implements lifecycle.GroupResolver.
func (r *Resolver) Refresh(groups map[string][]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for kind, ids := range groups {
		for _, id := range ids {
			delete(r.lists, kind+":"+id)
		}
	}
}

// Member implements lifecycle.GroupResolver.
func (r *Resolver) Member(ctx context.Context, p domain.Person, groups map[string][]string) ([]string, string, error) {
	var member, not []string
	for _, kind := range r.GroupKinds() {
		for _, id := range groups[kind] {
			people, name, err := r.OnCallNow(ctx, kind, id)
			if err != nil {
				return nil, "", err
			}
			for _, u := range people {
				keys, err := r.identities(ctx, u.Email)
				if err != nil {
					return nil, "", err
				}
				if slices.Contains(keys, p.Key()) {
					member = append(member, domain.DirectoryMember(kind, id))
					break
				}
			}
			not = append(not, noun(kind)+" "+name)
		}
	}
	if len(member) > 0 {
		return member, "", nil
	}
	if len(not) == 0 {
		return nil, "", nil
	}
	return nil, fmt.Sprintf("not on call for %s at %s UTC", strings.Join(not, " or "), r.cfg.Clock.Now().UTC().Format("15:04")), nil
}

// Holders implements lifecycle.HolderLister: whoever is on call now for
// each schedule and escalation policy of groups, with their chat
// identities (the configured people, the lookup by email). A schedule
// PagerDuty does not answer for is Unknown; a person whose chat identity
// cannot be looked up is named without one.
func (r *Resolver) Holders(ctx context.Context, groups map[string][]string) []domain.GroupHolders {
	var out []domain.GroupHolders
	for _, kind := range r.GroupKinds() {
		for _, id := range groups[kind] {
			users, name, err := r.OnCallNow(ctx, kind, id)
			if err != nil {
				out = append(out, domain.GroupHolders{Group: noun(kind) + " " + id, Unknown: true})
				continue
			}
			g := domain.GroupHolders{Group: noun(kind) + " " + name}
			for _, u := range users {
				keys, _ := r.identities(ctx, u.Email)
				who := u.Name
				if who == "" {
					who = u.Summary
				}
				g.People = append(g.People, domain.Holder{Name: who, Keys: keys})
			}
			out = append(out, g)
		}
	}
	return out
}

func noun(kind string) string {
	if kind == KindPolicies {
		return "escalation policy"
	}
	return "schedule"
}

// OnCallNow returns the people on call now for one schedule or escalation
// policy (kind KindSchedules or KindPolicies), and its name in PagerDuty.
func (r *Resolver) OnCallNow(ctx context.Context, kind, id string) ([]User, string, error) {
	r.mu.Lock()
	l := r.lists[kind+":"+id]
	if l == nil {
		l = &onCallList{}
		r.lists[kind+":"+id] = l
	}
	r.mu.Unlock()

	l.mu.Lock()
	defer l.mu.Unlock()
	now := r.cfg.Clock.Now()
	if l.at.IsZero() || now.Sub(l.at) >= r.cfg.TTL {
		f := OnCallFilter{Schedules: []string{id}}
		if kind == KindPolicies {
			f = OnCallFilter{Policies: []string{id}}
		}
		entries, err := r.cfg.Client.OnCalls(ctx, f)
		if err != nil {
			r.cfg.Observe("oncalls", "failed")
			return nil, "", err
		}
		r.cfg.Observe("oncalls", "ok")
		l.entries, l.at = entries, now
	}
	var users []User
	name := id
	for _, e := range l.entries {
		switch kind {
		case KindSchedules:
			if e.Schedule == nil || e.Schedule.ID != id {
				continue
			}
			if e.Schedule.Summary != "" {
				name = e.Schedule.Summary
			}
		case KindPolicies:
			if e.EscalationPolicy == nil || e.EscalationPolicy.ID != id || e.EscalationLevel > r.cfg.MaxLevel {
				continue
			}
			if e.EscalationPolicy.Summary != "" {
				name = e.EscalationPolicy.Summary
			}
		}
		if !e.Start.IsZero() && now.Before(e.Start) || !e.End.IsZero() && !now.Before(e.End) {
			continue // a shift that has not begun or has ended since the list was read
		}
		if !slices.ContainsFunc(users, func(u User) bool { return u.ID == e.User.ID }) {
			users = append(users, e.User)
		}
	}
	return users, name, nil
}

// identities returns the chat people of an email: the configured ones, and
// the one Lookup finds.
func (r *Resolver) identities(ctx context.Context, email string) ([]string, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	if email == "" {
		return nil, nil
	}
	keys := slices.Clone(r.people[email])
	if r.cfg.Lookup == nil {
		return keys, nil
	}
	now := r.cfg.Clock.Now()
	r.mu.Lock()
	e, ok := r.emails[email]
	r.mu.Unlock()
	if !ok || now.Sub(e.at) >= emailTTL {
		key, err := r.cfg.Lookup(ctx, email)
		if err != nil {
			return nil, fmt.Errorf("looking up the chat user of a PagerDuty user by email: %w", err)
		}
		e = emailEntry{key: key, at: now}
		r.mu.Lock()
		r.emails[email] = e
		r.mu.Unlock()
	}
	if e.key != "" && !slices.Contains(keys, e.key) {
		keys = append(keys, e.key)
	}
	return keys, nil
}
