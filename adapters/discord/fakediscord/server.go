// Package fakediscord is an httptest Discord for tests: it enforces the
// message, component and modal limits (400 Invalid Form Body), bot
// authorization, interaction token lifetimes and single acknowledgement,
// answers 429 with Retry-After or 5xx on demand, and plays the Discord
// client: it signs interactions (Ed25519) for components that exist on its
// messages and applies the responses.
package fakediscord

import (
	"cmp"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
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
	// Image and Thumbnail: Discord takes http(s) and attachment:// URLs.
	Image     *EmbedMedia `json:"image,omitempty"`
	Thumbnail *EmbedMedia `json:"thumbnail,omitempty"`
}

// EmbedMedia is an embed's image or thumbnail.
type EmbedMedia struct {
	URL string `json:"url"`
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
