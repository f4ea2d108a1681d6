package slack

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// groupCache keeps Slack user group members for a TTL, so a burst of clicks
// costs one usergroups.users.list call per group (Tier 2, ~20/min).
type groupCache struct {
	ttl   time.Duration
	now   func() time.Time
	fetch func(ctx context.Context, group string) ([]string, error)
	mu    sync.Mutex
	m     map[string]*groupEntry
}

type groupEntry struct {
	ready   chan struct{} // closed once members/err are set
	members map[string]bool
	err     error
	at      time.Time
}

func newGroupCache(ttl time.Duration, now func() time.Time, fetch func(context.Context, string) ([]string, error)) *groupCache {
	return &groupCache{ttl: ttl, now: now, fetch: fetch, m: map[string]*groupEntry{}}
}

// has reports whether user is a member of group.
func (c *groupCache) has(ctx context.Context, group, user string) (bool, error) {
	c.mu.Lock()
	e, ok := c.m[group]
	if ok {
		select {
		case <-e.ready:
			ttl := c.ttl
			if e.err != nil {
				ttl = min(ttl, 10*time.Second) // retry a failed fetch soon
			}
			if c.now().Sub(e.at) > ttl {
				ok = false
			}
		default: // in flight: wait below
		}
	}
	if !ok {
		e = &groupEntry{ready: make(chan struct{})}
		c.m[group] = e
		c.mu.Unlock()
		members, err := c.fetch(context.WithoutCancel(ctx), group)
		e.members = map[string]bool{}
		for _, m := range members {
			e.members[m] = true
		}
		e.err, e.at = err, c.now()
		close(e.ready)
	} else {
		c.mu.Unlock()
	}
	select {
	case <-e.ready:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	return e.members[user], e.err
}

func (a *Adapter) fetchGroup(ctx context.Context, group string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var members []string
	err := a.call(ctx, "usergroups.users.list", group, callOpts{}, func(ctx context.Context) error {
		var err error
		members, err = a.api.GetUserGroupMembersContext(ctx, group)
		return err
	})
	return members, err
}

// person describes a Slack user for the Router, with the user groups of q's
// responders that the user belongs to.
func (a *Adapter) person(ctx context.Context, q *domain.Question, userID, name string) domain.Person {
	p := domain.Person{Platform: "slack", ID: userID, Name: name}
	r := q.Responders
	if r.Empty() || slices.Contains(r.Users, "slack:"+userID) {
		return p
	}
	for _, g := range r.Group(GroupKind) {
		ok, err := a.groups.has(ctx, g, userID)
		if err != nil {
			a.log.Warn("reading user group members failed", "group", g, "code", ErrorCode(err), "err", err)
		}
		if ok {
			p.Groups = append(p.Groups, g)
		}
	}
	return p
}

// ResolvePerson implements domain.PersonResolver: a Slack user named in an
// answer relayed through the API gets the same user groups as a click.
func (a *Adapter) ResolvePerson(ctx context.Context, q *domain.Question, p domain.Person) domain.Person {
	out := a.person(ctx, q, p.ID, p.Name)
	out.Via = p.Via
	return out
}

// LookupByEmail finds the Slack user of an email address
// (users.lookupByEmail, needs the users:read.email scope) as a responders
// key, "slack:U0123"; "" and no error when Slack knows no user with it.
// An on-call directory uses it to match the person on call to a Slack user.
func (a *Adapter) LookupByEmail(ctx context.Context, email string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var id string
	err := a.call(ctx, "users.lookupByEmail", "", callOpts{}, func(ctx context.Context) error {
		u, err := a.api.GetUserByEmailContext(ctx, email)
		if err == nil {
			id = u.ID
		}
		return err
	})
	switch {
	case ErrorCode(err) == "users_not_found":
		return "", nil
	case err != nil:
		return "", err
	}
	return "slack:" + id, nil
}
