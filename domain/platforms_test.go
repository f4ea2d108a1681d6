package domain

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The core's own tests use the two chat platforms as their adapters
// register them (adapters/slack/platform.go, adapters/discord/platform.go),
// which this package cannot import.
func init() {
	RegisterPlatform(PlatformInfo{Name: "slack", Place: func(c string) string { return "Slack " + c },
		GroupKind: "slack_usergroups", GroupNoun: "Slack user group"})
	RegisterPlatform(PlatformInfo{Name: "discord", Place: func(c string) string { return "Discord channel " + c },
		GroupKind: "discord_roles", GroupNoun: "Discord role"})
}

func TestAPlatformNobodyRegisteredHasNoGroups(t *testing.T) {
	r := Responders{Groups: map[string][]string{"slack_usergroups": {"S1"}, "discord_roles": {"S1"}}}
	assert.True(t, Allowed(r, Person{Platform: "slack", ID: "U1", Groups: []string{"S1"}}))
	assert.False(t, Allowed(r, Person{Platform: "matrix", ID: "U1", Groups: []string{"S1"}}),
		"a group id matches only on the platform whose adapter says which responders field it checks")
	assert.Equal(t, "matrix #ops", TargetName(Target{Platform: "matrix", Channel: "#ops"}))
	assert.Equal(t, "Slack C1", TargetName(Target{Platform: "slack", Channel: "C1"}))
	assert.Equal(t, "Discord role S1, Slack user group S1", DescribeResponders(r))
}
