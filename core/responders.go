package core

import (
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
	var groups []string
	switch who.Platform {
	case "slack":
		groups = r.SlackUsergroups
	case "discord":
		groups = r.DiscordRoles
	}
	for _, g := range who.Groups {
		if slices.Contains(groups, g) {
			return true
		}
	}
	return false
}

// DescribeResponders names who may answer, for the message a refused person
// gets.
func DescribeResponders(r Responders) string {
	if r.Empty() {
		return "anyone"
	}
	var parts []string
	for _, u := range r.Users {
		parts = append(parts, u)
	}
	for _, g := range r.SlackUsergroups {
		parts = append(parts, "Slack user group "+g)
	}
	for _, g := range r.DiscordRoles {
		parts = append(parts, "Discord role "+g)
	}
	return strings.Join(parts, ", ")
}
