package slack

import "github.com/askbridge/askbridge/domain"

// Platform is the name of Slack in targets and person keys.
const Platform = "slack"

// How the core names Slack places and checks Slack responders: a person's
// Groups (filled by this adapter) are their user group ids, matched against
// the route's slack_usergroups.
// GroupKind is the kind of responder group of Slack people: the
// responders field that names them ("slack_usergroups").
const GroupKind = "slack_usergroups"

func init() {
	domain.RegisterPlatform(domain.PlatformInfo{
		Name:      Platform,
		Place:     func(channel string) string { return "Slack " + channel },
		GroupKind: GroupKind,
		GroupNoun: "Slack user group",
	})
}
