package telegram

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/telegram/faketelegram"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store/storetest"
)

const testSecret = "s3cret_webhook-token"

var (
	alice   = faketelegram.User{ID: 1001, Name: "alice", Started: true}
	bob     = faketelegram.User{ID: 1002, Name: "bob"} // never started the bot: told in the chat
	mallory = faketelegram.User{ID: 1666, Name: "mallory", Started: true}
)

// env is one adapter on a fake Telegram, with its webhook served.
type env struct {
	t      testing.TB
	fake   *faketelegram.Server
	router *lifecycle.Router
	ad     *Adapter
	srv    *httptest.Server
	log    func() string
}

type envOption func(*lifecycle.RouterConfig, *Config)

func newEnv(t testing.TB, opts ...envOption) *env {
	t.Helper()
	f := faketelegram.New(t)
	for _, u := range []faketelegram.User{alice, bob, mallory} {
		f.AddUser(u)
	}
	rc := lifecycle.RouterConfig{Store: storetest.Open(t, ""), HasWebhookSecret: func(string) bool { return true },
		PostTimeout: 5 * time.Second, PauseWait: 2 * time.Second}
	cfg := Config{Token: f.Token, APIURL: f.URL(), WebhookSecret: testSecret, RetryBackoff: 10 * time.Millisecond, ChatInterval: -1}
	for _, o := range opts {
		o(&rc, &cfg)
	}
	router := lifecycle.NewRouter(rc)
	logger, logs := newLog()
	ad, err := New(cfg, router, logger)
	if err != nil {
		t.Fatal(err)
	}
	router.AddChannel(ad)
	mux := http.NewServeMux()
	ad.Register(mux)
	srv := httptest.NewServer(mux)
	e := &env{t: t, fake: f, router: router, ad: ad, srv: srv, log: logs}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = ad.Close(ctx)
		_ = router.Close(ctx)
		srv.Close()
		if un := f.Unanswered(); len(un) > 0 {
			t.Errorf("%d button presses were never answered (the person's client keeps spinning)", len(un))
		}
	})
	return e
}

func group() domain.Target {
	return domain.Target{Platform: Platform, Channel: strconv.FormatInt(faketelegram.Group, 10)}
}

// deliver posts an update to the webhook with the secret and returns the
// status.
func (e *env) deliver(body []byte) int {
	e.t.Helper()
	return e.post(body, testSecret)
}

func (e *env) post(body []byte, secret string) int {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/telegram/webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func (e *env) ask(req domain.AskRequest) *domain.Question {
	e.t.Helper()
	if req.AgentID == "" {
		req.AgentID, req.AgentName = "deploy-bot", "Deploy bot"
	}
	if req.RunID == "" {
		req.RunID = "run-1"
	}
	if req.Targets == nil {
		req.Targets = []domain.Target{group()}
	}
	res, err := e.router.Ask(context.Background(), "ops", &req, "")
	if err != nil {
		e.t.Fatalf("ask: %v", err)
	}
	for _, tg := range res.Question.Targets {
		if tg.Error != "" {
			e.t.Fatalf("posting failed: %s", tg.Error)
		}
	}
	return res.Question
}

func (e *env) settle() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.router.Flush(ctx); err != nil {
		e.t.Fatal(err)
	}
}

// msg is the copy of q as the fake holds it.
func (e *env) msg(q *domain.Question) *faketelegram.Msg {
	e.t.Helper()
	id, _ := strconv.ParseInt(q.Targets[0].MessageTS, 10, 64)
	chat, _ := strconv.ParseInt(copyChat(q.Targets[0]), 10, 64)
	m := e.fake.Message(chat, id)
	if m == nil {
		e.t.Fatalf("no copy %d in chat %d", id, chat)
	}
	return m
}

// button finds the callback data of the button whose text is text (or ends
// with " "+text), or whose callback data is text, on the copy as posted.
func (e *env) button(m *faketelegram.Msg, text string) string {
	e.t.Helper()
	for _, row := range m.Posted {
		for _, b := range row {
			if b.Text == text || strings.HasSuffix(b.Text, " "+text) || b.CallbackData == text {
				return b.CallbackData
			}
		}
	}
	e.t.Fatalf("no button %q on message %d", text, m.ID)
	return ""
}

// buttonNow is button on the keyboard the copy shows now, or else (the
// keyboard is gone: the client still shows it) on the copy as posted.
func (e *env) buttonNow(m *faketelegram.Msg, text string) string {
	e.t.Helper()
	for _, row := range m.Keyboard {
		for _, b := range row {
			if b.Text == text || strings.HasSuffix(b.Text, " "+text) || b.CallbackData == text {
				return b.CallbackData
			}
		}
	}
	return e.button(m, text)
}

func (e *env) press(u faketelegram.User, m *faketelegram.Msg, data string) {
	e.t.Helper()
	if st := e.deliver(e.fake.Press(u, m.Chat, m.ID, data)); st != http.StatusOK {
		e.t.Fatalf("webhook answered %d", st)
	}
}

// lastPrompt is the newest ForceReply prompt in the copy's chat.
func (e *env) lastPrompt(chat int64) *faketelegram.Msg {
	ms := e.fake.Messages(chat)
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].ForceRply {
			return ms[i]
		}
	}
	return nil
}

func live(m *faketelegram.Msg) bool {
	if m == nil {
		return false
	}
	for _, row := range m.Keyboard {
		for _, b := range row {
			if b.CallbackData != "" {
				return true
			}
		}
	}
	return false
}
