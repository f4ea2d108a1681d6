package lifecycle

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// GroupResolver is a directory of responder groups that no chat platform
// owns (domain.DirectoryGroup), such as whoever is on call for a schedule
// of a pager. The Router asks it whether a person belongs to the groups a
// question names at the moment they answer.
type GroupResolver interface {
	// GroupKinds are the responders fields it resolves.
	GroupKinds() []string
	// Member returns the groups among groups (kind → ids, only kinds of
	// GroupKinds) that p belongs to now, each as domain.DirectoryMember,
	// and when p belongs to none a short reason for the audit trail ("not
	// on call for schedule Primary at 03:12"). An error means membership
	// could not be read: nobody is admitted through these groups (the
	// question's other responders still are).
	Member(ctx context.Context, p domain.Person, groups map[string][]string) (member []string, why string, err error)
	// Refresh forgets what it knows of groups, so a hand-off is seen at
	// once (the Router calls it at each escalation step).
	Refresh(groups map[string][]string)
}

// HolderLister is the optional ability of a GroupResolver that can say
// who belongs to its groups now (who is on call), so the copies of a
// question can mention them when it is asked and at each escalation step.
type HolderLister interface {
	// Holders returns who holds each of groups now (kind → ids, only kinds
	// of GroupKinds); a group it cannot read is Unknown.
	Holders(ctx context.Context, groups map[string][]string) []domain.GroupHolders
}

// HolderMentioner is the optional ability of a Channel that can mention,
// under a posted copy (in its thread, or as a reply), the people who hold
// a question's directory groups now.
type HolderMentioner interface {
	MentionHolders(ctx context.Context, q *domain.Question, t domain.Target, hs []domain.GroupHolders) error
}

// AddGroupResolver registers a directory of responder groups.
func (r *Router) AddGroupResolver(g GroupResolver) {
	for _, k := range g.GroupKinds() {
		r.groups[k] = g
	}
}

// directoryGroups returns, per resolver, the groups of its kinds that q's
// responders name.
func (r *Router) directoryGroups(q *domain.Question) map[GroupResolver]map[string][]string {
	var out map[GroupResolver]map[string][]string
	for kind, ids := range q.Responders.Groups {
		g, ok := r.groups[kind]
		if !ok || len(ids) == 0 {
			continue
		}
		if out == nil {
			out = map[GroupResolver]map[string][]string{}
		}
		if out[g] == nil {
			out[g] = map[string][]string{}
		}
		out[g][kind] = ids
	}
	return out
}

// permit applies the responders policy to who, first filling in the
// directory groups q names that who belongs to. A refusal is recorded in
// the audit trail with the directory's reason (or the failure to read it).
func (r *Router) permit(ctx context.Context, q *domain.Question, who *domain.Person, what string) error {
	var notes []string
	if !domain.Allowed(q.Responders, *who) { // a direct match needs no directory
		for g, groups := range r.directoryGroups(q) {
			member, why, err := g.Member(ctx, *who, groups)
			switch {
			case err != nil:
				r.log.Warn("reading who is on call failed; nobody is admitted through it", "question", q.ID, "err", err)
				notes = append(notes, "who is on call could not be determined ("+err.Error()+")")
			case len(member) > 0:
				who.Groups = append(who.Groups, member...)
			case why != "":
				notes = append(notes, why)
			}
		}
	}
	err := domain.Permit(q, *who)
	if err != nil {
		detail := what + err.Error()
		if len(notes) > 0 {
			detail += " (" + strings.Join(notes, "; ") + ")"
		}
		r.audit(ctx, q, domain.AuditEntry{Type: "refused", By: who, Detail: detail})
	}
	return err
}

// refreshGroups makes the directories read q's groups afresh.
func (r *Router) refreshGroups(q *domain.Question) {
	for g, groups := range r.directoryGroups(q) {
		g.Refresh(groups)
	}
}

// mentionHolders tells under every posted copy whose surface can who holds
// q's directory groups now (step 0: when it was asked, n: escalation step
// n), in tracked background work: once per question and step, on one
// replica, whatever repeats the step.
func (r *Router) mentionHolders(q *domain.Question, step int) {
	listers := map[HolderLister]map[string][]string{}
	for g, groups := range r.directoryGroups(q) {
		if l, ok := g.(HolderLister); ok {
			listers[l] = groups
		}
	}
	can := false
	for _, t := range q.Targets {
		_, ok := r.channels[t.Platform].(HolderMentioner)
		can = can || (ok && t.MessageTS != "" && t.Error == "")
	}
	if len(listers) == 0 || !can {
		return
	}
	r.add()
	go func() {
		defer r.done()
		ctx, cancel := context.WithTimeout(r.bgCtx, r.cfg.PostTimeout)
		defer cancel()
		ttl := max(q.ExpiresAt.Sub(r.clock.Now())+time.Minute, time.Minute)
		first, err := r.store.Once(ctx, "holders:"+q.ProjectID+":"+q.ID+":"+strconv.Itoa(step), ttl)
		if err != nil || !first {
			return
		}
		var hs []domain.GroupHolders
		for l, groups := range listers {
			hs = append(hs, l.Holders(ctx, groups)...)
		}
		if len(hs) == 0 {
			return
		}
		r.eachCopy(q, "mentioning who is on call", func(ctx context.Context, ch Channel, t domain.Target) error {
			if m, ok := ch.(HolderMentioner); ok {
				return m.MentionHolders(ctx, q, t, hs)
			}
			return nil
		})
	}()
}
