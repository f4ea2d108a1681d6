// Package faketelegram is a Bot API server for tests that behaves like
// Telegram's: every request is checked against the Bot API description
// (spec.go), and the limits and errors a bot meets are Telegram's own —
// text of 1–4,096 characters after entity parsing, callback_data of 1–64
// bytes, at most 100 buttons, "message is not modified", "message to edit
// not found", "chat not found", forum topics, a bot that may not start a
// conversation, 429 with parameters.retry_after, answerCallbackQuery once
// per query within its time.
package faketelegram

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Group is the forum supergroup every fake knows; Topic one of its topics.
const (
	Group       int64 = -1001000000001
	GroupName         = "ops"
	Topic       int64 = 42
	MissingChat int64 = -1009999999999
)

// User is a Telegram user of the fake.
type User struct {
	ID       int64
	Name     string // username
	Started  bool   // has started the bot: it may write to them privately
	IsBot    bool
	LastName string
}

// Button is one inline keyboard button.
type Button struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data,omitempty"`
	URL          string `json:"url,omitempty"`
}

// Msg is a message the fake holds.
type Msg struct {
	Chat     int64
	ID       int64
	Thread   int64
	From     int64 // user id; the bot's own id for the bot
	HTML     string
	Text     string // visible text, after entity parsing
	Keyboard [][]Button
	// Posted is the keyboard the message was sent with: what a person
	// whose client has not refreshed still presses.
	Posted    [][]Button
	ForceRply bool
	ReplyTo   int64
	Reaction  string
	Edits     int
}

// Toast is an answered callback query.
type Toast struct {
	User  int64
	Text  string
	Alert bool
}

// Server is the fake Bot API.
type Server struct {
	t     testing.TB
	srv   *httptest.Server
	spec  *spec
	Token string
	BotID int64
	// PerChat, when set, refuses a second message to one chat within it
	// with 429 (Telegram's ~1 message/s per chat).
	PerChat time.Duration

	mu         sync.Mutex
	users      map[int64]User
	msgs       map[string]*Msg // "<chat>:<id>"
	order      []string
	nextMsg    int64
	queries    map[string]int64 // open callback query id → user
	answered   map[string]bool
	toasts     []Toast
	fail       map[string][]int // method → statuses to answer next
	limited    map[string]int   // method → retry_after of the next call
	calls      []Call
	violations []string
	lastSend   map[int64]time.Time
	rateHits   int
	webhook    struct{ URL, Secret string }
	nextUpd    int64
	queue      []json.RawMessage // updates for getUpdates
	admins     []int64           // administrators of Group, the first its creator
}

// Call is one request the fake answered.
type Call struct {
	Method string
	Params map[string]any
	Status int
}

// New starts a fake on loopback; it stops when the test ends, and fails
// the test for every request that broke the Bot API's description.
func New(t testing.TB) *Server {
	f := &Server{t: t, spec: loadSpec(), BotID: 7000001, users: map[int64]User{}, msgs: map[string]*Msg{},
		nextMsg: 100, queries: map[string]int64{}, answered: map[string]bool{}, fail: map[string][]int{},
		limited: map[string]int{}, lastSend: map[int64]time.Time{}, nextUpd: 1}
	f.Token = strconv.FormatInt(f.BotID, 10) + ":AAH-fake_token-Zx91qLw0pK3mN7bV5cR2tY8u"
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		f.srv.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, v := range f.violations {
			t.Errorf("Bot API request broke the specification: %s", v)
		}
	})
	return f
}

// URL is the api_url to give the adapter.
func (f *Server) URL() string { return f.srv.URL }

// AddUser makes u known (a member of Group).
func (f *Server) AddUser(u User) { f.mu.Lock(); f.users[u.ID] = u; f.mu.Unlock() }

// SetAdmins makes the users (AddUser them too) Group's administrators, the
// first its creator, as getChatAdministrators lists them.
func (f *Server) SetAdmins(ids ...int64) {
	f.mu.Lock()
	f.admins = append([]int64(nil), ids...)
	f.mu.Unlock()
}

// Fail makes the next n calls of method answer status.
func (f *Server) Fail(method string, status, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for range n {
		f.fail[method] = append(f.fail[method], status)
	}
}

// RateLimit makes the next call of method answer 429 with retry_after.
func (f *Server) RateLimit(method string, retryAfter int) {
	f.mu.Lock()
	f.limited[method] = retryAfter
	f.mu.Unlock()
}

// Delete deletes a message, as a person would.
func (f *Server) Delete(chat, id int64) {
	f.mu.Lock()
	delete(f.msgs, key(chat, id))
	f.mu.Unlock()
}

// Message returns a message (a copy), nil if there is none.
func (f *Server) Message(chat, id int64) *Msg {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.msgs[key(chat, id)]
	if !ok {
		return nil
	}
	c := *m
	return &c
}

// Messages returns the messages of a chat, oldest first.
func (f *Server) Messages(chat int64) []*Msg {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*Msg
	for _, k := range f.order {
		if m, ok := f.msgs[k]; ok && m.Chat == chat {
			c := *m
			out = append(out, &c)
		}
	}
	return out
}

// Toasts returns what a user was shown by answerCallbackQuery, oldest first.
func (f *Server) Toasts(user int64) []Toast {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Toast
	for _, t := range f.toasts {
		if t.User == user {
			out = append(out, t)
		}
	}
	return out
}

// Calls returns every request answered so far.
func (f *Server) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.calls...)
}

// RateHits is how many requests were refused by PerChat pacing.
func (f *Server) RateHits() int { f.mu.Lock(); defer f.mu.Unlock(); return f.rateHits }

// Unanswered lists callback queries the bot never answered.
func (f *Server) Unanswered() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for id := range f.queries {
		if !f.answered[id] {
			out = append(out, id)
		}
	}
	return out
}

// ForgetQueries drops the open callback queries (their time ran out).
func (f *Server) ForgetQueries() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id := range f.queries {
		if !f.answered[id] {
			delete(f.queries, id)
		}
	}
}

// Queue keeps an update (from Press or Reply) for getUpdates, as Telegram
// does for a bot without a webhook.
func (f *Server) Queue(update []byte) { f.mu.Lock(); f.queue = append(f.queue, update); f.mu.Unlock() }

// Webhook is what setWebhook set.
func (f *Server) Webhook() (url, secret string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.webhook.URL, f.webhook.Secret
}

func key(chat, id int64) string { return strconv.FormatInt(chat, 10) + ":" + strconv.FormatInt(id, 10) }

// ---- updates people cause

func (f *Server) userJSON(u User) map[string]any {
	m := map[string]any{"id": u.ID, "is_bot": u.IsBot, "first_name": u.Name}
	if u.Name != "" {
		m["username"] = u.Name
	}
	return m
}

func (f *Server) chatJSON(chat int64) map[string]any {
	if chat == Group {
		return map[string]any{"id": chat, "type": "supergroup", "title": GroupName, "is_forum": true}
	}
	if chat > 0 {
		return map[string]any{"id": chat, "type": "private"}
	}
	return map[string]any{"id": chat, "type": "supergroup", "title": "other"}
}

func (f *Server) msgJSON(m *Msg) map[string]any {
	out := map[string]any{"message_id": m.ID, "chat": f.chatJSON(m.Chat), "date": time.Now().Unix(), "text": m.Text}
	if m.Thread != 0 {
		out["message_thread_id"] = m.Thread
		out["is_topic_message"] = true
	}
	if m.From == f.BotID {
		out["from"] = map[string]any{"id": f.BotID, "is_bot": true, "first_name": "askbridge", "username": "askbridge_bot"}
	} else if u, ok := f.users[m.From]; ok {
		out["from"] = f.userJSON(u)
	}
	if len(m.Keyboard) > 0 {
		out["reply_markup"] = map[string]any{"inline_keyboard": m.Keyboard}
	}
	return out
}

// Press is the update Telegram sends when u presses the button with
// callback data data under message (chat, id); the message is sent as the
// person's client shows it. A message the fake no longer holds is sent as
// an inaccessible message (date 0), as Telegram does.
func (f *Server) Press(u User, chat, id int64, data string) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	qid := strconv.FormatInt(time.Now().UnixNano(), 36)
	f.queries[qid] = u.ID
	var msg map[string]any
	if m, ok := f.msgs[key(chat, id)]; ok {
		msg = f.msgJSON(m)
	} else {
		msg = map[string]any{"message_id": id, "chat": f.chatJSON(chat), "date": 0}
	}
	return f.update(map[string]any{"callback_query": map[string]any{"id": qid, "from": f.userJSON(u), "message": msg,
		"chat_instance": "-4711", "data": data}})
}

// Reply is the update of u replying to message (chat, to) with text; the
// fake keeps the reply as a message of the chat.
func (f *Server) Reply(u User, chat, to int64, text string) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextMsg++
	m := &Msg{Chat: chat, ID: f.nextMsg, From: u.ID, Text: text, HTML: text, ReplyTo: to}
	if parent, ok := f.msgs[key(chat, to)]; ok {
		m.Thread = parent.Thread
	}
	f.store(m)
	j := f.msgJSON(m)
	if parent, ok := f.msgs[key(chat, to)]; ok {
		j["reply_to_message"] = f.msgJSON(parent)
	}
	return f.update(map[string]any{"message": j})
}

func (f *Server) update(body map[string]any) []byte {
	body["update_id"] = f.nextUpd
	f.nextUpd++
	b, _ := json.Marshal(body)
	return b
}

func (f *Server) store(m *Msg) {
	k := key(m.Chat, m.ID)
	f.msgs[k] = m
	f.order = append(f.order, k)
}

// ---- the API

type apiErr struct {
	status     int
	desc       string
	retryAfter int
}

func (f *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/preview" {
		f.servePreview(w, r)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/bot")
	tok, method, ok := strings.Cut(path, "/")
	reply := func(status int, result any, e *apiErr) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if e != nil {
			out := map[string]any{"ok": false, "error_code": status, "description": e.desc}
			if e.retryAfter > 0 {
				out["parameters"] = map[string]any{"retry_after": e.retryAfter}
			}
			_ = json.NewEncoder(w).Encode(out)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
	}
	if !ok || tok != f.Token {
		reply(401, nil, &apiErr{401, "Unauthorized", 0})
		return
	}
	if method == "getUpdates" {
		// Long polling: wait a little for an update to come.
		for range 20 {
			f.mu.Lock()
			n := len(f.queue)
			f.mu.Unlock()
			if n > 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if r.Method != http.MethodPost || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		f.violate("%s: sent as %s %s; askbridge sends JSON POSTs", method, r.Method, r.Header.Get("Content-Type"))
	}
	body, _ := io.ReadAll(r.Body)
	var params map[string]any
	if err := json.Unmarshal(body, &params); err != nil {
		reply(400, nil, &apiErr{400, "Bad Request: invalid JSON", 0})
		return
	}
	f.mu.Lock()
	if problems := f.spec.checkMethod(method, params); len(problems) > 0 {
		f.violations = append(f.violations, problems...)
		f.mu.Unlock()
		if _, known := f.spec.Methods[method]; !known {
			reply(404, nil, &apiErr{404, "Not Found", 0})
			return
		}
		reply(400, nil, &apiErr{400, "Bad Request: " + problems[0], 0})
		return
	}
	if ra, ok := f.limited[method]; ok {
		delete(f.limited, method)
		f.calls = append(f.calls, Call{method, params, 429})
		f.mu.Unlock()
		reply(429, nil, &apiErr{429, fmt.Sprintf("Too Many Requests: retry after %d", ra), ra})
		return
	}
	if q := f.fail[method]; len(q) > 0 {
		status := q[0]
		f.fail[method] = q[1:]
		f.calls = append(f.calls, Call{method, params, status})
		f.mu.Unlock()
		reply(status, nil, &apiErr{status, http.StatusText(status), 0})
		return
	}
	result, e := f.handle(method, params)
	status := 200
	if e != nil {
		status = e.status
	}
	f.calls = append(f.calls, Call{method, params, status})
	f.mu.Unlock()
	reply(status, result, e)
}

func (f *Server) violate(format string, args ...any) {
	f.mu.Lock()
	f.violations = append(f.violations, fmt.Sprintf(format, args...))
	f.mu.Unlock()
}

func bad(desc string) *apiErr { return &apiErr{400, "Bad Request: " + desc, 0} }

func num(v any) (int64, bool) {
	switch x := v.(type) {
	case float64:
		return int64(x), x == float64(int64(x))
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil
	}
	return 0, false
}

// chatOf resolves chat_id: a known chat id or @username.
func (f *Server) chatOf(v any) (int64, *apiErr) {
	if s, ok := v.(string); ok && s == "@"+GroupName {
		return Group, nil
	}
	id, ok := num(v)
	if !ok {
		return 0, bad("chat not found")
	}
	if id == Group {
		return id, nil
	}
	if u, ok := f.users[id]; ok {
		if !u.Started {
			return 0, &apiErr{403, "Forbidden: bot can't initiate conversation with a user", 0}
		}
		return id, nil
	}
	return 0, bad("chat not found")
}

func (f *Server) handle(method string, p map[string]any) (any, *apiErr) {
	switch method {
	case "getMe":
		return map[string]any{"id": f.BotID, "is_bot": true, "first_name": "askbridge", "username": "askbridge_bot"}, nil
	case "setWebhook":
		u, _ := p["url"].(string)
		sec, _ := p["secret_token"].(string)
		if !strings.HasPrefix(u, "https://") {
			return nil, bad("bad webhook: An HTTPS URL must be provided for webhook")
		}
		if sec != "" && !validSecret(sec) {
			return nil, bad("bad webhook: secret token contains unallowed characters")
		}
		f.webhook.URL, f.webhook.Secret = u, sec
		return true, nil
	case "deleteWebhook":
		f.webhook.URL, f.webhook.Secret = "", ""
		return true, nil
	case "getUpdates":
		if f.webhook.URL != "" {
			return nil, &apiErr{409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first", 0}
		}
		offset, _ := num(p["offset"])
		out := []any{}
		var keep []json.RawMessage
		for _, u := range f.queue {
			var head struct {
				UpdateID int64 `json:"update_id"`
			}
			_ = json.Unmarshal(u, &head)
			if head.UpdateID >= offset {
				out = append(out, u)
				keep = append(keep, u)
			}
		}
		f.queue = keep // confirmed (below the offset) updates are gone
		return out, nil
	case "sendMessage":
		return f.sendMessage(p)
	case "editMessageText":
		return f.editMessageText(p)
	case "answerCallbackQuery":
		id, _ := p["callback_query_id"].(string)
		user, ok := f.queries[id]
		if !ok || f.answered[id] {
			return nil, bad("query is too old and response timeout expired or query ID is invalid")
		}
		text, _ := p["text"].(string)
		if units(text) > 200 {
			return nil, bad("MESSAGE_TOO_LONG")
		}
		alert, _ := p["show_alert"].(bool)
		f.answered[id] = true
		f.toasts = append(f.toasts, Toast{User: user, Text: text, Alert: alert})
		return true, nil
	case "getChatAdministrators":
		return f.getChatAdministrators(p)
	case "setMessageReaction":
		chat, e := f.chatOf(p["chat_id"])
		if e != nil {
			return nil, e
		}
		id, _ := num(p["message_id"])
		m, ok := f.msgs[key(chat, id)]
		if !ok {
			return nil, bad("message to react not found")
		}
		if rs, _ := p["reaction"].([]any); len(rs) > 0 {
			r, _ := rs[0].(map[string]any)
			m.Reaction, _ = r["emoji"].(string)
		}
		return true, nil
	}
	return nil, bad("method not implemented by the fake: " + method)
}

// getChatAdministrators lists Group's administrators as ChatMemberOwner
// and ChatMemberAdministrator objects, the bot itself among them (other
// bots only with return_bots), as Telegram does; a private chat has none.
func (f *Server) getChatAdministrators(p map[string]any) (any, *apiErr) {
	chat, e := f.chatOf(p["chat_id"])
	if e != nil {
		return nil, e
	}
	if chat != Group {
		return nil, bad("there are no administrators in the private chat")
	}
	bots, _ := p["return_bots"].(bool)
	out := []any{map[string]any{"status": "administrator", "user": map[string]any{"id": f.BotID, "is_bot": true, "first_name": "askbridge", "username": "askbridge_bot"},
		"can_be_edited": false, "is_anonymous": false, "can_manage_chat": true, "can_delete_messages": true}}
	for i, id := range f.admins {
		u := f.users[id]
		if u.IsBot && !bots {
			continue
		}
		m := map[string]any{"status": "administrator", "user": f.userJSON(u), "can_be_edited": true, "is_anonymous": false, "can_manage_chat": true}
		if i == 0 {
			m = map[string]any{"status": "creator", "user": f.userJSON(u), "is_anonymous": false}
		}
		out = append(out, m)
	}
	return out, nil
}

func validSecret(s string) bool {
	if len(s) < 1 || len(s) > 256 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// text reads text and parse_mode as Telegram does: the visible text, within
// 1–4,096 characters.
func text(p map[string]any) (html, visible string, e *apiErr) {
	html, _ = p["text"].(string)
	visible = html
	switch mode, _ := p["parse_mode"].(string); mode {
	case "HTML":
		v, err := parseHTML(html)
		if err != nil {
			return "", "", bad(err.Error())
		}
		visible = v
	case "":
	default:
		return "", "", bad("unsupported parse_mode " + mode + " (askbridge uses HTML)")
	}
	if strings.TrimSpace(visible) == "" {
		return "", "", bad("message text is empty")
	}
	if units(visible) > 4096 {
		return "", "", bad("message is too long")
	}
	return html, visible, nil
}

// keyboard reads reply_markup: an inline keyboard (checked against
// Telegram's limits), or a ForceReply.
func keyboard(v any) (kb [][]Button, force bool, e *apiErr) {
	if v == nil {
		return nil, false, nil
	}
	obj, _ := v.(map[string]any)
	if fr, ok := obj["force_reply"].(bool); ok {
		if !fr {
			return nil, false, bad("force_reply must be true")
		}
		if ph, _ := obj["input_field_placeholder"].(string); units(ph) > 64 {
			return nil, false, bad("input field placeholder is too long")
		}
		return nil, true, nil
	}
	b, _ := json.Marshal(obj["inline_keyboard"])
	if err := json.Unmarshal(b, &kb); err != nil {
		return nil, false, bad("field \"inline_keyboard\" of the InlineKeyboardMarkup must be an Array")
	}
	n := 0
	for _, row := range kb {
		if len(row) > 8 {
			return nil, false, bad("too many buttons in a row")
		}
		for _, bt := range row {
			n++
			switch {
			case strings.TrimSpace(bt.Text) == "":
				return nil, false, bad("text buttons are unallowed in the inline keyboard")
			case (bt.CallbackData == "") == (bt.URL == ""):
				return nil, false, bad("can't parse inline keyboard button: exactly one of callback_data and url must be set")
			case bt.CallbackData != "" && len(bt.CallbackData) > 64:
				return nil, false, bad("BUTTON_DATA_INVALID")
			case bt.URL != "" && !(strings.HasPrefix(bt.URL, "https://") || strings.HasPrefix(bt.URL, "tg://")):
				return nil, false, bad("inline keyboard button URL '" + bt.URL + "' is invalid: Wrong HTTP URL")
			}
		}
	}
	if n > 100 {
		return nil, false, bad("reply markup is too long")
	}
	return kb, false, nil
}

func (f *Server) sendMessage(p map[string]any) (any, *apiErr) {
	chat, e := f.chatOf(p["chat_id"])
	if e != nil {
		return nil, e
	}
	if f.PerChat > 0 {
		if last, ok := f.lastSend[chat]; ok && time.Since(last) < f.PerChat {
			f.rateHits++
			return nil, &apiErr{429, "Too Many Requests: retry after 1", 1}
		}
		f.lastSend[chat] = time.Now()
	}
	html, visible, e := text(p)
	if e != nil {
		return nil, e
	}
	m := &Msg{Chat: chat, From: f.BotID, HTML: html, Text: visible}
	if th, ok := num(p["message_thread_id"]); ok && p["message_thread_id"] != nil {
		if chat != Group || th != Topic {
			return nil, bad("message thread not found")
		}
		m.Thread = th
	}
	if rp, ok := p["reply_parameters"].(map[string]any); ok {
		to, _ := num(rp["message_id"])
		parent, found := f.msgs[key(chat, to)]
		allow, _ := rp["allow_sending_without_reply"].(bool)
		if !found && !allow {
			return nil, bad("message to be replied not found")
		}
		if found {
			m.ReplyTo = to
			if m.Thread == 0 {
				m.Thread = parent.Thread
			}
		}
	}
	kb, force, e := keyboard(p["reply_markup"])
	if e != nil {
		return nil, e
	}
	m.Keyboard, m.Posted, m.ForceRply = kb, kb, force
	f.nextMsg++
	m.ID = f.nextMsg
	f.store(m)
	return f.msgJSON(m), nil
}

func (f *Server) editMessageText(p map[string]any) (any, *apiErr) {
	chat, e := f.chatOf(p["chat_id"])
	if e != nil {
		return nil, e
	}
	id, _ := num(p["message_id"])
	m, ok := f.msgs[key(chat, id)]
	if !ok {
		return nil, bad("message to edit not found")
	}
	if m.From != f.BotID {
		return nil, bad("message can't be edited")
	}
	html, visible, e := text(p)
	if e != nil {
		return nil, e
	}
	kb, force, e := keyboard(p["reply_markup"])
	if e != nil {
		return nil, e
	}
	if force {
		return nil, bad("inline keyboard expected")
	}
	before, _ := json.Marshal(m.Keyboard)
	after, _ := json.Marshal(kb)
	if html == m.HTML && string(before) == string(after) {
		return nil, bad("message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
	}
	m.HTML, m.Text, m.Keyboard = html, visible, kb
	m.Edits++
	return f.msgJSON(m), nil
}
