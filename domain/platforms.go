package domain

import (
	"slices"
	"strings"
	"sync"
)

// PlatformInfo is what the core shows and checks of one chat platform,
// without knowing the platform: its adapter registers it (RegisterPlatform)
// when its package is loaded. A platform nobody registered is shown by its
// name and has no responder groups.
type PlatformInfo struct {
	// Name is the platform's name in targets and person keys ("slack").
	Name string
	// Place names a channel of the platform for people: "Slack C0123".
	Place func(channel string) string
	// GroupKind is the kind of responder group people of this platform
	// belong to, and its field in a responders object ("slack_usergroups",
	// "discord_roles"): Responders.Groups of that kind are matched against
	// Person.Groups as the adapter fills them. Empty: no groups.
	GroupKind string
	// GroupNoun names one such group for people: "Slack user group".
	GroupNoun string
}

var platforms struct {
	sync.RWMutex
	byName map[string]PlatformInfo
	order  []string
}

// RegisterPlatform makes p known to the core. Registering a name again
// replaces it.
func RegisterPlatform(p PlatformInfo) {
	platforms.Lock()
	defer platforms.Unlock()
	if platforms.byName == nil {
		platforms.byName = map[string]PlatformInfo{}
	}
	if _, ok := platforms.byName[p.Name]; !ok {
		platforms.order = append(platforms.order, p.Name)
		slices.Sort(platforms.order)
	}
	platforms.byName[p.Name] = p
}

func platformInfo(name string) (PlatformInfo, bool) {
	platforms.RLock()
	defer platforms.RUnlock()
	p, ok := platforms.byName[name]
	return p, ok
}

// registeredPlatforms returns the registered platforms by name.
func registeredPlatforms() []PlatformInfo {
	platforms.RLock()
	defer platforms.RUnlock()
	out := make([]PlatformInfo, 0, len(platforms.order))
	for _, n := range platforms.order {
		out = append(out, platforms.byName[n])
	}
	return out
}

// GroupKinds returns the kinds of responder group the registered platforms
// and directories take, sorted.
func GroupKinds() []string {
	var out []string
	for _, p := range registeredPlatforms() {
		if p.GroupKind != "" {
			out = append(out, p.GroupKind)
		}
	}
	for _, g := range DirectoryGroups() {
		out = append(out, g.Kind)
	}
	slices.Sort(out)
	return out
}

// DirectoryGroup is a kind of responder group that no chat platform owns:
// a directory outside the chat (who is on call for a schedule) says who
// belongs to it. A person of any platform belongs to the group id of Kind
// when their Groups hold "<Kind>:<id>" (the Router fills them through the
// directory when a question names such groups).
type DirectoryGroup struct {
	// Kind is the group's field in a responders object.
	Kind string
	// Noun names one such group for people.
	Noun string
}

var directories struct {
	sync.RWMutex
	byKind map[string]DirectoryGroup
}

// RegisterDirectoryGroup makes a kind of directory group known to the core.
// Registering a kind again replaces it.
func RegisterDirectoryGroup(g DirectoryGroup) {
	directories.Lock()
	defer directories.Unlock()
	if directories.byKind == nil {
		directories.byKind = map[string]DirectoryGroup{}
	}
	directories.byKind[g.Kind] = g
}

// DirectoryGroups returns the registered directory group kinds by kind.
func DirectoryGroups() []DirectoryGroup {
	directories.RLock()
	defer directories.RUnlock()
	out := make([]DirectoryGroup, 0, len(directories.byKind))
	for _, g := range directories.byKind {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b DirectoryGroup) int { return strings.Compare(a.Kind, b.Kind) })
	return out
}

// DirectoryMember is the entry of Person.Groups that says the person
// belongs to the directory group id of kind.
func DirectoryMember(kind, id string) string { return kind + ":" + id }

// TargetName names a target's place for people and the audit trail.
func TargetName(t Target) string {
	if p, ok := platformInfo(t.Platform); ok && p.Place != nil {
		return p.Place(t.Channel)
	}
	return t.Platform + " " + t.Channel
}
