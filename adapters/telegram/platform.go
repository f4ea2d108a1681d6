package telegram

import "github.com/askbridge/askbridge/domain"

// Platform is the name of Telegram in targets and person keys
// ("telegram:<user id>").
const Platform = "telegram"

// GroupKind is the kind of responder group of Telegram people: the
// responders field listing chats whose administrators may answer
// ("telegram_chat_admins": ["-1001234567890"]). A person's Groups (filled
// by this adapter from getChatAdministrators) are the listed chats they
// administer.
const GroupKind = "telegram_chat_admins"

func init() {
	domain.RegisterPlatform(domain.PlatformInfo{
		Name:      Platform,
		Place:     func(chat string) string { return "Telegram chat " + chat },
		GroupKind: GroupKind,
		GroupNoun: "administrators of Telegram chat",
	})
}
