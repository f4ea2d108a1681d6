package faketelegram

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

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
		conns := 0
		if v, ok := p["max_connections"]; ok {
			n, _ := num(v)
			if n < 1 || n > 100 {
				return nil, bad("bad webhook: max_connections must be between 1 and 100")
			}
			conns = int(n)
		}
		f.webhook.URL, f.webhook.Secret, f.webhook.MaxConns = u, sec, conns
		return true, nil
	case "deleteWebhook":
		f.webhook.URL, f.webhook.Secret, f.webhook.MaxConns = "", "", 0
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
