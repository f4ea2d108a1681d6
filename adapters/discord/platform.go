package discord

import "github.com/askbridge/askbridge/domain"

// Platform is the name of Discord in targets and person keys.
const Platform = "discord"

// How the core names Discord places and checks Discord responders: a
// person's Groups (filled by this adapter) are their role ids, matched
// against the route's discord_roles.
func init() {
	domain.RegisterPlatform(domain.PlatformInfo{
		Name:      Platform,
		Place:     func(channel string) string { return "Discord channel " + channel },
		Groups:    func(r domain.Responders) []string { return r.DiscordRoles },
		GroupNoun: "Discord role",
	})
}
