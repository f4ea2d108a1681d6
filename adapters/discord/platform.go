package discord

import "github.com/askbridge/askbridge/domain"

// Platform is the name of Discord in targets and person keys.
const Platform = "discord"

// How the core names Discord places and checks Discord responders: a
// person's Groups (filled by this adapter) are their role ids, matched
// against the route's discord_roles.
// GroupKind is the kind of responder group of Discord people: the
// responders field that names them ("discord_roles").
const GroupKind = "discord_roles"

func init() {
	domain.RegisterPlatform(domain.PlatformInfo{
		Name:      Platform,
		Place:     func(channel string) string { return "Discord channel " + channel },
		GroupKind: GroupKind,
		GroupNoun: "Discord role",
	})
}
