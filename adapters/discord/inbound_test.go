package discord

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/channeltest"
	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// TestInboundConformance runs the inbound suite every surface passes
// against the fake Discord: people click, choose, type in modals and
// dismiss through signed interactions, and read their ephemeral replies
// and the message.
func TestInboundConformance(t *testing.T) {
	channeltest.RunInbound(t, func(t *testing.T, rc lifecycle.RouterConfig) *channeltest.InboundEnv {
		f := fakediscord.New(t)
		// The adapter checks signatures against the Router's clock, which
		// the suite moves (expiry): Discord's clock moves with it.
		f.Now = rc.Clock.Now
		// The suite's Router config (clock, pause wait), with the tests' store and routes.
		e := newEnv(t, f, newTestStore(t), func(c *lifecycle.RouterConfig, _ *Config) {
			st, routes, post := c.Store, c.Routes, c.PostTimeout
			*c = rc
			c.Store, c.Routes, c.PostTimeout = st, routes, post
		})
		return &channeltest.InboundEnv{Router: e.router, Targets: []domain.Target{{Platform: "discord", Channel: "1000"}},
			// A Discord button cannot ask before it acts: Dismiss dismisses
			// at once, and every copy says who did (docs/discord.md).
			Driver: &discordDriver{e: e}, ConfirmsDismissal: false}
	})
}

// discordDriver acts as the suite's people in Discord.
type discordDriver struct{ e *env }

var discordPeople = map[string]fakediscord.User{channeltest.Alice: alice, channeltest.Bob: bob,
	channeltest.Mallory: {ID: "31337", Name: "mallory"}}

func (d *discordDriver) user(name string) fakediscord.User {
	u, ok := discordPeople[name]
	if !ok {
		d.e.t.Fatalf("no Discord user for %q", name)
	}
	return u
}

func (d *discordDriver) Person(name string) domain.Person {
	u := d.user(name)
	return domain.Person{Platform: "discord", ID: u.ID, Name: u.Name, Groups: u.Roles}
}

func (d *discordDriver) Words() domain.Words { return words }

// settle waits for the adapter's background work: interactions handled
// after their acknowledgement, follow-ups, edits through tokens.
func (d *discordDriver) settle() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.e.ad.Close(ctx); err != nil {
		d.e.t.Fatalf("the adapter's background work: %v", err)
	}
}

func (d *discordDriver) msgID(q *domain.Question) string { return q.Targets[0].MessageTS }

// control returns the custom id of the component labelled label (a
// button) or with custom id id, on the message as it is, enabled or not:
// a client that has not refreshed still sends it.
func (d *discordDriver) control(q *domain.Question, label, id string) string {
	for _, row := range d.e.fake.Message(d.msgID(q)).Components {
		for _, c := range row.Components {
			if label != "" && c.Type == 2 && c.Label == label || id != "" && c.CustomID == id {
				return c.CustomID
			}
		}
	}
	d.e.t.Fatalf("no control %q%q on message %s", label, id, d.msgID(q))
	return ""
}

// send sends a component interaction as u and waits for its outcome.
func (d *discordDriver) send(u fakediscord.User, q *domain.Question, data map[string]any) *fakediscord.Response {
	f := d.e.fake
	in, tok, _ := f.Interaction(u, f.Message(d.msgID(q)), 3, data)
	resp := f.Send(in, tok)
	d.settle()
	return resp
}

func (d *discordDriver) press(u fakediscord.User, q *domain.Question, customID string) *fakediscord.Response {
	return d.send(u, q, map[string]any{"custom_id": customID, "component_type": 2})
}

// typeIn fills the modal resp opened with text; false when resp is not a
// modal (the person was told why instead).
func (d *discordDriver) typeIn(u fakediscord.User, q *domain.Question, resp *fakediscord.Response, text string) bool {
	if resp.Type != 9 {
		return false
	}
	d.e.fake.SubmitModal(u, d.msgID(q), resp, text)
	d.settle()
	return true
}

func (d *discordDriver) Click(name string, q *domain.Question, label string) {
	d.press(d.user(name), q, d.control(q, label, ""))
}

// DenyWithNote presses "Deny with note…" and sends the note in its modal,
// whose text input takes up to 4,000 characters (Discord's cap).
func (d *discordDriver) DenyWithNote(name string, q *domain.Question, note string) {
	u := d.user(name)
	resp := d.press(u, q, d.control(q, denyNoteLabel, ""))
	if resp.Type != 9 {
		d.e.t.Fatalf("Deny with note… opened no modal: %+v", resp)
	}
	if ti := (*resp.Data.Components)[0].Components[0]; ti.MaxLength < len([]rune(note)) {
		d.e.t.Fatalf("the note modal takes %d characters, not a note of %d", ti.MaxLength, len([]rune(note)))
	}
	d.typeIn(u, q, resp, note)
}

// NoteLimit is Discord's cap on a text input (4,000 characters).
func (d *discordDriver) NoteLimit() int { return maxTextInputLength }

func (d *discordDriver) Other(name string, q *domain.Question, text string) {
	u := d.user(name)
	id := customID(actOther, q.ID, 0)
	if q.Questions[0].OpenEnded() {
		id = customID(actText, q.ID, 0)
	}
	d.typeIn(u, q, d.press(u, q, d.control(q, "", id)), text)
}

// Submit chooses in each item's select (its "Other…" opens the modal for
// free text), types open-ended items in their modals, then presses Submit.
func (d *discordDriver) Submit(name string, q *domain.Question, answers map[string][]string) {
	u := d.user(name)
	for i, it := range q.Questions {
		if it.OpenEnded() {
			for _, text := range answers[it.Question] {
				if !d.typeIn(u, q, d.press(u, q, d.control(q, "", customID(actText, q.ID, i))), text) {
					return
				}
			}
			continue
		}
		var values []string
		text := ""
		for _, choice := range answers[it.Question] {
			if j := slices.IndexFunc(it.Options, func(o domain.Option) bool { return o.Label == choice }); j >= 0 {
				values = append(values, strconv.Itoa(j))
			} else {
				values, text = append(values, otherValue), choice
			}
		}
		resp := d.send(u, q, map[string]any{"custom_id": d.control(q, "", customID(actSelect, q.ID, i)), "component_type": 3, "values": values})
		switch {
		case text != "":
			if !d.typeIn(u, q, resp, text) {
				return
			}
		case resp.Type != 6 && resp.Type != 7: // 7: the message shows the items this choice asks
			return // refused: told why
		}
	}
	d.press(u, q, d.control(q, "Submit", ""))
}

// Dismiss clicks Dismiss: Discord shows no confirmation first.
func (d *discordDriver) Dismiss(name string, q *domain.Question) string {
	d.press(d.user(name), q, d.control(q, "Dismiss", ""))
	return ""
}

func (d *discordDriver) Told(name string) []string { return d.e.fake.Private(d.user(name).ID) }

func (d *discordDriver) Copy(q *domain.Question) string {
	m := d.e.fake.Message(d.msgID(q))
	parts := []string{m.Content}
	for _, e := range m.Embeds {
		parts = append(parts, e.Title, e.Description)
		for _, fl := range e.Fields {
			parts = append(parts, fl.Name, fl.Value)
		}
		if e.Footer != nil {
			parts = append(parts, e.Footer.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (d *discordDriver) Live(q *domain.Question) bool {
	for _, row := range d.e.fake.Message(d.msgID(q)).Components {
		for _, c := range row.Components {
			if !c.Disabled {
				return true
			}
		}
	}
	return false
}

// SubmitDefaults answers with the defaults in one press: on a button per
// option, the one marked "(default)"; otherwise the selects show the
// defaults chosen and Submit, pressed without touching them, sends them.
func (d *discordDriver) SubmitDefaults(name string, q *domain.Question) bool {
	for _, row := range d.e.fake.Message(d.msgID(q)).Components {
		for _, c := range row.Components {
			if c.Type == 2 && (strings.HasSuffix(c.Label, " (default)") || c.Label == "Submit") {
				d.press(d.user(name), q, c.CustomID)
				return true
			}
		}
	}
	return false
}
