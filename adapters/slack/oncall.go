package slack

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/mentions"
	"github.com/askbridge/askbridge/domain"
	"github.com/slack-go/slack"
)

// Update implements lifecycle.Channel: it re-renders a pending copy with the
// vote tally and the people who may answer now, controls still live. A
// question that is no longer pending is left to Finish.
func (a *Adapter) Update(ctx context.Context, q *domain.Question, t domain.Target) error {
	if t.MessageTS == "" {
		return nil
	}
	// Votes may have come in since q was read: show the latest state.
	if fresh, err := a.router.Question(ctx, q.ProjectID, q.ID); err == nil {
		q = fresh
	}
	if q.Status != domain.StatusPending {
		return nil
	}
	blocks, text := renderQuestionX(q, a.router.Clock().Now(), a.extras(q))
	return a.call(ctx, "chat.update", t.Channel, callOpts{}, func(ctx context.Context) error {
		_, _, _, err := a.api.UpdateMessageContext(ctx, t.Channel, t.MessageTS,
			slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
		return err
	})
}

// Remind implements lifecycle.Channel: a reply in the copy's thread that
// mentions the responders (users and user groups) and says how long is
// left. Nothing but the responders is ever mentioned.
func (a *Adapter) Remind(ctx context.Context, q *domain.Question, t domain.Target) error {
	if t.MessageTS == "" {
		return nil
	}
	return a.replyInThread(ctx, t, reminderText(q, a.router.Clock().Now()))
}

// threadOf is the thread a reply under copy t goes in: thread_ts must be
// the thread's parent.
func threadOf(t domain.Target) string {
	switch {
	case t.Refs["thread_ts"] != "":
		return t.Refs["thread_ts"]
	case t.ThreadTS != "":
		return t.ThreadTS
	}
	return t.MessageTS
}

// MentionHolders implements lifecycle.HolderMentioner: a reply in the
// copy's thread that mentions whoever is on call, each found on Slack by
// their email (users.lookupByEmail) or the configured people, or says who
// is on call could not be determined. Names with no Slack user are
// written out, escaped: they come from the pager.
func (a *Adapter) MentionHolders(ctx context.Context, q *domain.Question, t domain.Target, hs []domain.GroupHolders) error {
	if t.MessageTS == "" || len(hs) == 0 {
		return nil
	}
	return a.replyInThread(ctx, t, holdersText(hs))
}

// holdersText is one line per group (domain.HoldersLine), within Slack's
// limit on a message's text.
func holdersText(hs []domain.GroupHolders) string {
	var lines []string
	for _, h := range hs {
		lines = append(lines, domain.HoldersLine(h, slackHolder, func(s string) string { return escClip(s, 200) }))
	}
	return clip(strings.Join(lines, "\n"), maxFallbackText)
}

// slackHolder mentions a holder who is a Slack user, else names them.
func slackHolder(h domain.Holder) string {
	for _, k := range h.Keys {
		if id, ok := strings.CutPrefix(k, "slack:"); ok && slackID(id) {
			return "<@" + id + ">"
		}
	}
	name := h.Name
	if name == "" {
		name = "someone"
	}
	return escClip(name, 100) + " (not found on Slack)"
}

// replyInThread posts text in the thread of copy t.
func (a *Adapter) replyInThread(ctx context.Context, t domain.Target, text string) error {
	thread := threadOf(t)
	return a.call(ctx, "chat.postMessage", t.Channel, callOpts{}, func(ctx context.Context) error {
		_, _, err := a.api.PostMessageContext(ctx, t.Channel, slack.MsgOptionTS(thread),
			slack.MsgOptionText(text, false),
			slack.MsgOptionDisableLinkUnfurl(), slack.MsgOptionDisableMediaUnfurl())
		return err
	})
}

// reminderText is "<!subteam^S0123> <@U0123> Still waiting for an answer —
// expires in 12 min.", with the tally of an approval that needs several.
// Mentions that do not fit are counted ("and 12 more"), never cut.
func reminderText(q *domain.Question, now time.Time) string {
	var b strings.Builder
	b.WriteString("Still waiting for an answer — " + domain.ExpiresPhrase(q, now) + ".")
	if q.ApprovalsRequired > 1 {
		fmt.Fprintf(&b, " Needs %d approvals", q.ApprovalsRequired)
		if tally := domain.TallyLine(q); tally != "" {
			b.WriteString("; " + tally)
		}
		b.WriteString(".")
	}
	text, _ := mentions.Fit(mentionList(q.Responders), escClip(b.String(), maxFallbackText/2), maxFallbackText, textLen)
	return text
}

// mentionList holds the Slack mentions of the responders: <@U…> for Slack
// users, <!subteam^S…> for user groups. Ids that are not Slack ids are
// left out, so nothing else (no @here, no @channel) can be mentioned.
func mentionList(r domain.Responders) []string {
	var out []string
	for _, u := range r.Users {
		if id, ok := strings.CutPrefix(u, "slack:"); ok && slackID(id) {
			out = append(out, "<@"+id+">")
		}
	}
	for _, g := range r.Group(GroupKind) {
		if slackID(g) {
			out = append(out, "<!subteam^"+g+">")
		}
	}
	return out
}
