// Package fakediscord is an httptest Discord for tests: it enforces the
// message, component and modal limits (400 Invalid Form Body), bot
// authorization, interaction token lifetimes and single acknowledgement,
// answers 429 with Retry-After or 5xx on demand, and plays the Discord
// client: it signs interactions (Ed25519) for components that exist on its
// messages and applies the responses.
package fakediscord

import (
	"bytes"
	"cmp"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// Server behaves like Discord's API for what the adapter uses: it
// enforces the message, component and modal limits (400 Invalid Form Body),
// bot authorization, interaction token lifetimes and single acknowledgement,
// and can answer 429 with Retry-After or 5xx on demand. It also plays the
// Discord client: it signs interactions for components that exist on its
// messages and applies the responses.
type Server struct {
	BotToken string // the bot token the fake accepts
	AppID    string // the application id
	// Target is the adapter's interactions endpoint (HTTP mode): where
	// Click, Choose and SubmitModal send interactions.
	Target string
	// Now is the fake's clock for signatures and token lifetimes.
	Now func() time.Time
	// RetryAfter is the wait, in seconds, of 429 answers.
	RetryAfter float64

	t      testing.TB
	srv    *httptest.Server
	pub    ed25519.PublicKey
	priv   ed25519.PrivateKey
	client *http.Client

	mu         sync.Mutex
	next       int64
	channels   map[string]Channel
	messages   map[string]*Message
	tokens     map[string]*Token
	ephemerals map[string][]string // user id → private messages received
	calls      map[string]int      // op → count
	faults     map[string][]int    // op → statuses to answer next
	lose       map[string]int      // op → responses to lose after doing the call
	nonces     map[string]*Message // channel + nonce → the message it created
	violations []string
}

// Channel is a guild channel (or a thread, with its Parent).
type Channel struct{ ID, Guild, Parent string }

// Message is a posted message as the fake keeps it; Edits counts its edits.
type Message struct {
	ID, ChannelID string
	Content       string
	Embeds        []Embed
	Components    []Component
	Edits         int
	Thread        string
	// ReplyTo is the message this one replies to (message_reference).
	ReplyTo string
	// Pings are who the message notified, as Discord works it out from the
	// content and allowed_mentions: "role:<id>", "user:<id>", "everyone".
	Pings []string
	// AllowedRoles and AllowedUsers are the message's allowed_mentions lists.
	AllowedRoles, AllowedUsers []string
}

// Token is an interaction token: the message and person it was issued for.
type Token struct {
	MessageID string
	User      string
	Issued    time.Time
	Acked     bool
}

// Embed is a message embed.
type Embed struct {
	Title       string `json:"title"`
	Description string `json:"description"`
	Fields      []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"fields"`
	Footer *struct {
		Text string `json:"text"`
	} `json:"footer"`
	Timestamp string `json:"timestamp"`
}

// Option is an option of a string select.
type Option struct {
	Label       string `json:"label"`
	Value       string `json:"value"`
	Description string `json:"description"`
	Default     bool   `json:"default"`
}

// Component is a message or modal component (rows hold Components).
type Component struct {
	Type        int         `json:"type"`
	CustomID    string      `json:"custom_id,omitempty"`
	Label       string      `json:"label,omitempty"`
	Style       int         `json:"style,omitempty"`
	Disabled    bool        `json:"disabled,omitempty"`
	Options     []Option    `json:"options,omitempty"`
	MinValues   *int        `json:"min_values,omitempty"`
	MaxValues   int         `json:"max_values,omitempty"`
	Placeholder string      `json:"placeholder,omitempty"`
	Value       string      `json:"value,omitempty"`
	MinLength   int         `json:"min_length,omitempty"`
	MaxLength   int         `json:"max_length,omitempty"`
	Components  []Component `json:"components,omitempty"`
}

// Payload is a message body, an interaction response's data, or a modal.
type Payload struct {
	Content         *string      `json:"content"`
	Embeds          *[]Embed     `json:"embeds"`
	Components      *[]Component `json:"components"`
	Flags           int          `json:"flags"`
	AllowedMentions *struct {
		Parse       []string `json:"parse"`
		Roles       []string `json:"roles"`
		Users       []string `json:"users"`
		RepliedUser bool     `json:"replied_user"`
	} `json:"allowed_mentions"`
	MessageReference *struct {
		MessageID       string `json:"message_id"`
		ChannelID       string `json:"channel_id"`
		FailIfNotExists *bool  `json:"fail_if_not_exists"`
	} `json:"message_reference"`
	// Nonce and EnforceNonce: a post with a nonce already used in the
	// channel in the last minutes returns that message instead.
	Nonce        json.RawMessage `json:"nonce"`
	EnforceNonce bool            `json:"enforce_nonce"`
	// modal
	CustomID string `json:"custom_id"`
	Title    string `json:"title"`
}

// Response is an interaction response.
type Response struct {
	Type int      `json:"type"`
	Data *Payload `json:"data"`
}

// New starts a fake Discord with guild 900 and channel 1000; it is closed,
// and every rule a request broke is reported, when the test ends.
func New(t testing.TB) *Server {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	f := &Server{t: t, BotToken: "fake-bot-token-SECRET", AppID: "424242", pub: pub, priv: priv,
		client: &http.Client{Timeout: 10 * time.Second}, Now: time.Now, next: 1100000000000000000,
		channels: map[string]Channel{}, messages: map[string]*Message{}, tokens: map[string]*Token{},
		ephemerals: map[string][]string{}, calls: map[string]int{}, faults: map[string][]int{}, lose: map[string]int{}, nonces: map[string]*Message{}, RetryAfter: 0.05}
	f.AddChannel("1000", "900")
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		f.srv.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, v := range f.violations {
			t.Errorf("fake Discord rejected a request: %s", v)
		}
	})
	return f
}

// APIURL is the fake's API base (DISCORD_API_URL).
func (f *Server) APIURL() string { return f.srv.URL + "/api/v10" }

// PublicKey is the application's hex public key (DISCORD_PUBLIC_KEY).
func (f *Server) PublicKey() string { return hex.EncodeToString(f.pub) }

// AddChannel adds a channel of guild.
func (f *Server) AddChannel(id, guild string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.channels[id] = Channel{ID: id, Guild: guild}
}

// fail makes the next calls of op answer with these statuses.
func (f *Server) Fail(op string, statuses ...int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults[op] = append(f.faults[op], statuses...)
}

// LoseResponses makes the next n calls of op ("post") take effect and then
// answer 502, as when Discord did the work but the answer was lost on the
// way back.
func (f *Server) LoseResponses(op string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lose[op] += n
}

// Count is how many calls of op ("post", "edit", "token-edit", "callback",
// "followup", "thread", "channel") the fake received.
func (f *Server) Count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

func (f *Server) id() string {
	f.next++
	return strconv.FormatInt(f.next, 10)
}

func (f *Server) violation(w http.ResponseWriter, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	f.violations = append(f.violations, msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{"code": 50035, "message": "Invalid Form Body: " + msg})
}

func apiErr(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"code": code, "message": msg})
}

func writeJSONT(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// fault answers a queued failure for op, if any.
func (f *Server) fault(w http.ResponseWriter, op string) bool {
	q := f.faults[op]
	if len(q) == 0 {
		return false
	}
	status := q[0]
	f.faults[op] = q[1:]
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset-After", strconv.FormatFloat(f.RetryAfter, 'f', 3, 64))
		w.Header().Set("X-RateLimit-Scope", "user")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"message":"You are being rate limited.","retry_after":%.3f,"global":false}`, f.RetryAfter)
		return true
	}
	apiErr(w, status, 0, http.StatusText(status))
	return true
}

func (f *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	path := strings.TrimPrefix(r.URL.Path, "/api/v10")
	parts := strings.Split(strings.Trim(path, "/"), "/")
	f.mu.Lock()
	defer f.mu.Unlock()
	if parts[0] == "channels" && r.Header.Get("Authorization") != "Bot "+f.BotToken {
		apiErr(w, http.StatusUnauthorized, 0, "401: Unauthorized")
		return
	}
	switch {
	case r.Method == "GET" && len(parts) == 2 && parts[0] == "channels":
		f.calls["channel"]++
		ch, ok := f.channels[parts[1]]
		if !ok {
			apiErr(w, 404, 10003, "Unknown Channel")
			return
		}
		writeJSONT(w, map[string]any{"id": ch.ID, "guild_id": ch.Guild, "type": 0})
	case r.Method == "POST" && len(parts) == 3 && parts[0] == "channels" && parts[2] == "messages":
		f.calls["post"]++
		if f.fault(w, "post:"+parts[1]) || f.fault(w, "post") {
			return
		}
		ch, ok := f.channels[parts[1]]
		if !ok {
			apiErr(w, 404, 10003, "Unknown Channel")
			return
		}
		var p Payload
		if err := json.Unmarshal(body, &p); err != nil {
			f.violation(w, "post: body is not JSON: %v", err)
			return
		}
		if !f.checkMessage(w, "post", &p) {
			return
		}
		m := &Message{ID: f.id(), ChannelID: ch.ID}
		if ref := p.MessageReference; ref != nil {
			target, ok := f.messages[ref.MessageID]
			switch {
			case ok && ref.ChannelID != "" && ref.ChannelID != target.ChannelID:
				apiErr(w, 400, 50035, "Invalid Form Body: message_reference: Unknown message")
				return
			case ok && target.ChannelID != ch.ID:
				apiErr(w, 400, 50035, "Invalid Form Body: message_reference: cannot reply to a message in another channel")
				return
			case ok:
				m.ReplyTo = target.ID
			case ref.FailIfNotExists == nil || *ref.FailIfNotExists:
				apiErr(w, 400, 50035, "Invalid Form Body: message_reference: Unknown message")
				return
			}
		}
		nonceKey := ""
		if len(p.Nonce) > 0 && string(p.Nonce) != "null" {
			var n string
			if json.Unmarshal(p.Nonce, &n) == nil && len(n) > 25 {
				f.violation(w, "post: nonce %q is longer than 25 characters", n)
				return
			}
			nonceKey = ch.ID + "\x1f" + string(p.Nonce)
		}
		if prev, ok := f.nonces[nonceKey]; ok && p.EnforceNonce && f.messages[prev.ID] == prev {
			f.calls["post-deduplicated"]++
			m = prev
		} else {
			applyPayload(m, &p)
			m.Pings = pings(m.Content, &p)
			f.messages[m.ID] = m
			if nonceKey != "" {
				f.nonces[nonceKey] = m
			}
		}
		if f.lose["post"] > 0 { // done, but the answer never reaches the caller
			f.lose["post"]--
			apiErr(w, http.StatusBadGateway, 0, "Bad Gateway")
			return
		}
		writeJSONT(w, map[string]any{"id": m.ID, "channel_id": m.ChannelID, "content": m.Content})
	case r.Method == "PATCH" && len(parts) == 4 && parts[0] == "channels" && parts[2] == "messages":
		f.calls["edit"]++
		if f.fault(w, "edit") {
			return
		}
		m, ok := f.messages[parts[3]]
		if !ok || m.ChannelID != parts[1] {
			apiErr(w, 404, 10008, "Unknown Message")
			return
		}
		var p Payload
		if err := json.Unmarshal(body, &p); err != nil || !f.checkMessage(w, "edit", &p) {
			if err != nil {
				f.violation(w, "edit: body is not JSON")
			}
			return
		}
		applyPayload(m, &p)
		m.Edits++
		writeJSONT(w, map[string]any{"id": m.ID, "channel_id": m.ChannelID})
	case r.Method == "POST" && len(parts) == 5 && parts[0] == "channels" && parts[4] == "threads":
		f.calls["thread"]++
		if f.fault(w, "thread") {
			return
		}
		m, ok := f.messages[parts[3]]
		if !ok || m.ChannelID != parts[1] {
			apiErr(w, 404, 10008, "Unknown Message")
			return
		}
		if m.Thread != "" {
			apiErr(w, 400, 160004, "A thread has already been created for this message")
			return
		}
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(body, &p)
		if n := utf8.RuneCountInString(p.Name); n < 1 || n > 100 {
			f.violation(w, "thread name must be 1-100 characters, got %d", n)
			return
		}
		th := Channel{ID: f.id(), Guild: f.channels[parts[1]].Guild, Parent: parts[1]}
		f.channels[th.ID] = th
		m.Thread = th.ID
		writeJSONT(w, map[string]any{"id": th.ID, "guild_id": th.Guild, "parent_id": th.Parent, "type": 11, "name": p.Name})
	case r.Method == "POST" && len(parts) == 4 && parts[0] == "interactions" && parts[3] == "callback":
		f.calls["callback"]++
		tok, ok := f.tokens[parts[2]]
		if !ok || f.Now().Sub(tok.Issued) > 3*time.Second {
			apiErr(w, 404, 10062, "Unknown interaction")
			return
		}
		if tok.Acked {
			apiErr(w, 400, 40060, "Interaction has already been acknowledged.")
			return
		}
		var resp Response
		_ = json.Unmarshal(body, &resp)
		if !f.applyResponse(w, tok, &resp) {
			return
		}
		tok.Acked = true
		w.WriteHeader(http.StatusNoContent)
	case r.Method == "PATCH" && len(parts) == 5 && parts[0] == "webhooks" && parts[4] == "@original":
		f.calls["token-edit"]++
		if f.fault(w, "token-edit") {
			return
		}
		tok, ok := f.tokens[parts[2]]
		if !ok || parts[1] != f.AppID || f.Now().Sub(tok.Issued) > 15*time.Minute {
			apiErr(w, 401, 50027, "Invalid Webhook Token")
			return
		}
		if !tok.Acked {
			apiErr(w, 404, 10015, "Unknown Webhook")
			return
		}
		var p Payload
		_ = json.Unmarshal(body, &p)
		if !f.checkMessage(w, "token-edit", &p) {
			return
		}
		m := f.messages[tok.MessageID]
		applyPayload(m, &p)
		m.Edits++
		writeJSONT(w, map[string]any{"id": m.ID, "channel_id": m.ChannelID})
	case r.Method == "POST" && len(parts) == 3 && parts[0] == "webhooks":
		f.calls["followup"]++
		tok, ok := f.tokens[parts[2]]
		if !ok || parts[1] != f.AppID || f.Now().Sub(tok.Issued) > 15*time.Minute {
			apiErr(w, 401, 50027, "Invalid Webhook Token")
			return
		}
		var p Payload
		_ = json.Unmarshal(body, &p)
		if !f.checkMessage(w, "followup", &p) {
			return
		}
		if p.Flags&64 == 0 {
			f.violation(w, "follow-up to one person must be ephemeral")
			return
		}
		f.ephemerals[tok.User] = append(f.ephemerals[tok.User], Deref(p.Content))
		writeJSONT(w, map[string]any{"id": f.id()})
	default:
		f.violations = append(f.violations, "unexpected request "+r.Method+" "+path)
		apiErr(w, 404, 0, "404: Not Found")
	}
}

var mentionRE = regexp.MustCompile(`<@(&?)(\d+)>|@(everyone|here)`)

// pings works out whom a new message notifies: mentions in its content
// that allowed_mentions lets through (parse lists types; roles and users
// list ids).
func pings(content string, p *Payload) []string {
	var out []string
	am := p.AllowedMentions
	for _, m := range mentionRE.FindAllStringSubmatch(content, -1) {
		switch {
		case m[3] != "":
			if am == nil || slices.Contains(am.Parse, "everyone") {
				out = append(out, "everyone")
			}
		case m[1] == "&":
			if am == nil || slices.Contains(am.Parse, "roles") || slices.Contains(am.Roles, m[2]) {
				out = append(out, "role:"+m[2])
			}
		default:
			if am == nil || slices.Contains(am.Parse, "users") || slices.Contains(am.Users, m[2]) {
				out = append(out, "user:"+m[2])
			}
		}
	}
	return out
}

// Deref returns *s, or "" for nil.
func Deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func applyPayload(m *Message, p *Payload) {
	if p.AllowedMentions != nil {
		m.AllowedRoles, m.AllowedUsers = p.AllowedMentions.Roles, p.AllowedMentions.Users
	}
	if p.Content != nil {
		m.Content = *p.Content
	}
	if p.Embeds != nil {
		m.Embeds = *p.Embeds
	}
	if p.Components != nil {
		m.Components = *p.Components
	}
}

// checkMessage enforces Discord's limits on a message body.
func (f *Server) checkMessage(w http.ResponseWriter, op string, p *Payload) bool {
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	if p.AllowedMentions == nil || len(p.AllowedMentions.Parse) != 0 {
		bad("allowed_mentions must be present with an empty parse list (no mass mentions)")
	} else if len(p.AllowedMentions.Roles) > 100 || len(p.AllowedMentions.Users) > 100 {
		bad("allowed_mentions lists at most 100 roles and 100 users")
	}
	if p.Content != nil && utf8.RuneCountInString(*p.Content) > 2000 {
		bad("content longer than 2000")
	}
	if p.AllowedMentions != nil && p.Content != nil {
		// Not a Discord rule, but a sign of a cut message: allowing a
		// mention the content does not show.
		for _, id := range p.AllowedMentions.Roles {
			if !strings.Contains(*p.Content, "<@&"+id+">") {
				bad("allowed_mentions.roles lists %s, which the content does not mention", id)
			}
		}
		for _, id := range p.AllowedMentions.Users {
			if !strings.Contains(*p.Content, "<@"+id+">") && !strings.Contains(*p.Content, "<@!"+id+">") {
				bad("allowed_mentions.users lists %s, which the content does not mention", id)
			}
		}
	}
	if p.Embeds != nil {
		if len(*p.Embeds) > 10 {
			bad("more than 10 embeds")
		}
		for _, e := range *p.Embeds {
			total := utf8.RuneCountInString(e.Title) + utf8.RuneCountInString(e.Description)
			if utf8.RuneCountInString(e.Title) > 256 {
				bad("embed title longer than 256")
			}
			if utf8.RuneCountInString(e.Description) > 4096 {
				bad("embed description longer than 4096")
			}
			if len(e.Fields) > 25 {
				bad("more than 25 embed fields")
			}
			for _, fl := range e.Fields {
				n, v := utf8.RuneCountInString(fl.Name), utf8.RuneCountInString(fl.Value)
				if n == 0 || n > 256 || v == 0 || v > 1024 {
					bad("embed field name %d / value %d characters (1-256 / 1-1024)", n, v)
				}
				total += n + v
			}
			if e.Footer != nil {
				if utf8.RuneCountInString(e.Footer.Text) > 2048 {
					bad("footer longer than 2048")
				}
				total += utf8.RuneCountInString(e.Footer.Text)
			}
			if total > 6000 {
				bad("embed total %d characters, more than 6000", total)
			}
		}
	}
	if p.Components != nil {
		probs = append(probs, checkComponents(*p.Components)...)
	}
	if len(probs) > 0 {
		f.violation(w, "%s: %s", op, strings.Join(probs, "; "))
		return false
	}
	return true
}

func checkComponents(rows []Component) []string {
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	if len(rows) > 5 {
		bad("%d action rows, at most 5", len(rows))
	}
	ids := map[string]bool{}
	for _, row := range rows {
		if row.Type != 1 {
			bad("top-level component of type %d, want action rows", row.Type)
			continue
		}
		buttons, selects := 0, 0
		for _, c := range row.Components {
			if n := len(c.CustomID); n < 1 || n > 100 {
				bad("custom_id of %d characters (1-100)", n)
			}
			if ids[c.CustomID] {
				bad("custom_id %q not unique", c.CustomID)
			}
			ids[c.CustomID] = true
			switch c.Type {
			case 2:
				buttons++
				if n := utf8.RuneCountInString(c.Label); n > 80 {
					bad("button label of %d characters, at most 80", n)
				}
				if c.Style < 1 || c.Style > 4 {
					bad("button style %d needs 1-4 with a custom_id", c.Style)
				}
			case 3:
				selects++
				if n := len(c.Options); n < 1 || n > 25 {
					bad("select with %d options (1-25)", n)
				}
				vals := map[string]bool{}
				for _, o := range c.Options {
					if utf8.RuneCountInString(o.Label) > 100 || utf8.RuneCountInString(o.Value) > 100 || utf8.RuneCountInString(o.Description) > 100 {
						bad("select option label/value/description longer than 100")
					}
					if o.Label == "" || o.Value == "" || vals[o.Value] {
						bad("select option needs a label and a unique value")
					}
					vals[o.Value] = true
				}
				minV := 1
				if c.MinValues != nil {
					minV = *c.MinValues
				}
				maxV := c.MaxValues
				if maxV == 0 {
					maxV = 1
				}
				if minV < 0 || minV > 25 || maxV < 1 || maxV > 25 || minV > maxV || maxV > len(c.Options) {
					bad("select min_values %d / max_values %d invalid for %d options", minV, maxV, len(c.Options))
				}
				if utf8.RuneCountInString(c.Placeholder) > 150 {
					bad("placeholder longer than 150")
				}
			default:
				bad("component type %d not allowed in a message row", c.Type)
			}
		}
		if (selects > 0 && (selects != 1 || buttons != 0)) || buttons > 5 || buttons+selects == 0 {
			bad("an action row holds 1-5 buttons or exactly one select (got %d buttons, %d selects)", buttons, selects)
		}
	}
	return probs
}

func checkModal(p *Payload) []string {
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	if n := utf8.RuneCountInString(p.Title); n < 1 || n > 45 {
		bad("modal title of %d characters (1-45)", n)
	}
	if n := len(p.CustomID); n < 1 || n > 100 {
		bad("modal custom_id of %d characters", n)
	}
	if p.Components == nil || len(*p.Components) < 1 || len(*p.Components) > 5 {
		bad("modal needs 1-5 components")
		return probs
	}
	for _, row := range *p.Components {
		if row.Type != 1 || len(row.Components) != 1 || row.Components[0].Type != 4 {
			bad("modal rows hold exactly one text input")
			continue
		}
		ti := row.Components[0]
		if n := utf8.RuneCountInString(ti.Label); n < 1 || n > 45 {
			bad("text input label of %d characters (1-45)", n)
		}
		if ti.Style != 1 && ti.Style != 2 {
			bad("text input style %d", ti.Style)
		}
		if ti.MaxLength > 4000 || ti.MinLength > ti.MaxLength || utf8.RuneCountInString(ti.Value) > 4000 {
			bad("text input lengths invalid")
		}
		if utf8.RuneCountInString(ti.Placeholder) > 100 {
			bad("text input placeholder longer than 100")
		}
	}
	return probs
}

// applyResponse applies an interaction response as Discord would.
func (f *Server) applyResponse(w http.ResponseWriter, tok *Token, resp *Response) bool {
	switch resp.Type {
	case 4:
		if resp.Data == nil || resp.Data.Flags&64 == 0 {
			f.violation(w, "reply to one person must be ephemeral")
			return false
		}
		if !f.checkMessage(w, "reply", resp.Data) {
			return false
		}
		f.ephemerals[tok.User] = append(f.ephemerals[tok.User], Deref(resp.Data.Content))
	case 6:
	case 7:
		if resp.Data == nil || !f.checkMessage(w, "update", resp.Data) {
			if resp.Data == nil {
				f.violation(w, "type 7 without data")
			}
			return false
		}
		m := f.messages[tok.MessageID]
		applyPayload(m, resp.Data)
		m.Edits++
	case 9:
		if resp.Data == nil {
			f.violation(w, "modal without data")
			return false
		}
		if probs := checkModal(resp.Data); len(probs) > 0 {
			f.violation(w, "modal: %s", strings.Join(probs, "; "))
			return false
		}
	default:
		f.violation(w, "interaction response type %d not allowed here", resp.Type)
		return false
	}
	return true
}

// User is a person clicking in the Discord client.
type User struct {
	ID, Name string
	Roles    []string
}

// interaction is what Discord sends for a click or a modal submit.
func (f *Server) Interaction(u User, m *Message, typ int, data map[string]any) (map[string]any, *Token, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	token := "itoken-" + f.id()
	tok := &Token{MessageID: m.ID, User: u.ID, Issued: f.Now()}
	f.tokens[token] = tok
	ch := f.channels[m.ChannelID]
	in := map[string]any{
		"id": f.id(), "application_id": f.AppID, "type": typ, "token": token, "version": 1,
		"guild_id": ch.Guild, "channel_id": m.ChannelID, "data": data,
		"message": map[string]any{"id": m.ID, "channel_id": m.ChannelID, "content": m.Content, "components": m.Components},
		"member":  map[string]any{"user": map[string]any{"id": u.ID, "username": u.Name}, "roles": u.Roles, "nick": nil},
	}
	return in, tok, token
}

// sign returns the signature headers for body at time ts.
func (f *Server) Sign(body []byte, ts time.Time) (sig, stamp string) {
	stamp = strconv.FormatInt(ts.Unix(), 10)
	return hex.EncodeToString(ed25519.Sign(f.priv, append([]byte(stamp), body...))), stamp
}

// send POSTs a signed interaction to the adapter and applies its response.
// It fails the test if the response breaks a rule or comes after 3 s.
func (f *Server) Send(in map[string]any, tok *Token) *Response {
	f.t.Helper()
	body, _ := json.Marshal(in)
	sig, stamp := f.Sign(body, f.Now())
	req, _ := http.NewRequest("POST", f.Target, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Signature-Ed25519", sig)
	req.Header.Set("X-Signature-Timestamp", stamp)
	start := time.Now()
	res, err := f.client.Do(req)
	if err != nil {
		f.t.Fatalf("interaction: %v", err)
	}
	defer res.Body.Close()
	if took := time.Since(start); took > 3*time.Second {
		f.t.Errorf("interaction answered after %s; Discord gives up after 3 s", took)
	}
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		f.t.Fatalf("interaction: HTTP %d: %s", res.StatusCode, b)
	}
	var resp Response
	if err := json.NewDecoder(res.Body).Decode(&resp); err != nil {
		f.t.Fatalf("interaction response is not JSON: %v", err)
	}
	f.Apply(tok, &resp)
	return &resp
}

// Apply applies the response to an interaction (its token) as Discord
// does, for interactions sent by other means than Send. A response that
// breaks a rule is reported when the test ends.
func (f *Server) Apply(tok *Token, resp *Response) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rec := httptest.NewRecorder()
	if f.applyResponse(rec, tok, resp) {
		tok.Acked = true
	}
}

// Forget drops messages and their interaction tokens, so a long benchmark
// keeps only what it still checks.
func (f *Server) Forget(ids ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	gone := map[string]bool{}
	for _, id := range ids {
		delete(f.messages, id)
		gone[id] = true
	}
	for k, tok := range f.tokens {
		if gone[tok.MessageID] {
			delete(f.tokens, k)
		}
	}
	for k, m := range f.nonces {
		if gone[m.ID] {
			delete(f.nonces, k)
		}
	}
}

// Message returns a copy of a posted message.
func (f *Server) Message(id string) *Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.messages[id]
	if !ok {
		f.t.Fatalf("no message %s on the fake", id)
	}
	c := *m
	b, _ := json.Marshal(m.Components)
	_ = json.Unmarshal(b, &c.Components)
	return &c
}

// Messages returns copies of the messages posted in channel ("" = all),
// oldest first.
func (f *Server) Messages(channel string) []Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Message
	for _, m := range f.messages {
		if channel == "" || m.ChannelID == channel {
			c := *m
			b, _ := json.Marshal(m.Components)
			_ = json.Unmarshal(b, &c.Components)
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b Message) int {
		x, _ := strconv.ParseInt(a.ID, 10, 64)
		y, _ := strconv.ParseInt(b.ID, 10, 64)
		return cmp.Compare(x, y)
	})
	return out
}

// Private returns the ephemeral messages user received.
func (f *Server) Private(user string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ephemerals[user]...)
}

// find returns the enabled component with this label (button) or the
// select at row index, failing the test when there is none.
func (f *Server) Button(m *Message, label string) Component {
	f.t.Helper()
	for _, row := range m.Components {
		for _, c := range row.Components {
			if c.Type == 2 && c.Label == label {
				if c.Disabled {
					f.t.Fatalf("button %q is disabled", label)
				}
				return c
			}
		}
	}
	f.t.Fatalf("no button %q on message %s", label, m.ID)
	return Component{}
}

// click presses a button as u.
func (f *Server) Click(u User, msgID, label string) *Response {
	f.t.Helper()
	m := f.Message(msgID)
	c := f.Button(m, label)
	in, tok, _ := f.Interaction(u, m, 3, map[string]any{"custom_id": c.CustomID, "component_type": 2})
	return f.Send(in, tok)
}

// choose picks options by label in the select of row (0-based) as u.
func (f *Server) Choose(u User, msgID string, row int, labels ...string) *Response {
	f.t.Helper()
	m := f.Message(msgID)
	if row >= len(m.Components) || len(m.Components[row].Components) != 1 || m.Components[row].Components[0].Type != 3 {
		f.t.Fatalf("row %d of message %s is not a select", row, msgID)
	}
	s := m.Components[row].Components[0]
	if s.Disabled {
		f.t.Fatalf("select in row %d is disabled", row)
	}
	var values []string
	for _, l := range labels {
		found := false
		for _, o := range s.Options {
			if o.Label == l {
				values, found = append(values, o.Value), true
			}
		}
		if !found {
			f.t.Fatalf("select in row %d has no option %q", row, l)
		}
	}
	if len(values) > max(s.MaxValues, 1) {
		f.t.Fatalf("select allows %d values, chose %d", s.MaxValues, len(values))
	}
	in, tok, _ := f.Interaction(u, m, 3, map[string]any{"custom_id": s.CustomID, "component_type": 3, "values": values})
	return f.Send(in, tok)
}

// submitModal fills the modal's text input with text and submits it as u.
func (f *Server) SubmitModal(u User, msgID string, modal *Response, text string) *Response {
	f.t.Helper()
	if modal.Type != 9 {
		f.t.Fatalf("expected a modal (type 9), got type %d", modal.Type)
	}
	ti := (*modal.Data.Components)[0].Components[0]
	m := f.Message(msgID)
	in, tok, _ := f.Interaction(u, m, 5, map[string]any{"custom_id": modal.Data.CustomID, "components": []any{
		map[string]any{"type": 1, "components": []any{map[string]any{"type": 4, "custom_id": ti.CustomID, "value": text}}},
	}})
	return f.Send(in, tok)
}

// ClickDisabledAnyway sends a click on a control the client no longer
// shows (a stale client, a copy whose edit failed).
func (f *Server) ClickDisabledAnyway(u User, msgID, customID string) *Response {
	m := f.Message(msgID)
	in, tok, _ := f.Interaction(u, m, 3, map[string]any{"custom_id": customID, "component_type": 2})
	return f.Send(in, tok)
}
