package telegram

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/channeltest"
	"github.com/askbridge/askbridge/adapters/telegram/faketelegram"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

const batchPublicURL = "https://bridge.example.com"

// TestBatchConformance runs the batch suite against the fake Telegram,
// which refuses more than 100 buttons, callback data over 64 bytes and
// text over 4,096 characters.
func TestBatchConformance(t *testing.T) {
	channeltest.RunBatch(t, func(t *testing.T, rc lifecycle.RouterConfig) *channeltest.BatchEnv {
		e := newEnv(t, func(c *lifecycle.RouterConfig, cfg *Config) {
			st := c.Store
			*c = rc
			c.Store = st
			cfg.PublicURL = batchPublicURL
		})
		return &channeltest.BatchEnv{Router: e.router, Targets: []domain.Target{group()},
			Driver: &batchDriver{driver{e: e}}, PublicURL: batchPublicURL}
	})
}

// batchDriver presses the buttons of a batch's message.
type batchDriver struct{ driver }

// Messages counts the copies the bot sent (not its prompts or replies).
func (d *batchDriver) Messages() int {
	n := 0
	for _, m := range d.e.fake.Messages(faketelegram.Group) {
		if m.From == d.e.fake.BotID && !m.ForceRply && len(m.Posted) > 0 {
			n++
		}
	}
	return n
}

func (d *batchDriver) fresh(q *domain.Question) *domain.Question {
	got, err := d.e.router.Question(context.Background(), q.ProjectID, q.ID)
	if err != nil {
		d.e.t.Fatal(err)
	}
	return got
}

// find is the callback data of the button whose data starts with prefix
// and whose text starts with text, on the message as it is now.
func (d *batchDriver) find(m *faketelegram.Msg, prefix, text string) string {
	for _, row := range m.Keyboard {
		for _, b := range row {
			if strings.HasPrefix(b.CallbackData, prefix) && strings.HasPrefix(b.Text, text) {
				return b.CallbackData
			}
		}
	}
	d.e.t.Fatalf("no button %q (%s…) on the batch's message: %+v", text, prefix, m.Keyboard)
	return ""
}

func (d *batchDriver) ClickCall(name string, q *domain.Question, label string) {
	q = d.fresh(q)
	m := d.e.msg(q)
	icon := map[string]string{"Allow": "✅ ", "Deny": "⛔ "}[label]
	d.e.press(d.user(name), m, d.find(m, qkey(q.ID)+":"+string(opOption), icon+label))
	d.done()
}

func (d *batchDriver) All(name string, q *domain.Question, decision, note string) {
	q = d.fresh(q)
	m := d.e.msg(q)
	u := d.user(name)
	op, text := opAllowAll, "✅ Allow all"
	if decision == domain.DecideDeny {
		op, text = opDenyAll, "⛔ Deny all"
		if note != "" {
			op, text = opDenyAllNote, "Deny all with note"
		}
	}
	before := d.e.lastPrompt(m.Chat)
	d.e.press(u, m, d.find(m, qkey(q.BatchID)+":"+string(op), text))
	if note == "" {
		d.done()
		return
	}
	p := d.e.lastPrompt(m.Chat)
	if p == nil || before != nil && p.ID == before.ID {
		d.e.t.Fatal("Deny all with note… sent no prompt to reply to")
	}
	if st := d.e.deliver(d.e.fake.Reply(u, p.Chat, p.ID, note)); st != http.StatusOK {
		d.e.t.Fatalf("webhook answered %d", st)
	}
	d.done()
}

func (d *batchDriver) Copy(q *domain.Question) string { return d.driver.Copy(d.fresh(q)) }
func (d *batchDriver) Live(q *domain.Question) bool   { return d.driver.Live(d.fresh(q)) }

// DenyCallWithNote presses the call's "Deny #n with note…" and replies to
// its prompt with the note.
func (d *batchDriver) DenyCallWithNote(name string, q *domain.Question, note string) {
	q = d.fresh(q)
	m := d.e.msg(q)
	u := d.user(name)
	before := d.e.lastPrompt(m.Chat)
	d.e.press(u, m, d.find(m, callbackData(q.ID, opOther, 0), "Deny #"))
	p := d.e.lastPrompt(m.Chat)
	if p == nil || before != nil && p.ID == before.ID {
		d.e.t.Fatal("the call's Deny with note… sent no prompt to reply to")
	}
	if st := d.e.deliver(d.e.fake.Reply(u, p.Chat, p.ID, note)); st != http.StatusOK {
		d.e.t.Fatalf("webhook answered %d", st)
	}
	d.done()
}
