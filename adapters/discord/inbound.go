package discord

import (
	"strings"

	"github.com/askbridge/askbridge/domain"
	"github.com/bwmarrin/discordgo"
	sjson "github.com/segmentio/encoding/json"
)

// Interaction types and component types read from requests.
const (
	typePing            = 1
	typeComponent       = 3
	typeModalSubmit     = 5
	componentTextInput  = 4
	responsePong        = 1
	responseMessage     = 4
	responseDeferUpdate = 6
	responseUpdate      = 7
	responseModal       = 9
)

// inbound is the part of an interaction the adapter reads. It is parsed
// here rather than by discordgo so that component types discordgo does not
// know (modal labels, Components V2 in the clicked message) never make a
// click unreadable.
type inbound struct {
	ID        string `json:"id"`
	AppID     string `json:"application_id"`
	Type      int    `json:"type"`
	Token     string `json:"token"`
	GuildID   string `json:"guild_id"`
	ChannelID string `json:"channel_id"`
	Data      struct {
		CustomID   string      `json:"custom_id"`
		Values     []string    `json:"values"`
		Components []component `json:"components"`
	} `json:"data"`
	Message *struct {
		ID    string `json:"id"`
		Flags int    `json:"flags"`
	} `json:"message"`
	Member *struct {
		User  *discordgo.User `json:"user"`
		Nick  string          `json:"nick"`
		Roles []string        `json:"roles"`
	} `json:"member"`
	User *discordgo.User `json:"user"`
}

// component is a modal component: an action row (components) or a label
// (component) around a text input.
type component struct {
	Type       int         `json:"type"`
	CustomID   string      `json:"custom_id"`
	Value      string      `json:"value"`
	Components []component `json:"components"`
	Component  *component  `json:"component"`
}

// text returns the value of the modal's text input, trimmed.
func (in *inbound) text() string { return strings.TrimSpace(in.rawText()) }

// rawText returns the value of the modal's text input as typed.
func (in *inbound) rawText() string {
	var find func(cs []component) (string, bool)
	find = func(cs []component) (string, bool) {
		for _, c := range cs {
			if c.Type == componentTextInput && c.CustomID == textInputID {
				return c.Value, true
			}
			if v, ok := find(c.Components); ok {
				return v, true
			}
			if c.Component != nil {
				if v, ok := find([]component{*c.Component}); ok {
					return v, true
				}
			}
		}
		return "", false
	}
	v, _ := find(in.Data.Components)
	return v
}

// person is who clicked: the member in a server (with role ids), the user
// in a DM.
func (in *inbound) person() domain.Person {
	var u *discordgo.User
	var roles []string
	nick := ""
	if in.Member != nil && in.Member.User != nil {
		u, roles, nick = in.Member.User, in.Member.Roles, in.Member.Nick
	} else {
		u = in.User
	}
	if u == nil {
		return domain.Person{Platform: "discord"}
	}
	name := nick
	if name == "" {
		name = u.GlobalName
	}
	if name == "" {
		name = u.Username
	}
	return domain.Person{Platform: "discord", ID: u.ID, Name: name, Groups: roles}
}

func fromDiscordgo(i *discordgo.Interaction) *inbound {
	in := &inbound{ID: i.ID, AppID: i.AppID, Type: int(i.Type), Token: i.Token, GuildID: i.GuildID,
		ChannelID: i.ChannelID, User: i.User}
	if i.Member != nil {
		in.Member = &struct {
			User  *discordgo.User `json:"user"`
			Nick  string          `json:"nick"`
			Roles []string        `json:"roles"`
		}{User: i.Member.User, Nick: i.Member.Nick, Roles: i.Member.Roles}
	}
	if i.Message != nil {
		in.Message = &struct {
			ID    string `json:"id"`
			Flags int    `json:"flags"`
		}{ID: i.Message.ID, Flags: int(i.Message.Flags)}
	}
	switch d := i.Data.(type) {
	case discordgo.MessageComponentInteractionData:
		in.Data.CustomID, in.Data.Values = d.CustomID, d.Values
	case discordgo.ModalSubmitInteractionData:
		in.Data.CustomID = d.CustomID
		for _, c := range d.Components {
			if row, ok := c.(*discordgo.ActionsRow); ok {
				for _, cc := range row.Components {
					if ti, ok := cc.(*discordgo.TextInput); ok {
						in.Data.Components = append(in.Data.Components, component{Type: componentTextInput, CustomID: ti.CustomID, Value: ti.Value})
					}
				}
			}
		}
	}
	return in
}

// decodeInbound parses a verified interaction. segmentio's decoder reads
// in one pass what encoding/json reads in two (validate, then decode): a
// quarter of the time, which counts in a burst of clicks (BENCHMARKS.md).
// FuzzInboundDecodersAgree checks it reads what encoding/json would.
func decodeInbound(body []byte, in *inbound) error { return sjson.Unmarshal(body, in) }

// opensModal reports whether the interaction may have to be answered with
// a modal: "Other…", "Answer…", or "Other…" chosen in a select.
func opensModal(in *inbound) bool {
	if in.Type != typeComponent {
		return false
	}
	act, ok := parseCustomID(in.Data.CustomID)
	if !ok {
		return false
	}
	switch act.Kind {
	case actOther, actText, actEdit:
		return true
	case actSelect:
		for _, v := range in.Data.Values {
			if v == otherValue {
				return true
			}
		}
	}
	return false
}

// discordgo returns the fields of the interaction rememberToken needs.
func (in *inbound) discordgo() *discordgo.Interaction {
	i := &discordgo.Interaction{ID: in.ID, AppID: in.AppID, Token: in.Token}
	if in.Message != nil {
		i.Message = &discordgo.Message{ID: in.Message.ID}
	}
	return i
}
