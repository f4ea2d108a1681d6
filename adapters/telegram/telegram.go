// Package telegram is askbridge's Telegram adapter: it posts questions as
// HTML messages with inline keyboards through the Bot API, takes button
// presses and ForceReply answers from the webhook (POST /telegram/webhook)
// or from getUpdates long polling, and edits every copy to its final state.
package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/ackpool"
	"github.com/askbridge/askbridge/adapters/internal/httpx"
	"github.com/askbridge/askbridge/adapters/internal/mentions"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// DefaultAPIURL is the Bot API's address (telegram.api_url).
const DefaultAPIURL = "https://api.telegram.org"

// Keys of domain.Target.Refs owned by this adapter.
const (
	refChatID = "chat_id" // the numeric chat id Telegram answered (the target may name @channel)
)

var errNoUpdateID = errors.New("not a Telegram update: no update_id")

// Config configures the adapter (docs/telegram.md).
type Config struct {
	// Token is the bot's token from BotFather (telegram.token_file,
	// TELEGRAM_BOT_TOKEN); required.
	Token string
	// APIURL is the Bot API base (telegram.api_url, TELEGRAM_API_URL),
	// default DefaultAPIURL; a local Bot API server or a test fake.
	APIURL string
	// WebhookSecret is the secret_token given to setWebhook
	// (telegram.webhook_secret_file, TELEGRAM_WEBHOOK_SECRET): it enables
	// POST /telegram/webhook. Empty: updates come by getUpdates long
	// polling (a bridge without a public URL).
	WebhookSecret string
	// PublicURL is the bridge's public address: links to a question's page.
	PublicURL string

	// Transport carries requests to Telegram (default httpx.Transport).
	Transport http.RoundTripper
	// RetryAttempts, RetryBackoff and MaxRetryAfter bound retries of one
	// call on 5xx, network errors and 429 (defaults 5, 250 ms, 30 s).
	RetryAttempts int
	RetryBackoff  time.Duration
	MaxRetryAfter time.Duration
	// ChatInterval spaces messages sent to one chat (default 1 s: Telegram
	// allows about one a second per chat, 20 a minute per group); negative
	// turns pacing off (tests).
	ChatInterval time.Duration
	// PollTimeout is getUpdates' long-poll timeout (default 25 s).
	PollTimeout time.Duration
}

// Adapter is the Telegram lifecycle.Channel plus its update handling.
type Adapter struct {
	cfg    Config
	router lifecycle.Chat
	log    *slog.Logger
	api    *client
	pool   *ackpool.Pool
	admins adminCache
}

var _ lifecycle.PersonResolver = (*Adapter)(nil)

var _ lifecycle.Channel = (*Adapter)(nil)

// validSecret: setWebhook's secret_token is 1–256 of A-Z a-z 0-9 _ -.
func validSecret(s string) bool {
	if len(s) == 0 || len(s) > 256 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// New builds the adapter. Errors name the setting and the fix, never a secret.
func New(cfg Config, router lifecycle.Chat, log *slog.Logger) (*Adapter, error) {
	cfg.Token = strings.TrimSpace(cfg.Token)
	if cfg.Token == "" {
		return nil, errors.New("telegram: the bot token is required (telegram.token_file or TELEGRAM_BOT_TOKEN; BotFather gives it)")
	}
	if strings.ContainsAny(cfg.Token, "/ ?#") {
		return nil, errors.New("telegram: the bot token must be the token BotFather gave, such as 123456:ABC-DEF…, without spaces or slashes")
	}
	if router == nil {
		return nil, errors.New("telegram: a router is required")
	}
	if cfg.WebhookSecret != "" && !validSecret(cfg.WebhookSecret) {
		return nil, errors.New("telegram: the webhook secret (telegram.webhook_secret_file or TELEGRAM_WEBHOOK_SECRET) must be 1–256 characters of A-Z, a-z, 0-9, _ and -")
	}
	if cfg.APIURL == "" {
		cfg.APIURL = DefaultAPIURL
	}
	u, err := url.Parse(cfg.APIURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("telegram: telegram.api_url must be an absolute http(s) URL such as %s", DefaultAPIURL)
	}
	if cfg.Transport == nil {
		cfg.Transport = httpx.Transport()
	}
	if cfg.RetryAttempts <= 0 {
		cfg.RetryAttempts = 5
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = 250 * time.Millisecond
	}
	if cfg.MaxRetryAfter <= 0 {
		cfg.MaxRetryAfter = 30 * time.Second
	}
	if cfg.ChatInterval == 0 {
		cfg.ChatInterval = time.Second
	}
	if cfg.PollTimeout <= 0 {
		cfg.PollTimeout = 25 * time.Second
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &Adapter{cfg: cfg, router: router, log: log.With("adapter", "telegram"), pool: ackpool.New(8)}
	a.api = &client{
		base:  strings.TrimRight(cfg.APIURL, "/") + "/bot" + cfg.Token + "/",
		http:  &http.Client{Timeout: cfg.PollTimeout + 20*time.Second, Transport: cfg.Transport},
		retry: retryPolicy{Attempts: cfg.RetryAttempts, BaseBackoff: cfg.RetryBackoff, MaxWait: cfg.MaxRetryAfter},
		pace:  newPacer(cfg.ChatInterval),
	}
	return a, nil
}

// Platform implements lifecycle.Channel.
func (a *Adapter) Platform() string { return Platform }

func (a *Adapter) now() time.Time { return a.router.Clock().Now() }

// Webhook reports whether updates come to POST /telegram/webhook (a secret
// is configured) rather than by long polling.
func (a *Adapter) Webhook() bool { return a.cfg.WebhookSecret != "" }

// Register adds POST /telegram/webhook to mux when a webhook secret is set.
func (a *Adapter) Register(mux *http.ServeMux) {
	if a.Webhook() {
		mux.Handle("POST /telegram/webhook", a.WebhookHandler())
	}
}

// Close waits for tracked background work, or for ctx.
func (a *Adapter) Close(ctx context.Context) error { return a.pool.Close(ctx) }

// SetWebhook points Telegram at hookURL (the bridge's /telegram/webhook)
// with the configured secret, for message and callback_query updates only.
func (a *Adapter) SetWebhook(ctx context.Context, hookURL string) error {
	return setWebhookWith(ctx, a.api, a.cfg.WebhookSecret, hookURL)
}

// SetWebhook is `askbridge telegram set-webhook`: it calls setWebhook with
// cfg's token and secret, without a running bridge.
func SetWebhook(ctx context.Context, cfg Config, hookURL string) error {
	if strings.TrimSpace(cfg.Token) == "" {
		return errors.New("telegram: the bot token is required (telegram.token_file or TELEGRAM_BOT_TOKEN; BotFather gives it)")
	}
	if cfg.WebhookSecret != "" && !validSecret(cfg.WebhookSecret) {
		return errors.New("telegram: the webhook secret must be 1–256 characters of A-Z, a-z, 0-9, _ and -")
	}
	if cfg.APIURL == "" {
		cfg.APIURL = DefaultAPIURL
	}
	c := &client{base: strings.TrimRight(cfg.APIURL, "/") + "/bot" + strings.TrimSpace(cfg.Token) + "/",
		http: &http.Client{Timeout: 30 * time.Second, Transport: httpx.Transport()}, retry: retryPolicy{Attempts: 3, BaseBackoff: time.Second, MaxWait: 30 * time.Second}}
	return setWebhookWith(ctx, c, cfg.WebhookSecret, hookURL)
}

// WebhookMaxConnections is setWebhook's max_connections: how many updates
// Telegram delivers to the webhook at once, each on a connection of its
// own; it queues the rest (https://core.telegram.org/bots/api#setwebhook:
// 1–100, 40 when left out). The bridge answers an update only once the
// answer it carries is recorded, and every update comes from Telegram's
// few addresses, so this stays below the bridge's bound on requests in
// flight from one address on the platform callbacks (64): a burst of
// presses waits its turn at Telegram rather than being refused with 429.
const WebhookMaxConnections = 40

func setWebhookWith(ctx context.Context, c *client, secret, hookURL string) error {
	if secret == "" {
		return errors.New("telegram: set telegram.webhook_secret_file (or TELEGRAM_WEBHOOK_SECRET) first: the webhook is refused without it")
	}
	u, err := url.Parse(hookURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return errors.New("telegram: the webhook URL must be https://<your bridge>/telegram/webhook (Telegram calls only https); set public_url or pass --url")
	}
	return c.call(ctx, "setWebhook", setWebhook{URL: hookURL, SecretToken: secret, AllowedUpdates: allowedUpdates, MaxConnections: WebhookMaxConnections}, nil)
}

// chatParam is a target's chat as the Bot API takes it: a numeric id or
// @channelusername. Anything else is refused before any call.
func chatParam(chat string) (string, error) {
	chat = strings.TrimSpace(chat)
	if strings.HasPrefix(chat, "@") && len(chat) > 1 && len(chat) <= 33 {
		return chat, nil
	}
	if _, err := strconv.ParseInt(chat, 10, 64); err == nil {
		return chat, nil
	}
	return "", lifecycle.Permanent(fmt.Errorf("telegram: chat %q must be a chat id such as -1001234567890 or a @channelusername", chat))
}

// threadParam is a target's forum topic (message_thread_id), 0 for none.
func threadParam(thread string) (int64, error) {
	if thread == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(thread, 10, 64)
	if err != nil || n <= 0 {
		return 0, lifecycle.Permanent(fmt.Errorf("telegram: thread %q must be a forum topic id (message_thread_id), such as 42", thread))
	}
	return n, nil
}

func (a *Adapter) opts(q *domain.Question) renderOpts {
	o := renderOpts{PublicURL: a.cfg.PublicURL, Edit: true}
	if r, ok := a.router.Route(q.Route); ok && r.NoEdit {
		o.Edit = false
	}
	return o
}

func (a *Adapter) render(q *domain.Question) message { return render(q, a.now(), a.opts(q)) }

// messageLink is a link to a message: t.me/<username>/<id> for public
// chats, t.me/c/<id>/<message> for supergroups and channels.
func messageLink(chat Chat, id int64) string {
	if chat.Username != "" {
		return fmt.Sprintf("https://t.me/%s/%d", chat.Username, id)
	}
	if s := strconv.FormatInt(chat.ID, 10); strings.HasPrefix(s, "-100") {
		return fmt.Sprintf("https://t.me/c/%s/%d", s[4:], id)
	}
	return ""
}

// Post implements lifecycle.Channel: it sends the question to the target's
// chat (in its forum topic, if any).
func (a *Adapter) Post(ctx context.Context, q *domain.Question, t domain.Target) (domain.Target, error) {
	return a.postMessage(ctx, t, a.render(q))
}

// postMessage sends m to the target's chat (in its forum topic, if any).
func (a *Adapter) postMessage(ctx context.Context, t domain.Target, m message) (domain.Target, error) {
	chat, err := chatParam(t.Channel)
	if err != nil {
		return t, err
	}
	thread, err := threadParam(t.ThreadTS)
	if err != nil {
		return t, err
	}
	var sent Message
	if err := a.send(ctx, sendMessage{ChatID: chat, MessageThreadID: thread, Text: m.Text, ParseMode: "HTML",
		LinkPreviewOptions: &LinkPreviewOptions{IsDisabled: true}, ReplyMarkup: m.Keyboard}, &sent); err != nil {
		return t, err
	}
	t.MessageTS = strconv.FormatInt(sent.MessageID, 10)
	t.Refs = map[string]string{refChatID: strconv.FormatInt(sent.Chat.ID, 10)}
	t.URL = messageLink(sent.Chat, sent.MessageID)
	t.Error = ""
	return t, nil
}

// send sends a message, paced per chat.
func (a *Adapter) send(ctx context.Context, m sendMessage, out *Message) error {
	if err := a.api.pace.wait(ctx, m.ChatID); err != nil {
		return fmt.Errorf("telegram: waiting for the chat's rate limit: %w", err)
	}
	if out == nil {
		return a.api.call(ctx, "sendMessage", m, nil)
	}
	return a.api.call(ctx, "sendMessage", m, out)
}

// copyChat is the chat a posted copy is in: the numeric id Telegram
// answered, else the target's chat.
func copyChat(t domain.Target) string {
	if c := t.Refs[refChatID]; c != "" {
		return c
	}
	return t.Channel
}

// edit shows m on a posted copy. "message is not modified" is success;
// a deleted copy is a permanent error.
func (a *Adapter) edit(ctx context.Context, t domain.Target, m message) error {
	id, err := strconv.ParseInt(t.MessageTS, 10, 64)
	if err != nil {
		return lifecycle.Permanent(fmt.Errorf("telegram: copy %q has no message id", t.MessageTS))
	}
	err = a.api.call(ctx, "editMessageText", editMessageText{ChatID: copyChat(t), MessageID: id, Text: m.Text, ParseMode: "HTML",
		LinkPreviewOptions: &LinkPreviewOptions{IsDisabled: true}, ReplyMarkup: m.Keyboard}, nil)
	if notModified(err) {
		return nil
	}
	return err
}

// Update implements lifecycle.Channel: a pending copy shows the latest tally
// and responders, controls live.
func (a *Adapter) Update(ctx context.Context, q *domain.Question, t domain.Target) error {
	if t.MessageTS == "" || q.Status != domain.StatusPending {
		return nil
	}
	return a.edit(ctx, t, a.render(q))
}

// Finish implements lifecycle.Channel: the copy shows the outcome and loses
// its keyboard.
func (a *Adapter) Finish(ctx context.Context, q *domain.Question, t domain.Target) error {
	if t.MessageTS == "" {
		return nil
	}
	return a.edit(ctx, t, a.render(q))
}

// Remind implements lifecycle.Channel: a reply to the copy (in its topic)
// that mentions the responders who are Telegram users by tg://user links
// and says how long is left.
func (a *Adapter) Remind(ctx context.Context, q *domain.Question, t domain.Target) error {
	if t.MessageTS == "" {
		return nil
	}
	id, err := strconv.ParseInt(t.MessageTS, 10, 64)
	if err != nil {
		return nil
	}
	thread, _ := threadParam(t.ThreadTS)
	sentence := "Still waiting for an answer — " + domain.ExpiresPhrase(q, a.now()) + "."
	if q.ApprovalsRequired > 1 {
		sentence += fmt.Sprintf(" Needs %d approvals", q.ApprovalsRequired)
		if tally := domain.TallyLine(q); tally != "" {
			sentence += "; " + tally
		}
		sentence += "."
	}
	var ms []string
	for _, u := range q.Responders.Users {
		if uid, ok := strings.CutPrefix(u, Platform+":"); ok {
			if _, err := strconv.ParseInt(uid, 10, 64); err == nil {
				ms = append(ms, `<a href="tg://user?id=`+uid+`">`+uid+`</a>`)
			}
		}
	}
	visible := func(s string) int { return units(stripTags(s)) }
	text, _ := mentions.Fit(ms, esc(sentence), maxText, visible)
	return a.send(ctx, sendMessage{ChatID: copyChat(t), MessageThreadID: thread, Text: text, ParseMode: "HTML",
		ReplyParameters: &ReplyParameters{MessageID: id, AllowSendingWithoutReply: true}}, nil)
}

// stripTags is the visible text of the adapter's own HTML (for lengths).
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}
