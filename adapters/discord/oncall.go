package discord

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/askbridge/askbridge/adapters/internal/mentions"
	"github.com/askbridge/askbridge/domain"
	"github.com/bwmarrin/discordgo"
)

// maxAllowedMentions is Discord's limit on allowed_mentions.roles and
// allowed_mentions.users.
const maxAllowedMentions = 100

// Update implements lifecycle.Channel: it re-renders a pending copy with the
// vote tally and the people who may answer now, controls still live. A
// question that is no longer pending is left to Finish.
func (a *Adapter) Update(ctx context.Context, q *domain.Question, t domain.Target) error {
	if t.MessageTS == "" {
		return nil
	}
	// Votes may have come in since q was read, and a click may have left a
	// fresher interaction token on the copy: use the latest record.
	if fresh, err := a.router.Question(ctx, q.ProjectID, q.ID); err == nil {
		q = fresh
		for _, ft := range fresh.Targets {
			if ft.Platform == "discord" && ft.MessageTS == t.MessageTS {
				t = ft
			}
		}
	}
	if q.Status != domain.StatusPending {
		return nil
	}
	return a.edit(ctx, q, t, a.render(q))
}

// Remind implements lifecycle.Channel: a reply to the copy that mentions the
// responders' roles and users, and says how long is left. allowed_mentions
// lists exactly those roles and users, so nobody else (never @everyone or
// @here) is pinged whatever the text says.
func (a *Adapter) Remind(ctx context.Context, q *domain.Question, t domain.Target) error {
	if t.MessageTS == "" {
		return nil
	}
	channel := t.Refs[refChannel]
	if channel == "" {
		channel = t.Channel
	}
	roles, users := mentionIDs(q.Responders)
	var b strings.Builder
	b.WriteString("Still waiting for an answer — " + domain.ExpiresPhrase(q, a.now()) + ".")
	if q.ApprovalsRequired > 1 {
		fmt.Fprintf(&b, " Needs %d approvals", q.ApprovalsRequired)
		if tally := domain.TallyLine(q); tally != "" {
			b.WriteString("; " + tally)
		}
		b.WriteString(".")
	}
	var ms []string
	for _, r := range roles {
		ms = append(ms, "<@&"+r+">")
	}
	for _, u := range users {
		ms = append(ms, "<@"+u+">")
	}
	// As many mentions as fit, whole, and only those allowed to notify.
	content, shown := mentions.Fit(ms, domain.Shorten(b.String(), maxContent/2), maxContent, utf8.RuneCountInString)
	if shown < len(roles) {
		roles, users = roles[:shown], nil
	} else {
		users = users[:shown-len(roles)]
	}
	notFatal := false
	send := &discordgo.MessageSend{
		Content: content,
		AllowedMentions: &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{},
			Roles: roles, Users: users},
		// A reply to the copy; if the copy was deleted, a plain message.
		Reference: &discordgo.MessageReference{MessageID: t.MessageTS, ChannelID: channel, FailIfNotExists: &notFatal},
	}
	id := nonce("remind", q.ID, t.MessageTS, strconv.Itoa(q.EscalationLevel))
	return a.call(ctx, "reminding in channel "+channel, func(opts ...discordgo.RequestOption) error {
		_, err := a.sendMessage(channel, send, id, opts...)
		return err
	})
}

// MentionHolders implements lifecycle.HolderMentioner: a reply to the copy
// that mentions whoever is on call who is a Discord user in the configured
// people (pagerduty.people), names the others (escaped: names come from
// the pager), or says who is on call could not be determined.
// allowed_mentions lists exactly the users mentioned.
func (a *Adapter) MentionHolders(ctx context.Context, q *domain.Question, t domain.Target, hs []domain.GroupHolders) error {
	if t.MessageTS == "" || len(hs) == 0 {
		return nil
	}
	channel := t.Refs[refChannel]
	if channel == "" {
		channel = t.Channel
	}
	var users, lines []string
	for _, h := range hs {
		lines = append(lines, domain.HoldersLine(h, func(p domain.Holder) string {
			for _, k := range p.Keys {
				if id, ok := strings.CutPrefix(k, "discord:"); ok && snowflake(id) {
					if len(users) < maxAllowedMentions && !slices.Contains(users, id) {
						users = append(users, id)
					}
					return "<@" + id + ">"
				}
			}
			name := p.Name
			if name == "" {
				name = "someone"
			}
			return escapeMarkdown(domain.Shorten(name, 100))
		}, func(s string) string { return escapeMarkdown(domain.Shorten(s, 200)) }))
	}
	notFatal := false
	send := &discordgo.MessageSend{
		Content: domain.Shorten(strings.Join(lines, "\n"), maxContent),
		AllowedMentions: &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{},
			Users: users},
		Reference: &discordgo.MessageReference{MessageID: t.MessageTS, ChannelID: channel, FailIfNotExists: &notFatal},
	}
	id := nonce("holders", q.ID, t.MessageTS, strconv.Itoa(q.EscalationLevel))
	return a.call(ctx, "mentioning who is on call in channel "+channel, func(opts ...discordgo.RequestOption) error {
		_, err := a.sendMessage(channel, send, id, opts...)
		return err
	})
}

// mentionIDs returns the Discord role and user ids among the responders,
// at most Discord's limit of each. Anything that is not a snowflake is left
// out, so no text can turn into a mention.
func mentionIDs(r domain.Responders) (roles, users []string) {
	for _, id := range r.Group(GroupKind) {
		if snowflake(id) && len(roles) < maxAllowedMentions {
			roles = append(roles, id)
		}
	}
	for _, u := range r.Users {
		if id, ok := strings.CutPrefix(u, "discord:"); ok && snowflake(id) && len(users) < maxAllowedMentions {
			users = append(users, id)
		}
	}
	return roles, users
}

func snowflake(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
