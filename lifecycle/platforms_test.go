package lifecycle_test

import "github.com/askbridge/askbridge/domain"

// The lifecycle's tests use the two chat platforms as their adapters
// register them (adapters/slack/platform.go, adapters/discord/platform.go),
// which this package cannot import.
func init() {
	domain.RegisterPlatform(domain.PlatformInfo{Name: "slack", Place: func(c string) string { return "Slack " + c },
		GroupKind: "slack_usergroups", GroupNoun: "Slack user group"})
	domain.RegisterPlatform(domain.PlatformInfo{Name: "discord", Place: func(c string) string { return "Discord channel " + c },
		GroupKind: "discord_roles", GroupNoun: "Discord role"})
}
