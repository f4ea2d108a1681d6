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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
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
	webhook    struct {
		URL, Secret string
		MaxConns    int // max_connections: updates in flight at once
	}
	inflight *sync.Cond // signalled when a webhook delivery ends
	sending  int        // webhook deliveries in flight
	nextUpd  int64
	queue    []json.RawMessage // updates for getUpdates
	admins   []int64           // administrators of Group, the first its creator
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
	f.inflight = sync.NewCond(&f.mu)
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

// DefaultMaxConnections is setWebhook's max_connections when the call
// leaves it out (Telegram's default; 1–100 may be set).
const DefaultMaxConnections = 40

// MaxConnections is the webhook's max_connections: how many updates
// Telegram delivers at once (the rest wait their turn).
func (f *Server) MaxConnections() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.maxConns()
}

func (f *Server) maxConns() int {
	if f.webhook.MaxConns == 0 {
		return DefaultMaxConnections
	}
	return f.webhook.MaxConns
}

// WebhookTransport sends updates through rt as Telegram delivers them to a
// webhook: at most max_connections at once, each on a connection of its
// own; the rest wait until one ends, and their wait is part of the time
// their request takes.
func (f *Server) WebhookTransport(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return webhookTransport{f: f, rt: rt}
}

type webhookTransport struct {
	f  *Server
	rt http.RoundTripper
}

func (t webhookTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	f := t.f
	f.mu.Lock()
	for f.sending >= f.maxConns() {
		f.inflight.Wait()
	}
	f.sending++
	f.mu.Unlock()
	res, err := t.rt.RoundTrip(r)
	if err == nil {
		// The connection is taken until the bridge's answer is read.
		b, rerr := io.ReadAll(res.Body)
		res.Body.Close()
		res.Body = io.NopCloser(bytes.NewReader(b))
		err = rerr
	}
	f.mu.Lock()
	f.sending--
	f.inflight.Signal()
	f.mu.Unlock()
	return res, err
}

// Deliver posts update to the webhook with its secret token, as Telegram
// does (WebhookTransport), at origin (the bridge as the test reaches it;
// the path is the webhook URL's). It returns the bridge's status.
func (f *Server) Deliver(ctx context.Context, origin string, update []byte) (int, error) {
	hook, secret := f.Webhook()
	u, err := url.Parse(hook)
	if err != nil || hook == "" {
		return 0, errors.New("faketelegram: no webhook is set (setWebhook)")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(origin, "/")+u.Path, bytes.NewReader(update))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	}
	res, err := (&http.Client{Transport: f.WebhookTransport(nil)}).Do(req)
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	return res.StatusCode, nil
}

func key(chat, id int64) string { return strconv.FormatInt(chat, 10) + ":" + strconv.FormatInt(id, 10) }
