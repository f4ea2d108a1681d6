package teams

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Conversation references: where a conversation's Bot Connector lives
// (its serviceUrl), its tenant, and the names people know it by. Teams
// sends them when the app is installed in a team or chat, when channels
// are created or renamed, and with every message; the adapter keeps them
// in the store (readable by every replica) so a route can name a channel
// by its id or as "Team name/Channel name", and posts reach the right
// region's service.

// refsProject and refsKey hold the references among the store's drafts: a
// project name no ask can use (project names never contain a space), one
// entry per conversation id, and one per name.
const (
	refsProject = "teams conversations"
	refsKey     = "references"
	refsTTL     = 400 * 24 * time.Hour // renewed by every activity
)

// convRef is what the adapter knows of one conversation.
type convRef struct {
	ID         string `json:"id"`
	ServiceURL string `json:"service_url"`
	Tenant     string `json:"tenant,omitempty"`
	Type       string `json:"type,omitempty"` // channel, groupChat, personal
	Team       string `json:"team,omitempty"` // the team's name
	Name       string `json:"name,omitempty"` // the channel's or chat's name
}

func (r convRef) encode() map[string][]string {
	b, _ := json.Marshal(r)
	return map[string][]string{"ref": {string(b)}}
}

func decodeRef(d map[string][]string) (convRef, bool) {
	var r convRef
	if len(d["ref"]) == 0 || json.Unmarshal([]byte(d["ref"][0]), &r) != nil || r.ID == "" {
		return convRef{}, false
	}
	return r, true
}

// nameKey is how a "Team/Channel" name is looked up: case and spaces
// around the slash do not matter.
func nameKey(team, channel string) string {
	return "name:" + strings.ToLower(strings.TrimSpace(team)) + "/" + strings.ToLower(strings.TrimSpace(channel))
}

// remember stores r, merged with what was known of the conversation.
func (a *Adapter) remember(ctx context.Context, r convRef) {
	if r.ID == "" || r.ServiceURL == "" {
		return
	}
	if err := a.conn.allow.check(r.ServiceURL); err != nil {
		a.log.Warn("not keeping a conversation whose serviceUrl is not allowed", "conversation", r.ID, "err", err)
		return
	}
	if old, ok := a.lookup(ctx, r.ID); ok {
		if r.Team == "" {
			r.Team = old.Team
		}
		if r.Name == "" {
			r.Name = old.Name
		}
		if r.Tenant == "" {
			r.Tenant = old.Tenant
		}
		if r.Type == "" {
			r.Type = old.Type
		}
		if old == r {
			return
		}
	}
	if err := a.router.PutDraft(ctx, refsProject, refsKey, "id:"+r.ID, r.encode(), refsTTL); err != nil {
		a.log.Warn("keeping a conversation reference failed", "conversation", r.ID, "err", err)
		return
	}
	if r.Team != "" && r.Name != "" {
		if err := a.router.PutDraft(ctx, refsProject, refsKey, nameKey(r.Team, r.Name), r.encode(), refsTTL); err != nil {
			a.log.Warn("keeping a channel's name failed", "conversation", r.ID, "err", err)
		}
	}
}

// lookup returns the reference of conversation id.
func (a *Adapter) lookup(ctx context.Context, id string) (convRef, bool) {
	d, err := a.router.GetDraft(ctx, refsProject, refsKey, "id:"+baseConversation(id))
	if err != nil {
		return convRef{}, false
	}
	return decodeRef(d)
}

// resolve turns a target's channel — a conversation id, or "Team/Channel"
// as Teams shows them — into the conversation to post to.
func (a *Adapter) resolve(ctx context.Context, channel string) (convRef, error) {
	channel = strings.TrimSpace(channel)
	if team, name, ok := strings.Cut(channel, "/"); ok && !strings.Contains(channel, ":") {
		d, err := a.router.GetDraft(ctx, refsProject, refsKey, nameKey(team, name))
		if err != nil {
			return convRef{}, fmt.Errorf("teams: reading the channel %q: %w", channel, err)
		}
		if r, ok := decodeRef(d); ok {
			return r, nil
		}
		return convRef{}, permanentf("teams: no channel %q is known: add the app to the team (docs/teams.md), or name the channel by its id (19:…@thread.tacv2)", channel)
	}
	if r, ok := a.lookup(ctx, channel); ok {
		r.ID = baseConversation(channel)
		return r, nil
	}
	return convRef{ID: baseConversation(channel), ServiceURL: a.cfg.ServiceURL, Tenant: a.cfg.TenantID}, nil
}

// permanentError is a failure no retry fixes.
type permanentError struct{ msg string }

func (e *permanentError) Error() string   { return e.msg }
func (e *permanentError) Permanent() bool { return true }

func permanentf(format string, args ...any) error {
	return &permanentError{msg: fmt.Sprintf(format, args...)}
}

// learn keeps the conversation reference an inbound activity carries.
func (a *Adapter) learn(ctx context.Context, act *activity) {
	if act.Conversation == nil {
		return
	}
	r := convRef{ID: baseConversation(act.Conversation.ID), ServiceURL: act.ServiceURL,
		Tenant: act.Conversation.TenantID, Type: act.Conversation.ConversationType}
	var cd teamsChannelData
	_ = json.Unmarshal(act.ChannelData, &cd)
	if cd.Tenant != nil && r.Tenant == "" {
		r.Tenant = cd.Tenant.ID
	}
	if cd.Team != nil {
		r.Team = cd.Team.Name
	}
	if cd.Channel != nil && cd.Channel.ID != "" {
		r.ID = cd.Channel.ID
		r.Type = "channel"
		r.Name = cd.Channel.Name
		if r.Name == "" && cd.Team != nil && cd.Channel.ID == cd.Team.ID {
			r.Name = "General" // the team's first channel shares its id and has no name in events
		}
	} else if cd.Team != nil && r.ID == cd.Team.ID {
		r.Type, r.Name = "channel", "General"
	}
	if r.Type == "" && act.Conversation.Name != "" {
		r.Name = act.Conversation.Name
	}
	a.remember(ctx, r)
}
