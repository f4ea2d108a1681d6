package telegram

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// adminTTL is how long a chat's administrators are trusted once read:
// a burst of presses costs one getChatAdministrators call per chat, and a
// demoted administrator stops answering within it.
const adminTTL = 60 * time.Second

// errAdminsUnread marks a person whose admin rights could not be read.
var errAdminsUnread = errors.New("the chat's administrators could not be read")

// adminCache keeps each chat's administrators (user ids) for adminTTL; a
// failed read is kept only briefly, so the next press tries again.
type adminCache struct {
	mu sync.Mutex
	m  map[string]adminEntry
}

type adminEntry struct {
	ids map[int64]bool
	at  time.Time
}

// isAdmin reports whether user administers chat (an id or @username).
func (a *Adapter) isAdmin(ctx context.Context, chat string, user int64) (bool, error) {
	c := &a.admins
	c.mu.Lock()
	e, ok := c.m[chat]
	c.mu.Unlock()
	if ok && a.now().Sub(e.at) < adminTTL {
		return e.ids[user], nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	var members []struct {
		Status string `json:"status"`
		User   User   `json:"user"`
	}
	if err := a.api.call(ctx, "getChatAdministrators", map[string]any{"chat_id": chat}, &members); err != nil {
		return false, err
	}
	e = adminEntry{ids: map[int64]bool{}, at: a.now()}
	for _, m := range members {
		if m.Status == "creator" || m.Status == "administrator" {
			e.ids[m.User.ID] = true
		}
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]adminEntry{}
	}
	c.m[chat] = e
	c.mu.Unlock()
	return e.ids[user], nil
}

// person describes u for the Router, with the chats of q's
// telegram_chat_admins that u administers as their groups. The error is
// errAdminsUnread when a chat's administrators could not be read and u is
// admitted by nothing else: the caller refuses and says why (fail closed).
func (a *Adapter) person(ctx context.Context, q *domain.Question, u User) (domain.Person, error) {
	p := personOf(u)
	chats := q.Responders.Group(GroupKind)
	if len(chats) == 0 || slices.Contains(q.Responders.Users, Platform+":"+p.ID) {
		return p, nil
	}
	var failed error
	for _, chat := range chats {
		ok, err := a.isAdmin(ctx, chat, u.ID)
		if err != nil {
			a.log.Warn("reading a chat's administrators failed", "chat", chat, "err", err)
			failed = errAdminsUnread
			continue
		}
		if ok {
			p.Groups = append(p.Groups, chat)
		}
	}
	if len(p.Groups) > 0 {
		failed = nil
	}
	return p, failed
}

// adminsUnread is the refusal for a person whose admin rights Telegram
// would not tell.
func adminsUnread(q *domain.Question) reply {
	return reply{"Telegram did not say who administers this chat just now, so your right to answer could not be checked. " +
		domain.ChangedNothing + " Try again in a minute. Who may answer: " + domain.DescribeResponders(q.Responders), true}
}

// ResolvePerson implements lifecycle.PersonResolver: a Telegram user named
// in an answer relayed through the API is an administrator of the route's
// chats as they would be on a press (not one when that cannot be read).
func (a *Adapter) ResolvePerson(ctx context.Context, q *domain.Question, p domain.Person) domain.Person {
	id, err := strconv.ParseInt(p.ID, 10, 64)
	if err != nil {
		return p
	}
	out, _ := a.person(ctx, q, User{ID: id, Username: p.Name})
	out.Name, out.Via = p.Name, p.Via
	return out
}
