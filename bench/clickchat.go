package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/discord"
	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/adapters/email"
	"github.com/askbridge/askbridge/adapters/email/fakesmtp"
	"github.com/askbridge/askbridge/adapters/telegram"
	"github.com/askbridge/askbridge/adapters/telegram/faketelegram"
	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"
)

// fakeTB lets the bench run the platform fakes built for tests: it keeps
// their cleanups and counts the rules a request broke (printed, not fatal).
type fakeTB struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
	broken   []string
}

func (f *fakeTB) Helper()          {}
func (f *fakeTB) Name() string     { return "bench" }
func (f *fakeTB) Cleanup(c func()) { f.mu.Lock(); f.cleanups = append(f.cleanups, c); f.mu.Unlock() }
func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	f.broken = append(f.broken, fmt.Sprintf(format, args...))
	f.mu.Unlock()
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	panic(fmt.Sprintf(format, args...))
}
func (f *fakeTB) Fatal(args ...any)   { f.Fatalf("%s", fmt.Sprint(args...)) }
func (f *fakeTB) Logf(string, ...any) {}
func (f *fakeTB) Log(...any)          {}

func (f *fakeTB) close() {
	for k := len(f.cleanups) - 1; k >= 0; k-- {
		f.cleanups[k]()
	}
	if len(f.broken) > 0 {
		fmt.Printf("    the fake platform reported %d problems, the first: %s\n", len(f.broken), f.broken[0])
	}
}

// discordClicks: a signed (Ed25519) component interaction on the posted
// message's button, as Discord sends it.
func discordClicks() clickSurface {
	var fake *fakediscord.Server
	alice := fakediscord.User{ID: "4455", Name: "alice"}
	return clickSurface{
		name: "Discord",
		setup: func(s *app.Settings) (func(), error) {
			tb := &fakeTB{}
			fake = fakediscord.New(tb)
			s.Discord = discord.Config{BotToken: fake.BotToken, ApplicationID: fake.AppID, PublicKey: fake.PublicKey(), APIURL: fake.APIURL()}
			return tb.close, nil
		},
		target: func(int) *domain.Target { return &domain.Target{Platform: "discord", Channel: "1000"} },
		click: func(r *replica, q *domain.Question) (func() *http.Request, error) {
			var id string
			for _, t := range q.Targets {
				id = t.MessageTS
			}
			m := fake.Message(id)
			if m == nil {
				return nil, fmt.Errorf("question %s was not posted to Discord", q.ID)
			}
			in, _, _ := fake.Interaction(alice, m, 3, map[string]any{"custom_id": fake.Button(m, "Yes").CustomID, "component_type": 2})
			body, _ := json.Marshal(in)
			return func() *http.Request {
				req, _ := http.NewRequest(http.MethodPost, r.web.URL+"/discord/interactions", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				sig, stamp := fake.Sign(body, time.Now())
				req.Header.Set("X-Signature-Ed25519", sig)
				req.Header.Set("X-Signature-Timestamp", stamp)
				return req
			}, nil
		},
	}
}

const telegramSecret = "bench-telegram-webhook-secret-0123456789"

// telegramClicks: the callback_query update of a button press, posted to
// the webhook with its secret token, as Telegram sends it.
func telegramClicks() clickSurface {
	var fake *faketelegram.Server
	alice := faketelegram.User{ID: 1001, Name: "alice", Started: true}
	return clickSurface{
		name: "Telegram",
		setup: func(s *app.Settings) (func(), error) {
			tb := &fakeTB{}
			fake = faketelegram.New(tb)
			fake.AddUser(alice)
			// No pause between posts to one chat (Telegram's own pacing):
			// the bench posts hundreds of questions to one group first.
			s.Telegram = telegram.Config{Token: fake.Token, APIURL: fake.URL(), WebhookSecret: telegramSecret, ChatInterval: -1}
			// The webhook as `askbridge telegram set-webhook` sets it: its
			// max_connections is how many presses Telegram delivers at once.
			if err := telegram.SetWebhook(context.Background(), s.Telegram, "https://bridge.example/telegram/webhook"); err != nil {
				tb.close()
				return nil, err
			}
			return tb.close, nil
		},
		// Presses arrive as Telegram delivers them: at most max_connections
		// in flight, the rest waiting their turn (counted in their time).
		client: func(*replica) (*http.Client, error) {
			c := client(512)
			c.Transport = fake.WebhookTransport(c.Transport)
			return c, nil
		},
		target: func(int) *domain.Target {
			return &domain.Target{Platform: "telegram", Channel: strconv.FormatInt(faketelegram.Group, 10)}
		},
		click: func(r *replica, q *domain.Question) (func() *http.Request, error) {
			var id string
			for _, t := range q.Targets {
				id = t.MessageTS
			}
			for _, m := range fake.Messages(faketelegram.Group) {
				if strconv.FormatInt(m.ID, 10) != id {
					continue
				}
				for _, row := range m.Keyboard {
					for _, b := range row {
						if b.Text == "Yes" {
							body := fake.Press(alice, m.Chat, m.ID, b.CallbackData)
							return func() *http.Request {
								req, _ := http.NewRequest(http.MethodPost, r.web.URL+"/telegram/webhook", bytes.NewReader(body))
								req.Header.Set("Content-Type", "application/json")
								req.Header.Set("X-Telegram-Bot-Api-Secret-Token", telegramSecret)
								return req
							}, nil
						}
					}
				}
				return nil, fmt.Errorf("no Yes button on the Telegram copy of %s", q.ID)
			}
			return nil, fmt.Errorf("question %s was not posted to Telegram", q.ID)
		},
	}
}

// emailClicks: the confirmation page's POST, as the person's browser sends
// it after opening the option's link in the mail (the GET of that page,
// which sets its cookie, comes before the timing starts).
func emailClicks() clickSurface {
	var fake *fakesmtp.Server
	seen, links := 0, map[string]string{}
	return clickSurface{
		name: "email",
		setup: func(s *app.Settings) (func(), error) {
			tb := &fakeTB{}
			fake = fakesmtp.Start(tb, fakesmtp.Options{Mode: fakesmtp.Plain})
			s.Email = email.Config{SMTPURL: "smtp+insecure://" + fake.Addr, From: "askbridge@example.com", LinkSecret: "bench-email-link-secret-0123456789abcdef"}
			return tb.close, nil
		},
		target: func(int) *domain.Target { return &domain.Target{Platform: "email", To: []string{"alice@example.com"}} },
		click: func(r *replica, q *domain.Question) (func() *http.Request, error) {
			// Each mail is read once: the "Choose" link under "* Yes", by
			// the question it asks.
			ms := fake.Messages()
			for ; seen < len(ms); seen++ {
				txt := ms[seen].Parts()["text/plain"]
				lines := strings.Split(txt, "\n")
				for k, l := range lines {
					if strings.HasPrefix(strings.TrimSpace(l), "* Yes") && k+1 < len(lines) {
						if _, u, ok := strings.Cut(lines[k+1], "Choose: "); ok {
							for _, asked := range lines {
								if strings.HasPrefix(asked, "Ship click-") {
									links[strings.TrimSpace(asked)] = strings.TrimSpace(u)
								}
							}
						}
					}
				}
			}
			link := links[q.Questions[0].Question]
			i := strings.Index(link, email.LinkPath)
			if i < 0 {
				return nil, fmt.Errorf("no mail with a link to answer %s", q.ID)
			}
			page := r.web.URL + link[i:]
			return func() *http.Request {
				res, err := http.Get(page)
				if err != nil {
					return nil
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				csrf := csrfField.FindSubmatch(b)
				action := regexp.MustCompile(`<form method="post" action="([^"]+)"`).FindSubmatch(b)
				if csrf == nil || action == nil {
					return nil
				}
				body := url.Values{"csrf": {string(csrf[1])}}.Encode()
				req, _ := http.NewRequest(http.MethodPost, r.web.URL+html.UnescapeString(string(action[1])), strings.NewReader(body))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				for _, c := range res.Cookies() {
					req.AddCookie(c)
				}
				return req
			}, nil
		},
	}
}
