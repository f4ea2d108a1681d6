package domain

import (
	"maps"
	"slices"
	"strings"
)

// Allowed reports whether who may answer q. One policy for every surface:
// adapters fill who.Groups with the person's Slack user groups or Discord
// roles; the API passes operators and the people they name.
func Allowed(r Responders, who Person) bool {
	if r.Empty() {
		return true
	}
	if slices.Contains(r.Users, who.Platform+":"+who.ID) {
		return true
	}
	for _, d := range DirectoryGroups() {
		for _, g := range r.Groups[d.Kind] {
			if slices.Contains(who.Groups, DirectoryMember(d.Kind, g)) {
				return true
			}
		}
	}
	p, ok := platformInfo(who.Platform)
	if !ok || p.GroupKind == "" {
		return false
	}
	groups := r.Groups[p.GroupKind]
	for _, g := range who.Groups {
		if slices.Contains(groups, g) {
			return true
		}
	}
	return false
}

// Permit applies the one responders policy of every surface (chat, web,
// API, thread replies) to q: the requester is refused when the route
// excludes them, then the responders of q (including those added by
// escalation) decide. It returns an ENotAllowed error naming who may answer.
func Permit(q *Question, who Person) error {
	if q.Responders.ExcludeRequester && q.RequestedBy != "" && q.RequestedBy == who.Platform+":"+who.ID {
		return Errorf(ENotAllowed, "%s asked for this and may not answer it themselves; who may answer: %s", who.String(), DescribeResponders(q.Responders))
	}
	if !Allowed(q.Responders, who) {
		return Errorf(ENotAllowed, "%s may not answer this question; who may answer: %s", who.String(), DescribeResponders(q.Responders))
	}
	return nil
}

// Merge returns r with the people of o added.
func (r Responders) Merge(o Responders) Responders {
	add := func(a, b []string) []string {
		out := slices.Clone(a)
		for _, x := range b {
			if !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
		return out
	}
	r.Users = add(r.Users, o.Users)
	for _, kind := range slices.Sorted(maps.Keys(o.Groups)) {
		r = r.WithGroup(kind, add(r.Groups[kind], o.Groups[kind])...)
	}
	r.ExcludeRequester = r.ExcludeRequester || o.ExcludeRequester
	return r
}

// DescribeResponders names who may answer, for the message a refused person
// gets.
func DescribeResponders(r Responders) string {
	if r.Empty() {
		return "anyone"
	}
	parts := append([]string(nil), r.Users...)
	for _, p := range registeredPlatforms() {
		if p.GroupKind == "" {
			continue
		}
		for _, g := range r.Groups[p.GroupKind] {
			parts = append(parts, p.GroupNoun+" "+g)
		}
	}
	for _, d := range DirectoryGroups() {
		for _, g := range r.Groups[d.Kind] {
			parts = append(parts, d.Noun+" "+g)
		}
	}
	return strings.Join(parts, ", ")
}
