// Package fakeslack is an in-process Slack Web API for tests. It enforces the
// Block Kit limits (https://docs.slack.dev/reference/block-kit), answers "ok": false with Slack's error
// codes, returns 429 with Retry-After or 5xx on demand, records every call,
// and plays Socket Mode over a local WebSocket.
package fakeslack

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Call is one recorded Web API call.
type Call struct {
	Method string
	Params map[string]string // form fields, or the top-level JSON fields (objects as JSON)
	Error  string            // the error code answered, "" when ok
	Status int               // HTTP status answered
	At     time.Time
}

// Message is a message the fake holds.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string
	User     string // the bot's user id for messages the app posted
	Text     string
	Blocks   json.RawMessage
	Edits    int
}

// Ephemeral is a private message to one user.
type Ephemeral struct {
	Channel, User, ThreadTS, Text string
}

// View is an opened modal.
type View struct {
	ID        string
	TriggerID string
	View      json.RawMessage
	Updates   int // views.update calls on it
}

// Server is the fake Slack.
type Server struct {
	*httptest.Server
	BotToken string
	AppToken string
	BotUser  string

	mu         sync.Mutex
	calls      []Call
	channels   map[string]bool
	messages   []*Message
	ephemerals []Ephemeral
	views      []View
	reactions  map[string][]string // channel/ts → names
	groups     map[string][]string
	emails     map[string]string    // email (lower case) → user id
	triggers   map[string]time.Time // issued at; deleted once used
	limited    map[string][]int     // method → Retry-After seconds of the next 429s
	failing    map[string][]int     // method → statuses of the next failures
	seq        int64
	base       int64

	sockets  chan *websocket.Conn
	upgrader websocket.Upgrader
}

// New starts a fake Slack that knows the given channels.
func New(channels ...string) *Server {
	s := &Server{BotToken: "xoxb-fake-bot-token", AppToken: "xapp-fake-app-token", BotUser: "UBOT",
		channels: map[string]bool{}, reactions: map[string][]string{}, groups: map[string][]string{}, emails: map[string]string{},
		triggers: map[string]time.Time{}, limited: map[string][]int{}, failing: map[string][]int{},
		base: time.Now().Unix(), sockets: make(chan *websocket.Conn, 4)}
	for _, c := range channels {
		s.channels[c] = true
	}
	// slack-go dials with Origin https://api.slack.com, as Slack expects.
	s.upgrader.CheckOrigin = func(*http.Request) bool { return true }
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.api)
	mux.HandleFunc("/socket", s.socket)
	mux.HandleFunc("/preview", s.servePreview)
	s.Server = httptest.NewServer(mux)
	return s
}

// APIURL is the value for SLACK_API_URL.
func (s *Server) APIURL() string { return s.URL + "/api/" }

// AddChannel makes a channel known.
func (s *Server) AddChannel(id string) { s.mu.Lock(); s.channels[id] = true; s.mu.Unlock() }

// SetGroup sets a user group's members.
func (s *Server) SetGroup(id string, members ...string) {
	s.mu.Lock()
	s.groups[id] = members
	s.mu.Unlock()
}

// SetEmail gives user an email address (users.lookupByEmail finds it).
func (s *Server) SetEmail(user, email string) {
	s.mu.Lock()
	s.emails[strings.ToLower(email)] = user
	s.mu.Unlock()
}

// RateLimit makes the next len(retryAfter) calls of method answer 429 with
// the given Retry-After seconds.
func (s *Server) RateLimit(method string, retryAfter ...int) {
	s.mu.Lock()
	s.limited[method] = append(s.limited[method], retryAfter...)
	s.mu.Unlock()
}

// Fail makes the next calls of method answer with the given HTTP statuses
// (e.g. 500, 503), one per call.
func (s *Server) Fail(method string, statuses ...int) {
	s.mu.Lock()
	s.failing[method] = append(s.failing[method], statuses...)
	s.mu.Unlock()
}

// Trigger issues a trigger_id, valid for 3 s and once, as a click would.
func (s *Server) Trigger() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	id := fmt.Sprintf("trig.%d", s.seq)
	s.triggers[id] = time.Now()
	return id
}

// Seed adds a message as if a person had posted it, and returns its ts.
func (s *Server) Seed(channel, threadTS, user, text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &Message{Channel: channel, TS: s.nextTS(), ThreadTS: threadTS, User: user, Text: text}
	s.messages = append(s.messages, m)
	return m.TS
}

// Calls returns the recorded calls of method ("" = all).
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Messages returns copies of the channel's messages ("" = all), oldest first.
func (s *Server) Messages(channel string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.messages {
		if channel == "" || m.Channel == channel {
			out = append(out, *m)
		}
	}
	return out
}

// Message returns one message.
func (s *Server) Message(channel, ts string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.find(channel, ts); m != nil {
		return *m, true
	}
	return Message{}, false
}

// Ephemerals returns the private messages sent to user ("" = all).
func (s *Server) Ephemerals(user string) []Ephemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Ephemeral
	for _, e := range s.ephemerals {
		if user == "" || e.User == user {
			out = append(out, e)
		}
	}
	return out
}

// Views returns the modals opened so far.
func (s *Server) Views() []View {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.views)
}

// Reactions returns the reactions the app added to a message.
func (s *Server) Reactions(channel, ts string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reactions[channel+"/"+ts])
}

func (s *Server) nextTS() string {
	s.seq++
	return fmt.Sprintf("%d.%06d", s.base, s.seq)
}

func (s *Server) find(channel, ts string) *Message {
	for _, m := range s.messages {
		if m.Channel == channel && m.TS == ts {
			return m
		}
	}
	return nil
}

type resp = map[string]any

// api serves https://slack.com/api/<method>.
func (s *Server) api(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	params, raw := readParams(r)
	call := Call{Method: method, Params: params, At: time.Now(), Status: http.StatusOK}
	s.mu.Lock()
	defer func() {
		s.calls = append(s.calls, call)
		s.mu.Unlock()
	}()
	if q := s.limited[method]; len(q) > 0 {
		s.limited[method] = q[1:]
		call.Status, call.Error = http.StatusTooManyRequests, "ratelimited"
		w.Header().Set("Retry-After", fmt.Sprint(q[0]))
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"ok":false,"error":"ratelimited"}`)
		return
	}
	if q := s.failing[method]; len(q) > 0 {
		s.failing[method] = q[1:]
		call.Status, call.Error = q[0], "http_"+fmt.Sprint(q[0])
		http.Error(w, "<html>upstream error</html>", q[0])
		return
	}
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if token == "" {
		token = params["token"]
	}
	want := s.BotToken
	if method == "apps.connections.open" {
		want = s.AppToken
	}
	var out resp
	if token != want {
		out = resp{"ok": false, "error": "invalid_auth"}
	} else {
		out = s.handle(method, params, raw)
	}
	if e, ok := out["error"].(string); ok {
		call.Error = e
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func readParams(r *http.Request) (map[string]string, obj) {
	body, _ := io.ReadAll(r.Body)
	params := map[string]string{}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var o obj
		_ = json.Unmarshal(body, &o)
		for k, v := range o {
			if s, ok := v.(string); ok {
				params[k] = s
			} else {
				b, _ := json.Marshal(v)
				params[k] = string(b)
			}
		}
		return params, o
	}
	vals, _ := url.ParseQuery(string(body))
	for k := range r.URL.Query() {
		vals.Set(k, r.URL.Query().Get(k))
	}
	for k := range vals {
		params[k] = vals.Get(k)
	}
	return params, nil
}

// checkView refuses a modal view as Slack does: a malformed one, or one
// whose blocks hold more text than Slack takes. nil: it is fine.
func checkView(view any) resp {
	var c checker
	c.view(view)
	if len(c.problems) > 0 {
		return fail("invalid_arguments", c.problems...)
	}
	if vo, ok := view.(obj); ok {
		if total := blocksText(vo["blocks"]); total > maxBlocksText {
			return fail("msg_blocks_too_long", fmt.Sprintf("[ERROR] the view's blocks hold %d characters of text, more than %d", total, maxBlocksText))
		}
	}
	return nil
}

func fail(code string, problems ...string) resp {
	out := resp{"ok": false, "error": code}
	if len(problems) > 0 {
		out["response_metadata"] = resp{"messages": problems}
	}
	return out
}

// checkMessage validates text and blocks of chat.postMessage/chat.update.
func checkMessage(p map[string]string) resp {
	text, blocks := p["text"], p["blocks"]
	if n(text) > maxMessageText {
		return fail("msg_too_long")
	}
	if blocks == "" {
		if text == "" {
			return fail("no_text")
		}
		return nil
	}
	var v any
	if err := json.Unmarshal([]byte(blocks), &v); err != nil {
		return fail("invalid_blocks_format")
	}
	var c checker
	c.blocks("/blocks", v, "message")
	if len(c.problems) > 0 {
		return fail("invalid_blocks", c.problems...)
	}
	if total := blocksText(v); total > maxBlocksText {
		return fail("msg_blocks_too_long", fmt.Sprintf("[ERROR] the blocks hold %d characters of text, more than %d", total, maxBlocksText))
	}
	return nil
}

func (s *Server) handle(method string, p map[string]string, raw obj) resp {
	switch method {
	case "auth.test":
		return resp{"ok": true, "user_id": s.BotUser, "team": "fake"}
	case "chat.postMessage":
		if !s.channels[p["channel"]] {
			return fail("channel_not_found")
		}
		if bad := checkMessage(p); bad != nil {
			return bad
		}
		if th := p["thread_ts"]; th != "" {
			if parent := s.find(p["channel"], th); parent == nil || parent.ThreadTS != "" {
				return fail("thread_not_found")
			}
		}
		m := &Message{Channel: p["channel"], TS: s.nextTS(), ThreadTS: p["thread_ts"], User: s.BotUser,
			Text: p["text"], Blocks: json.RawMessage(p["blocks"])}
		s.messages = append(s.messages, m)
		return resp{"ok": true, "channel": m.Channel, "ts": m.TS, "message": resp{"ts": m.TS, "text": m.Text}}
	case "chat.update":
		if !s.channels[p["channel"]] {
			return fail("channel_not_found")
		}
		m := s.find(p["channel"], p["ts"])
		if m == nil {
			return fail("message_not_found")
		}
		if m.User != s.BotUser {
			return fail("cant_update_message")
		}
		if bad := checkMessage(p); bad != nil {
			return bad
		}
		m.Text, m.Edits = p["text"], m.Edits+1
		if p["blocks"] != "" {
			m.Blocks = json.RawMessage(p["blocks"])
		}
		return resp{"ok": true, "channel": m.Channel, "ts": m.TS, "text": m.Text}
	case "chat.postEphemeral":
		if !s.channels[p["channel"]] {
			return fail("channel_not_found")
		}
		if p["user"] == "" {
			return fail("user_not_found")
		}
		if bad := checkMessage(p); bad != nil {
			return bad
		}
		s.ephemerals = append(s.ephemerals, Ephemeral{Channel: p["channel"], User: p["user"], ThreadTS: p["thread_ts"], Text: p["text"]})
		return resp{"ok": true, "message_ts": s.nextTS()}
	case "views.open":
		tid := p["trigger_id"]
		at, ok := s.triggers[tid]
		switch {
		case tid == "":
			return fail("invalid_arguments")
		case !ok:
			return fail("invalid_trigger_id")
		case at.IsZero():
			return fail("exchanged_trigger_id")
		case time.Since(at) > 3*time.Second:
			return fail("expired_trigger_id")
		}
		if bad := checkView(raw["view"]); bad != nil {
			return bad
		}
		s.triggers[tid] = time.Time{}
		v := View{ID: fmt.Sprintf("V%d", s.seq+1), TriggerID: tid, View: json.RawMessage(p["view"])}
		s.seq++
		s.views = append(s.views, v)
		return resp{"ok": true, "view": resp{"id": v.ID}}
	case "views.update":
		// A modal's own buttons update it in place (no trigger needed).
		if bad := checkView(raw["view"]); bad != nil {
			return bad
		}
		for i := range s.views {
			if s.views[i].ID == p["view_id"] && p["view_id"] != "" {
				s.views[i].View = json.RawMessage(p["view"])
				s.views[i].Updates++
				return resp{"ok": true, "view": resp{"id": s.views[i].ID}}
			}
		}
		return fail("not_found")
	case "users.lookupByEmail":
		if p["email"] == "" {
			return fail("invalid_arguments")
		}
		id, ok := s.emails[strings.ToLower(p["email"])]
		if !ok {
			return fail("users_not_found")
		}
		return resp{"ok": true, "user": resp{"id": id, "name": strings.ToLower(id), "profile": resp{"email": p["email"]}}}
	case "usergroups.users.list":
		members, ok := s.groups[p["usergroup"]]
		if !ok {
			return fail("no_such_subteam")
		}
		return resp{"ok": true, "users": members}
	case "conversations.replies":
		if !s.channels[p["channel"]] {
			return fail("channel_not_found")
		}
		parent := s.find(p["channel"], p["ts"])
		if parent == nil {
			return fail("thread_not_found")
		}
		msgs := []any{}
		for _, m := range s.messages {
			if m.Channel == parent.Channel && (m == parent || m.ThreadTS == parent.TS) {
				mm := resp{"type": "message", "ts": m.TS, "user": m.User, "text": m.Text}
				if m.ThreadTS != "" {
					mm["thread_ts"] = m.ThreadTS
				}
				if len(m.Blocks) > 0 {
					mm["blocks"] = m.Blocks
				}
				msgs = append(msgs, mm)
			}
		}
		return resp{"ok": true, "messages": msgs, "has_more": false}
	case "reactions.add":
		key := p["channel"] + "/" + p["timestamp"]
		if s.find(p["channel"], p["timestamp"]) == nil {
			return fail("message_not_found")
		}
		if slices.Contains(s.reactions[key], p["name"]) {
			return fail("already_reacted")
		}
		s.reactions[key] = append(s.reactions[key], p["name"])
		return resp{"ok": true}
	case "apps.connections.open":
		return resp{"ok": true, "url": "ws" + strings.TrimPrefix(s.URL, "http") + "/socket"}
	}
	return fail("unknown_method")
}

// Texts returns every text of the message's blocks, one per line, as a
// person would read them (no JSON escaping).
func (m Message) Texts() string {
	var v any
	_ = json.Unmarshal(m.Blocks, &v)
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if t, ok := x["text"].(string); ok {
				out = append(out, t)
			}
			for k, c := range x {
				if k != "text" || !isString(c) {
					walk(c)
				}
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(v)
	return strings.Join(out, "\n")
}

func isString(v any) bool { _, ok := v.(string); return ok }
