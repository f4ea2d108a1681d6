package slack

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/channeltest"
	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

const batchPublicURL = "https://bridge.example.com"

// TestBatchConformance runs the batch suite against the fake Slack, which
// refuses a message of more than 50 blocks or 12,000 characters of text.
func TestBatchConformance(t *testing.T) {
	channeltest.RunBatch(t, func(t *testing.T, rc lifecycle.RouterConfig) *channeltest.BatchEnv {
		fake := fakeslack.New("C1")
		t.Cleanup(fake.Close)
		e := newReplica(t, fake, func(c *Config, r *lifecycle.RouterConfig) {
			routes := r.Routes
			*r = rc
			r.Routes = routes
			c.PublicURL = batchPublicURL
		})
		return &channeltest.BatchEnv{Router: e.router, Targets: []domain.Target{{Platform: "slack", Channel: "C1"}},
			Driver: &slackBatchDriver{slackDriver{e: e}}, PublicURL: batchPublicURL}
	})
}

// slackBatchDriver presses the controls of a batch's message.
type slackBatchDriver struct{ slackDriver }

func (d *slackBatchDriver) Messages() int { return len(d.e.fake.Messages("C1")) }

// blocks is the message of q's copy as it is now.
func (d *slackBatchDriver) blocks(q *domain.Question) (channel, ts string, blocks []map[string]any) {
	t := d.e.copyOn(q, "C1")
	m, ok := d.e.fake.Message(t.Channel, t.MessageTS)
	if !ok {
		d.e.t.Fatalf("no message %s on the fake", t.MessageTS)
	}
	if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
		d.e.t.Fatal(err)
	}
	return t.Channel, t.MessageTS, blocks
}

// find returns the button of block whose id starts with prefix and whose
// text starts with text.
func (d *slackBatchDriver) find(blocks []map[string]any, prefix, text string) (string, map[string]any) {
	for _, b := range blocks {
		bid, _ := b["block_id"].(string)
		if !strings.HasPrefix(bid, prefix) {
			continue
		}
		els, _ := b["elements"].([]any)
		for _, ev := range els {
			el, _ := ev.(map[string]any)
			if tx, ok := el["text"].(map[string]any); ok && strings.HasPrefix(tx["text"].(string), text) {
				return bid, el
			}
		}
	}
	d.e.t.Fatalf("no button %q in block %s… of the batch's message: %v", text, prefix, blocks)
	return "", nil
}

func (d *slackBatchDriver) ClickCall(name string, q *domain.Question, label string) {
	channel, ts, blocks := d.blocks(q)
	bid, el := d.find(blocks, blockID(q.ID, "0"), label)
	d.press(d.user(name), channel, ts, bid, el, nil)
}

func (d *slackBatchDriver) All(name string, q *domain.Question, decision, note string) {
	channel, ts, blocks := d.blocks(q)
	label := "Allow all"
	if decision == domain.DecideDeny {
		label = "Deny all"
		if note != "" {
			label = "Deny all with note"
		}
	}
	bid, el := d.find(blocks, blockID(q.BatchID, "all"), label)
	views := len(d.e.fake.Views())
	d.press(d.user(name), channel, ts, bid, el, nil)
	if note == "" {
		return
	}
	if len(d.e.fake.Views()) == views {
		d.e.t.Fatal("Deny all with note… opened no modal")
	}
	d.e.submitView(d.user(name), note)
	d.settle()
}

func (d *slackBatchDriver) Copy(q *domain.Question) string {
	t := d.e.copyOn(q, "C1")
	m, _ := d.e.fake.Message(t.Channel, t.MessageTS)
	return m.Text + "\n" + m.Texts()
}

func (d *slackBatchDriver) Live(q *domain.Question) bool {
	t := d.e.copyOn(q, "C1")
	m, ok := d.e.fake.Message(t.Channel, t.MessageTS)
	return ok && strings.Contains(string(m.Blocks), `"action_id"`)
}

// DenyCallWithNote presses the call's "Deny with note…" and sends the
// note in its modal.
func (d *slackBatchDriver) DenyCallWithNote(name string, q *domain.Question, note string) {
	channel, ts, blocks := d.blocks(q)
	bid, el := d.find(blocks, blockID(q.ID, "0"), denyNoteLabel)
	views := len(d.e.fake.Views())
	d.press(d.user(name), channel, ts, bid, el, nil)
	if len(d.e.fake.Views()) == views {
		d.e.t.Fatal("the call's Deny with note… opened no modal")
	}
	d.e.submitView(d.user(name), note)
	d.settle()
}
