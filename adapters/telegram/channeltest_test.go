package telegram

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/channeltest"
	"github.com/askbridge/askbridge/adapters/telegram/faketelegram"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// TestChannelConformance runs the outbound suite every Channel passes
// against the fake Telegram.
func TestChannelConformance(t *testing.T) {
	channeltest.Run(t, func(t *testing.T, rc lifecycle.RouterConfig) *channeltest.Env {
		e := newEnv(t, func(c *lifecycle.RouterConfig, _ *Config) { st := c.Store; *c = rc; c.Store = st })
		method := map[channeltest.Op]string{channeltest.OpPost: "sendMessage", channeltest.OpFinish: "editMessageText"}
		ref := func(c domain.Target) (int64, int64) {
			chat, _ := strconv.ParseInt(copyChat(c), 10, 64)
			id, _ := strconv.ParseInt(c.MessageTS, 10, 64)
			return chat, id
		}
		return &channeltest.Env{
			Router: e.router, Channel: e.ad, Target: group(), Missing: strconv.FormatInt(faketelegram.MissingChat, 10),
			Delete:    func(c domain.Target) { e.fake.Delete(ref(c)) },
			RateLimit: func(o channeltest.Op) { e.fake.RateLimit(method[o], 1) },
			Fail:      func(o channeltest.Op, status, n int) { e.fake.Fail(method[o], status, n) },
			Text: func(c domain.Target) string {
				if m := e.fake.Message(ref(c)); m != nil {
					return m.Text
				}
				return ""
			},
			Live:  func(c domain.Target) bool { return live(e.fake.Message(ref(c))) },
			Count: func(c domain.Target) int { chat, _ := ref(c); return len(e.fake.Messages(chat)) },
			Unreachable: func() lifecycle.Channel {
				gone, err := New(Config{Token: e.fake.Token, APIURL: "http://127.0.0.1:1", WebhookSecret: testSecret,
					RetryBackoff: 10 * time.Millisecond, ChatInterval: -1}, e.router, nil)
				if err != nil {
					t.Fatal(err)
				}
				return gone
			},
			Secrets: []string{e.fake.Token, testSecret},
			Logs:    e.log,
		}
	})
}

// TestInboundConformance runs the inbound suite every surface passes: people
// press buttons, answer ForceReply prompts and dismiss through webhook
// updates, and read their toasts, direct messages and the copy.
func TestInboundConformance(t *testing.T) {
	channeltest.RunInbound(t, func(t *testing.T, rc lifecycle.RouterConfig) *channeltest.InboundEnv {
		e := newEnv(t, func(c *lifecycle.RouterConfig, _ *Config) { st := c.Store; *c = rc; c.Store = st })
		return &channeltest.InboundEnv{Router: e.router, Targets: []domain.Target{group()},
			// The first press of Dismiss asks, in the table's words; a
			// second press dismisses (docs/telegram.md).
			Driver: &driver{e: e}, ConfirmsDismissal: true}
	})
}

// driver acts as the suite's people in Telegram.
type driver struct{ e *env }

var people = map[string]faketelegram.User{channeltest.Alice: alice, channeltest.Bob: bob, channeltest.Mallory: mallory}

func (d *driver) user(name string) faketelegram.User { return people[name] }

func (d *driver) Person(name string) domain.Person {
	u := d.user(name)
	return domain.Person{Platform: Platform, ID: strconv.FormatInt(u.ID, 10), Name: u.Name}
}

func (d *driver) Words() domain.Words { return words }

// posted is the copy as the person's client still shows it: as it was
// posted, even if it changed since.
func (d *driver) posted(q *domain.Question) *faketelegram.Msg {
	m := d.e.msg(q)
	return m
}

// done waits for the adapter's and the router's background work.
func (d *driver) done() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_ = d.e.ad.Close(ctx)
}

func (d *driver) pressText(u faketelegram.User, q *domain.Question, text string) {
	m := d.posted(q)
	d.e.press(u, m, d.e.button(m, text))
	d.done()
}

// pressNow presses a button of the keyboard as it is now: a question of
// several items shows one item at a time and moves on as the person's
// draft fills (Telegram clients show edits of a keyboard at once).
func (d *driver) pressNow(u faketelegram.User, q *domain.Question, text string) {
	m := d.e.msg(q)
	d.e.press(u, m, d.e.buttonNow(m, text))
	d.done()
}

func (d *driver) Click(name string, q *domain.Question, label string) {
	d.pressText(d.user(name), q, label)
}

// typeIn presses the button that asks for text, and replies to the
// prompt it sent; false when no prompt came (the person was told why).
func (d *driver) typeIn(u faketelegram.User, q *domain.Question, button, text string) bool {
	m := d.posted(q)
	before := d.e.lastPrompt(m.Chat)
	d.e.press(u, m, d.e.buttonNow(m, button))
	p := d.e.lastPrompt(m.Chat)
	if p == nil || before != nil && p.ID == before.ID {
		return false
	}
	if st := d.e.deliver(d.e.fake.Reply(u, p.Chat, p.ID, text)); st != http.StatusOK {
		d.e.t.Fatalf("webhook answered %d", st)
	}
	d.done()
	return true
}

// DenyWithNote presses "Deny with note…" and replies to its prompt with
// the note (a Telegram message holds up to 4,096 characters).
func (d *driver) DenyWithNote(name string, q *domain.Question, note string) {
	if !d.typeIn(d.user(name), q, denyNoteLabel, note) {
		d.e.t.Fatal("Deny with note… sent no prompt to reply to")
	}
}

// NoteLimit: a Telegram message takes more than the bridge's 4,000.
func (d *driver) NoteLimit() int { return domain.MaxAnswerLen }

func (d *driver) Other(name string, q *domain.Question, text string) {
	b := "Other…"
	if q.Questions[0].OpenEnded() {
		b = "Answer…"
	}
	d.typeIn(d.user(name), q, b, text)
}

func (d *driver) Submit(name string, q *domain.Question, answers map[string][]string) {
	u := d.user(name)
	told := len(d.Told(name))
	for i, it := range q.Questions {
		n := strconv.Itoa(i + 1)
		for _, choice := range answers[it.Question] {
			option := -1
			for j, o := range it.Options {
				if o.Label == choice {
					option = j
				}
			}
			switch {
			case it.OpenEnded():
				if !d.typeIn(u, q, "Answer "+n+"…", choice) {
					return
				}
			case option >= 0:
				d.pressNow(u, q, callbackData(q.ID, opOption, i, option))
			default:
				if !d.typeIn(u, q, "Other "+n+"…", choice) {
					return
				}
			}
			if ts := d.e.fake.Toasts(u.ID); len(ts) > 0 && ts[len(ts)-1].Alert && len(d.Told(name)) > told {
				return // refused: told why
			}
		}
		if it.MultiSelect && len(q.Questions) > 1 && len(answers[it.Question]) > 0 {
			d.pressNow(u, q, callbackData(q.ID, opNext, i))
		}
	}
	d.pressNow(u, q, "Submit")
}

func (d *driver) Dismiss(name string, q *domain.Question) string {
	u := d.user(name)
	before := len(d.e.fake.Toasts(u.ID))
	d.pressText(u, q, "Dismiss")
	ts := d.e.fake.Toasts(u.ID)
	if len(ts) == before {
		return ""
	}
	asked := ts[len(ts)-1].Text
	if !strings.Contains(asked, "Press Dismiss again") {
		return "" // refused: told why
	}
	d.pressText(u, q, "Dismiss")
	return asked
}

// Told is what the person was shown privately: toasts and alerts, the
// bot's direct messages, and replies in the chat that mention them.
func (d *driver) Told(name string) []string {
	u := d.user(name)
	var out []string
	for _, t := range d.e.fake.Toasts(u.ID) {
		out = append(out, t.Text)
	}
	for _, m := range d.e.fake.Messages(u.ID) {
		out = append(out, m.Text)
	}
	for _, m := range d.e.fake.Messages(faketelegram.Group) {
		if m.From == d.e.fake.BotID && !m.ForceRply && strings.HasPrefix(m.Text, u.Name+", ") && strings.Contains(m.HTML, "tg://user?id="+strconv.FormatInt(u.ID, 10)) {
			out = append(out, m.Text)
		}
	}
	return out
}

func (d *driver) Copy(q *domain.Question) string { return d.e.msg(q).Text }

func (d *driver) Live(q *domain.Question) bool { return live(d.e.msg(q)) }

// SubmitDefaults presses "Submit defaults" on the copy as posted, or on
// a copy whose options are each a button, the one marked "(default)".
func (d *driver) SubmitDefaults(name string, q *domain.Question) bool {
	m := d.posted(q)
	for _, one := range []bool{false, true} {
		for _, row := range m.Posted {
			for _, b := range row {
				if !one && b.CallbackData == callbackData(q.ID, opDefaults) || one && !usesDrafts(q) && strings.HasSuffix(b.Text, " (default)") {
					d.e.press(d.user(name), m, b.CallbackData)
					d.done()
					return true
				}
			}
		}
	}
	return false
}
