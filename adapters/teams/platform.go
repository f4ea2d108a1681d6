package teams

import "github.com/askbridge/askbridge/domain"

// Platform is the name of Microsoft Teams in targets and person keys
// ("teams:<Entra object id>").
const Platform = "teams"

// Teams people are named by their Entra (Azure AD) object id, the
// aadObjectId of an activity's from; responders name them one by one
// (Teams has no group the bot may read without Graph permissions).
func init() {
	domain.RegisterPlatform(domain.PlatformInfo{
		Name:  Platform,
		Place: func(conversation string) string { return "Teams conversation " + conversation },
	})
}
