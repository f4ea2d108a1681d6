package discord

import (
	"context"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/channeltest"
	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

const batchPublicURL = "https://bridge.example.com"

// TestBatchConformance runs the batch suite against the fake Discord, which
// refuses more than 5 rows of components and an embed over its limits.
func TestBatchConformance(t *testing.T) {
	channeltest.RunBatch(t, func(t *testing.T, rc lifecycle.RouterConfig) *channeltest.BatchEnv {
		f := fakediscord.New(t)
		f.Now = rc.Clock.Now
		e := newEnv(t, f, newTestStore(t), func(c *lifecycle.RouterConfig, cfg *Config) {
			st, routes, post := c.Store, c.Routes, c.PostTimeout
			*c = rc
			c.Store, c.Routes, c.PostTimeout = st, routes, post
			cfg.PublicURL = batchPublicURL
		})
		return &channeltest.BatchEnv{Router: e.router, Targets: []domain.Target{{Platform: "discord", Channel: "1000"}},
			Driver: &discordBatchDriver{discordDriver{e: e}}, PublicURL: batchPublicURL}
	})
}

// discordBatchDriver presses the controls of a batch's message.
type discordBatchDriver struct{ discordDriver }

func (d *discordBatchDriver) Messages() int { return len(d.e.fake.Messages("1000")) }

// fresh is q with its copies as recorded now (a call joins the batch's
// message after it was asked).
func (d *discordBatchDriver) fresh(q *domain.Question) *domain.Question {
	got, err := d.e.router.Question(context.Background(), q.ProjectID, q.ID)
	if err != nil {
		d.e.t.Fatal(err)
	}
	return got
}

// button finds the button whose custom id starts with prefix and whose
// label starts with label.
func (d *discordBatchDriver) button(q *domain.Question, prefix, label string) string {
	for _, row := range d.e.fake.Message(d.msgID(q)).Components {
		for _, c := range row.Components {
			if c.Type == 2 && strings.HasPrefix(c.CustomID, prefix) && strings.HasPrefix(c.Label, label) {
				return c.CustomID
			}
		}
	}
	d.e.t.Fatalf("no button %q (%s…) on the batch's message", label, prefix)
	return ""
}

func (d *discordBatchDriver) ClickCall(name string, q *domain.Question, label string) {
	q = d.fresh(q)
	d.press(d.user(name), q, d.button(q, idPrefix+":"+actOption+":"+q.ID+":", label))
}

func (d *discordBatchDriver) All(name string, q *domain.Question, decision, note string) {
	q = d.fresh(q)
	kind, label := actAllowAll, "Allow all"
	if decision == domain.DecideDeny {
		kind, label = actDenyAll, "Deny all"
		if note != "" {
			kind, label = actDenyAllNote, "Deny all with note"
		}
	}
	u := d.user(name)
	resp := d.press(u, q, d.button(q, idPrefix+":"+kind+":"+q.BatchID+":", label))
	if note == "" {
		return
	}
	if resp.Type != 9 {
		d.e.t.Fatalf("Deny all with note… opened no modal: %+v", resp)
	}
	d.typeIn(u, q, resp, note)
}

func (d *discordBatchDriver) Copy(q *domain.Question) string { return d.discordDriver.Copy(d.fresh(q)) }
func (d *discordBatchDriver) Live(q *domain.Question) bool   { return d.discordDriver.Live(d.fresh(q)) }

// DenyCallWithNote presses the call's "Deny #n with note…" and sends the
// note in its modal.
func (d *discordBatchDriver) DenyCallWithNote(name string, q *domain.Question, note string) {
	q = d.fresh(q)
	u := d.user(name)
	resp := d.press(u, q, d.button(q, customID(actOther, q.ID, 0), "Deny #"))
	if resp.Type != 9 {
		d.e.t.Fatalf("the call's Deny with note… opened no modal: %+v", resp)
	}
	d.typeIn(u, q, resp, note)
}
