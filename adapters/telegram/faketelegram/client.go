package faketelegram

import (
	"encoding/json"
	"strconv"
	"time"
)

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
