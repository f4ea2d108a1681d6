package telegram

import "encoding/json"

// The Bot API objects the adapter sends and reads
// (https://core.telegram.org/bots/api), only the fields it uses.

// User is a Telegram user or bot.
type User struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name,omitempty"`
	Username  string `json:"username,omitempty"`
}

// Chat is where a message is.
type Chat struct {
	ID       int64  `json:"id"`
	Type     string `json:"type"` // private, group, supergroup, channel
	Title    string `json:"title,omitempty"`
	Username string `json:"username,omitempty"`
	IsForum  bool   `json:"is_forum,omitempty"`
}

// Message is a message in a chat.
type Message struct {
	MessageID       int64                 `json:"message_id"`
	MessageThreadID int64                 `json:"message_thread_id,omitempty"`
	From            *User                 `json:"from,omitempty"`
	Chat            Chat                  `json:"chat"`
	Date            int64                 `json:"date"`
	Text            string                `json:"text,omitempty"`
	ReplyToMessage  *Message              `json:"reply_to_message,omitempty"`
	ReplyMarkup     *InlineKeyboardMarkup `json:"reply_markup,omitempty"`
}

// CallbackQuery is a press of an inline keyboard button.
type CallbackQuery struct {
	ID           string   `json:"id"`
	From         User     `json:"from"`
	Message      *Message `json:"message,omitempty"`
	ChatInstance string   `json:"chat_instance"`
	Data         string   `json:"data,omitempty"`
}

// Update is one incoming update (webhook body or getUpdates element).
type Update struct {
	UpdateID      int64          `json:"update_id"`
	Message       *Message       `json:"message,omitempty"`
	CallbackQuery *CallbackQuery `json:"callback_query,omitempty"`
}

// InlineKeyboardMarkup is the buttons under a message.
type InlineKeyboardMarkup struct {
	InlineKeyboard [][]InlineKeyboardButton `json:"inline_keyboard"`
}

// InlineKeyboardButton is one button: callback_data or url.
type InlineKeyboardButton struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data,omitempty"`
	URL          string `json:"url,omitempty"`
}

// ForceReply asks the person's client to reply to the bot's message.
type ForceReply struct {
	ForceReply            bool   `json:"force_reply"`
	InputFieldPlaceholder string `json:"input_field_placeholder,omitempty"`
	Selective             bool   `json:"selective,omitempty"`
}

// ReplyParameters makes a message a reply.
type ReplyParameters struct {
	MessageID                int64 `json:"message_id"`
	AllowSendingWithoutReply bool  `json:"allow_sending_without_reply,omitempty"`
}

// LinkPreviewOptions turns link previews off: agent links are never
// unfurled into the chat.
type LinkPreviewOptions struct {
	IsDisabled bool `json:"is_disabled"`
}

// sendMessage is the sendMessage method's parameters.
type sendMessage struct {
	ChatID             string              `json:"chat_id"`
	MessageThreadID    int64               `json:"message_thread_id,omitempty"`
	Text               string              `json:"text"`
	ParseMode          string              `json:"parse_mode,omitempty"`
	LinkPreviewOptions *LinkPreviewOptions `json:"link_preview_options,omitempty"`
	ReplyParameters    *ReplyParameters    `json:"reply_parameters,omitempty"`
	ReplyMarkup        any                 `json:"reply_markup,omitempty"`
}

// editMessageText is the editMessageText method's parameters. Without
// reply_markup, the edited message loses its inline keyboard.
type editMessageText struct {
	ChatID             string                `json:"chat_id"`
	MessageID          int64                 `json:"message_id"`
	Text               string                `json:"text"`
	ParseMode          string                `json:"parse_mode,omitempty"`
	LinkPreviewOptions *LinkPreviewOptions   `json:"link_preview_options,omitempty"`
	ReplyMarkup        *InlineKeyboardMarkup `json:"reply_markup,omitempty"`
}

// answerCallbackQuery is the answerCallbackQuery method's parameters.
type answerCallbackQuery struct {
	CallbackQueryID string `json:"callback_query_id"`
	Text            string `json:"text,omitempty"`
	ShowAlert       bool   `json:"show_alert,omitempty"`
}

// setWebhook is the setWebhook method's parameters.
type setWebhook struct {
	URL            string   `json:"url"`
	SecretToken    string   `json:"secret_token,omitempty"`
	AllowedUpdates []string `json:"allowed_updates"`
	MaxConnections int      `json:"max_connections,omitempty"`
}

// getUpdates is the getUpdates method's parameters.
type getUpdates struct {
	Offset         int64    `json:"offset,omitempty"`
	Timeout        int      `json:"timeout"`
	AllowedUpdates []string `json:"allowed_updates"`
}

// allowedUpdates are the updates the bridge asks for.
var allowedUpdates = []string{"message", "callback_query"}

// decodeUpdate reads one update; it refuses anything that is not a JSON
// object with an update id.
func decodeUpdate(b []byte) (*Update, error) {
	var u Update
	if err := json.Unmarshal(b, &u); err != nil {
		return nil, err
	}
	if u.UpdateID <= 0 {
		return nil, errNoUpdateID
	}
	return &u, nil
}
