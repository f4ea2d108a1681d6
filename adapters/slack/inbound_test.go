package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/channeltest"
	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// TestInboundConformance runs the inbound suite every surface passes
// against the fake Slack: people click, submit, type and dismiss through
// signed interactions, and read their ephemeral messages and the copy.
func TestInboundConformance(t *testing.T) {
	channeltest.RunInbound(t, func(t *testing.T, rc lifecycle.RouterConfig) *channeltest.InboundEnv {
		fake := fakeslack.New("C1")
		t.Cleanup(fake.Close)
		// The suite's Router config (clock, pause wait), with the tests' routes.
		e := newReplica(t, fake, func(_ *Config, c *lifecycle.RouterConfig) { routes := c.Routes; *c = rc; c.Routes = routes })
		return &channeltest.InboundEnv{Router: e.router, Targets: []domain.Target{{Platform: "slack", Channel: "C1"}},
			Driver: &slackDriver{e: e}, ConfirmsDismissal: true}
	})
}

// slackDriver acts as the suite's people in Slack.
type slackDriver struct{ e *env }

var slackPeople = map[string]user{channeltest.Alice: alice, channeltest.Bob: bob, channeltest.Mallory: {"U9", "mallory"}}

func (d *slackDriver) user(name string) user {
	u, ok := slackPeople[name]
	if !ok {
		d.e.t.Fatalf("no Slack user for %q", name)
	}
	return u
}

func (d *slackDriver) Person(name string) domain.Person {
	u := d.user(name)
	return domain.Person{Platform: "slack", ID: u.id, Name: u.name}
}

func (d *slackDriver) Words() domain.Words { return words }

// settle waits for the adapter's background work: answers, modals and
// messages to people.
func (d *slackDriver) settle() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.e.a.Close(ctx); err != nil {
		d.e.t.Fatalf("the adapter's background work: %v", err)
	}
}

// shown is q's copy as the person's client shows it: the message while it
// still has controls, else the question as it was posted (a client that
// has not refreshed).
func (d *slackDriver) shown(q *domain.Question) (channel, ts string, blocks []map[string]any) {
	t := q.Targets[0]
	raw := []byte(nil)
	if m, ok := d.e.fake.Message(t.Channel, t.MessageTS); ok && strings.Contains(string(m.Blocks), `"action_id"`) {
		raw = m.Blocks
	} else {
		bl, _ := renderQuestionX(q, d.e.router.Clock().Now(), d.e.a.extras(q))
		raw, _ = json.Marshal(bl)
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		d.e.t.Fatal(err)
	}
	return t.Channel, t.MessageTS, blocks
}

// control finds the interactive element whose button text is text or whose
// action id is actionID, and its block id.
func (d *slackDriver) control(blocks []map[string]any, text, actionID string) (string, map[string]any) {
	for _, b := range blocks {
		els, _ := b["elements"].([]any)
		for _, ev := range els {
			el, _ := ev.(map[string]any)
			label := ""
			if tx, ok := el["text"].(map[string]any); ok {
				label, _ = tx["text"].(string)
			}
			if aid, _ := el["action_id"].(string); text != "" && label == text || actionID != "" && aid == actionID {
				bid, _ := b["block_id"].(string)
				return bid, el
			}
		}
	}
	d.e.t.Fatalf("no control %q%q on the copy: %v", text, actionID, blocks)
	return "", nil
}

// press sends the block action of el as u, with the message's state.
func (d *slackDriver) press(u user, channel, ts, bid string, el map[string]any, state map[string]any) {
	act := map[string]any{"action_id": el["action_id"], "block_id": bid, "type": el["type"], "value": el["value"], "action_ts": "1.1"}
	p := map[string]any{"type": "block_actions", "trigger_id": d.e.fake.Trigger(),
		"user":      map[string]any{"id": u.id, "username": u.name, "name": u.name},
		"container": map[string]any{"type": "message", "channel_id": channel, "message_ts": ts},
		"channel":   map[string]any{"id": channel}, "actions": []any{act}}
	if state != nil {
		p["state"] = map[string]any{"values": state}
	}
	d.e.interact(p)
	d.settle()
}

// typeIn presses the control that opens item's text modal and submits text
// in it; it reports false when no modal opened (the person was told why).
func (d *slackDriver) typeIn(u user, q *domain.Question, item int, text string) bool {
	channel, ts, blocks := d.shown(q)
	id := fmt.Sprintf("%s:%d", actOther, item)
	if q.Questions[item].OpenEnded() {
		id = fmt.Sprintf("%s:%d", actAnswer, item)
	}
	bid, el := d.control(blocks, "", id)
	views := len(d.e.fake.Views())
	d.press(u, channel, ts, bid, el, nil)
	if len(d.e.fake.Views()) == views {
		return false
	}
	d.e.submitView(u, text)
	d.settle()
	return true
}

func (d *slackDriver) Click(name string, q *domain.Question, label string) {
	channel, ts, blocks := d.shown(q)
	bid, el := d.control(blocks, label, "")
	d.press(d.user(name), channel, ts, bid, el, nil)
}

// DenyWithNote presses "Deny with note…" and sends the note in its modal,
// which takes at most NoteLimit characters (the modal's max_length).
func (d *slackDriver) DenyWithNote(name string, q *domain.Question, note string) {
	channel, ts, blocks := d.shown(q)
	bid, el := d.control(blocks, denyNoteLabel, "")
	views := len(d.e.fake.Views())
	d.press(d.user(name), channel, ts, bid, el, nil)
	if len(d.e.fake.Views()) == views {
		d.e.t.Fatal("Deny with note… opened no modal")
	}
	var v struct {
		Blocks []struct {
			Element struct {
				MaxLength int `json:"max_length"`
			} `json:"element"`
		} `json:"blocks"`
	}
	_ = json.Unmarshal(d.e.fake.Views()[len(d.e.fake.Views())-1].View, &v)
	if n := textLen(note); len(v.Blocks) < 2 || v.Blocks[1].Element.MaxLength < n {
		d.e.t.Fatalf("the note modal does not take a note of %d characters: %+v", n, v.Blocks)
	}
	d.e.submitView(d.user(name), note)
	d.settle()
}

// NoteLimit is Slack's cap on a plain_text_input (3,000 characters).
func (d *slackDriver) NoteLimit() int { return maxInputLength }

func (d *slackDriver) Other(name string, q *domain.Question, text string) {
	d.typeIn(d.user(name), q, 0, text)
}

// Submit ticks the boxes and radio buttons (client state until Submit),
// saves free text through each item's modal, then presses Submit.
func (d *slackDriver) Submit(name string, q *domain.Question, answers map[string][]string) {
	u := d.user(name)
	state := map[string]any{}
	for i, it := range q.Questions {
		var picked []map[string]any
		for _, choice := range answers[it.Question] {
			j := slices.IndexFunc(it.Options, func(o domain.Option) bool { return o.Label == choice })
			if j < 0 {
				if !d.typeIn(u, q, i, choice) {
					return
				}
				continue
			}
			picked = append(picked, map[string]any{"value": strconv.Itoa(j)})
		}
		if len(picked) == 0 {
			continue
		}
		_, _, blocks := d.shown(q)
		bid, el := d.control(blocks, "", fmt.Sprintf("%s:%d", actPick, i))
		pick := map[string]any{"type": el["type"], "selected_options": picked}
		if !it.MultiSelect {
			pick = map[string]any{"type": el["type"], "selected_option": picked[0]}
		}
		state[bid] = map[string]any{el["action_id"].(string): pick}
	}
	channel, ts, blocks := d.shown(q)
	bid, el := d.control(blocks, "Submit", "")
	d.press(u, channel, ts, bid, el, state)
}

// Dismiss reads the button's confirmation dialog (Slack shows it before it
// sends the click), then clicks.
func (d *slackDriver) Dismiss(name string, q *domain.Question) string {
	channel, ts, blocks := d.shown(q)
	bid, el := d.control(blocks, "", actDismiss)
	var asked []string
	if c, ok := el["confirm"].(map[string]any); ok {
		for _, k := range []string{"title", "text"} {
			if tx, ok := c[k].(map[string]any); ok {
				s, _ := tx["text"].(string)
				asked = append(asked, s)
			}
		}
	}
	d.press(d.user(name), channel, ts, bid, el, nil)
	return strings.Join(asked, "\n")
}

func (d *slackDriver) Told(name string) []string { return d.e.ephemeralsTo(d.user(name)) }

func (d *slackDriver) Copy(q *domain.Question) string {
	t := q.Targets[0]
	m, ok := d.e.fake.Message(t.Channel, t.MessageTS)
	if !ok {
		d.e.t.Fatalf("no message %s on the fake", t.MessageTS)
	}
	return m.Text + "\n" + m.Texts()
}

func (d *slackDriver) Live(q *domain.Question) bool {
	t := q.Targets[0]
	m, ok := d.e.fake.Message(t.Channel, t.MessageTS)
	return ok && strings.Contains(string(m.Blocks), `"action_id"`)
}

// SubmitDefaults answers with the defaults in one press. One single-select
// item is a button per option: the one marked "(default)". Otherwise the
// defaults are pre-selected (initial_option(s)) and Submit sends them:
// Slack's state.values carries an untouched element's initial value.
func (d *slackDriver) SubmitDefaults(name string, q *domain.Question) bool {
	channel, ts, blocks := d.shown(q)
	if !hasSubmit(q) {
		for _, b := range blocks {
			els, _ := b["elements"].([]any)
			for _, ev := range els {
				el, _ := ev.(map[string]any)
				if tx, ok := el["text"].(map[string]any); ok && strings.HasSuffix(fmt.Sprint(tx["text"]), " (default)") {
					d.press(d.user(name), channel, ts, b["block_id"].(string), el, nil)
					return true
				}
			}
		}
		return false
	}
	state := map[string]any{}
	for _, b := range blocks {
		els, _ := b["elements"].([]any)
		for _, ev := range els {
			el, _ := ev.(map[string]any)
			aid, _ := el["action_id"].(string)
			if !strings.HasPrefix(aid, actPick+":") {
				continue
			}
			v := map[string]any{"type": el["type"]}
			if o, ok := el["initial_option"]; ok {
				v["selected_option"] = o
			}
			if os, ok := el["initial_options"]; ok {
				v["selected_options"] = os
			}
			state[b["block_id"].(string)] = map[string]any{aid: v}
		}
	}
	bid, el := d.control(blocks, "Submit", "")
	d.press(d.user(name), channel, ts, bid, el, state)
	return true
}
