package telegram

import "github.com/askbridge/askbridge/domain"

// Platform is the name of Telegram in targets and person keys
// ("telegram:<user id>").
const Platform = "telegram"

func init() {
	domain.RegisterPlatform(domain.PlatformInfo{
		Name:  Platform,
		Place: func(chat string) string { return "Telegram chat " + chat },
	})
}
