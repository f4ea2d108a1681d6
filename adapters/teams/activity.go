package teams

import (
	"encoding/json"
	"strings"
)

// The Bot Framework activity schema, as much of it as the adapter reads
// and sends.
// https://github.com/microsoft/botframework-sdk/blob/main/specs/botframework-activity/botframework-activity.md

type activity struct {
	Type         string          `json:"type"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	ServiceURL   string          `json:"serviceUrl,omitempty"`
	ChannelID    string          `json:"channelId,omitempty"`
	From         *account        `json:"from,omitempty"`
	Conversation *conversation   `json:"conversation,omitempty"`
	Recipient    *account        `json:"recipient,omitempty"`
	Text         string          `json:"text,omitempty"`
	TextFormat   string          `json:"textFormat,omitempty"`
	ReplyToID    string          `json:"replyToId,omitempty"`
	Attachments  []attachment    `json:"attachments,omitempty"`
	Value        json.RawMessage `json:"value,omitempty"`
	ChannelData  json.RawMessage `json:"channelData,omitempty"`
	Action       string          `json:"action,omitempty"` // installationUpdate: add, remove
	MembersAdded []account       `json:"membersAdded,omitempty"`
	Summary      string          `json:"summary,omitempty"`
}

type account struct {
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	AADObjectID string `json:"aadObjectId,omitempty"`
}

type conversation struct {
	ID               string `json:"id"`
	ConversationType string `json:"conversationType,omitempty"` // personal, groupChat, channel
	TenantID         string `json:"tenantId,omitempty"`
	IsGroup          bool   `json:"isGroup,omitempty"`
	Name             string `json:"name,omitempty"`
}

type attachment struct {
	ContentType string          `json:"contentType"`
	Content     json.RawMessage `json:"content"`
}

// teamsChannelData is Teams' channelData on inbound activities.
type teamsChannelData struct {
	EventType string `json:"eventType,omitempty"`
	Team      *struct {
		ID   string `json:"id"`
		Name string `json:"name,omitempty"`
	} `json:"team,omitempty"`
	Channel *struct {
		ID   string `json:"id"`
		Name string `json:"name,omitempty"`
	} `json:"channel,omitempty"`
	Tenant *struct {
		ID string `json:"id"`
	} `json:"tenant,omitempty"`
}

// invokeValue is the value of an adaptiveCard/action invoke.
type invokeValue struct {
	Action struct {
		Type string          `json:"type"`
		Verb string          `json:"verb"`
		Data json.RawMessage `json:"data"`
	} `json:"action"`
	Trigger string `json:"trigger"` // manual, automatic (a refresh)
}

// invokeResponse is the body of the answer to an invoke.
type invokeResponse struct {
	StatusCode int    `json:"statusCode"`
	Type       string `json:"type"`
	Value      any    `json:"value"`
}

// The content types of an invoke response.
const (
	cardContentType  = "application/vnd.microsoft.card.adaptive"
	errorContentType = "application/vnd.microsoft.error"
)

// conversationParams is the body of POST /v3/conversations.
type conversationParams struct {
	IsGroup     bool      `json:"isGroup"`
	Bot         *account  `json:"bot,omitempty"`
	TenantID    string    `json:"tenantId,omitempty"`
	Activity    *activity `json:"activity,omitempty"`
	ChannelData any       `json:"channelData,omitempty"`
}

// conversationResource is its answer.
type conversationResource struct {
	ID         string `json:"id"`
	ActivityID string `json:"activityId"`
	ServiceURL string `json:"serviceUrl,omitempty"`
}

// resourceResponse answers a sent or updated activity.
type resourceResponse struct {
	ID string `json:"id"`
}

// cardActivity is a message carrying one Adaptive Card.
func cardActivity(card json.RawMessage, summary string) *activity {
	return &activity{Type: "message", Summary: summary,
		Attachments: []attachment{{ContentType: cardContentType, Content: card}}}
}

// baseConversation is a conversation id without a thread's ";messageid=".
func baseConversation(id string) string {
	base, _, _ := strings.Cut(id, ";messageid=")
	return base
}

// isChannel reports whether a conversation id names a team channel
// (19:…@thread.tacv2, or @thread.skype for older teams): posting there
// starts a new thread.
func isChannel(id string) bool {
	id = baseConversation(id)
	return strings.HasPrefix(id, "19:") && (strings.HasSuffix(id, "@thread.tacv2") || strings.HasSuffix(id, "@thread.skype"))
}
