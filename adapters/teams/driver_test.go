package teams

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/askbridge/askbridge/adapters/channeltest"
	"github.com/askbridge/askbridge/adapters/teams/faketeams"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// driver acts as the inbound suite's people in Teams: it reads the card as
// posted, fills its seenInputs, presses its Action.Execute buttons (signed
// adaptiveCard/action invokes from the fake Teams), and keeps what each
// person was shown in answer.
//
// What it relies on of the cards: buttons titled with an option's label;
// seenInputs item<i> (Input.ChoiceSet, values the option index) and other<i>
// (Input.Text) per item; Action.ShowCard "Dismiss…" and "Deny with note…"
// holding the confirmation and the note's Input.Text.
type driver struct {
	t *testing.T
	e *env

	mu   sync.Mutex
	told map[string][]string
}

func (d *driver) Words() domain.Words { return words }

func (d *driver) user(name string) faketeams.User {
	return faketeams.User{AADObjectID: "aad-" + name, Name: name}
}

// Person implements channeltest.NoteDriver.
func (d *driver) Person(name string) domain.Person {
	return domain.Person{Platform: Platform, ID: "aad-" + name, Name: name}
}

// posted is the card of q's copy as it was posted.
func (d *driver) posted(q *domain.Question) (string, json.RawMessage) {
	id := q.Targets[0].MessageTS
	return id, d.e.F.Activity(id).Versions[0]
}

// press sends the invoke of action a with the seenInputs filled.
func (d *driver) press(name string, q *domain.Question, a seenControl, seenInputs map[string]string) {
	d.t.Helper()
	data := map[string]any{}
	_ = json.Unmarshal(a.Data, &data)
	for k, v := range seenInputs {
		data[k] = v
	}
	b, _ := json.Marshal(data)
	id, _ := d.posted(q)
	r := d.e.F.Invoke(d.e.Endpoint, d.user(name), id, a.Verb, b)
	msg := ""
	switch {
	case r.Type == cardContentType:
		msg = seenText(r.Value)
	default:
		var v struct{ Message string }
		_ = json.Unmarshal(r.Value, &v)
		msg = v.Message
		if msg == "" {
			msg = string(r.Value)
		}
	}
	d.mu.Lock()
	if d.told == nil {
		d.told = map[string][]string{}
	}
	d.told[name] = append(d.told[name], msg)
	d.mu.Unlock()
}

func (d *driver) Click(name string, q *domain.Question, label string) {
	d.t.Helper()
	_, c := d.posted(q)
	a, ok := seenAction(c, label)
	if !ok {
		d.t.Fatalf("the card has no button %q", label)
	}
	d.press(name, q, a, nil)
}

func (d *driver) Other(name string, q *domain.Question, text string) {
	d.t.Helper()
	_, c := d.posted(q)
	id := freeInput(c, 0)
	if id == "" {
		d.t.Fatalf("the card has no text box for the first item")
	}
	// The text box is on the card, or in a ShowCard ("Other…") with its
	// own Send button.
	for _, a := range seenActions(c) {
		if a.Type == "Action.ShowCard" {
			if _, ok := seenInputs(a.Card)[id]; ok {
				d.press(name, q, d.sendAction(a.Card), map[string]string{id: text})
				return
			}
		}
	}
	d.press(name, q, d.sendAction(c), map[string]string{id: text})
}

// freeInput is the id of item i's text box: o<i> beside options, t<i> of
// an open-ended item; "" when the card has neither.
func freeInput(c json.RawMessage, i int) string {
	in := seenInputs(c)
	for _, id := range []string{"o" + strconv.Itoa(i), "t" + strconv.Itoa(i)} {
		if _, ok := in[id]; ok {
			return id
		}
	}
	return ""
}

// sendAction is the button that sends the card's seenInputs.
func (d *driver) sendAction(c json.RawMessage) seenControl {
	d.t.Helper()
	for _, title := range []string{"Send", "Submit"} {
		if a, ok := seenAction(c, title); ok {
			return a
		}
	}
	d.t.Fatalf("the card has no Submit or Send button")
	return seenControl{}
}

func (d *driver) Submit(name string, q *domain.Question, answers map[string][]string) {
	d.t.Helper()
	_, c := d.posted(q)
	in := seenInputs(c)
	fill := map[string]string{}
	for i, it := range q.Questions {
		var picked []string
		for _, choice := range answers[it.Question] {
			j := -1
			for k, o := range it.Options {
				if o.Label == choice {
					j = k
				}
			}
			if j < 0 {
				fill[freeInput(c, i)] = choice
				continue
			}
			cs := in["c"+strconv.Itoa(i)]
			if cs == nil {
				d.t.Fatalf("the card has no choices for item %d", i)
			}
			picked = append(picked, seenChoice(cs, choice))
		}
		if len(picked) > 0 {
			fill["c"+strconv.Itoa(i)] = strings.Join(picked, ",")
		}
	}
	d.press(name, q, d.sendAction(c), fill)
}

// seenChoice is the value of the choice titled title.
func seenChoice(cs map[string]any, title string) string {
	list, _ := cs["choices"].([]any)
	for _, c := range list {
		m, _ := c.(map[string]any)
		if m["title"] == title {
			return fmt.Sprint(m["value"])
		}
	}
	return ""
}

func (d *driver) Dismiss(name string, q *domain.Question) string {
	d.t.Helper()
	_, c := d.posted(q)
	sc, ok := seenAction(c, "Dismiss…")
	if !ok {
		d.t.Fatalf("the card has no Dismiss…")
	}
	if sc.Type != "Action.ShowCard" {
		d.press(name, q, sc, nil)
		return ""
	}
	asked := seenText(sc.Card)
	a, ok := seenAction(sc.Card, "Dismiss")
	if !ok {
		d.t.Fatalf("the confirmation has no Dismiss button")
	}
	d.press(name, q, a, nil)
	return asked
}

func (d *driver) DenyWithNote(name string, q *domain.Question, note string) {
	d.t.Helper()
	_, c := d.posted(q)
	sc, ok := seenAction(c, "Deny with note…")
	if !ok || sc.Type != "Action.ShowCard" {
		d.t.Fatalf("the card has no Deny with note…")
	}
	fill := map[string]string{}
	for id := range seenInputs(sc.Card) {
		fill[id] = note
	}
	for _, a := range seenActions(sc.Card) {
		if a.Type == "Action.Execute" {
			d.press(name, q, a, fill)
			return
		}
	}
	d.t.Fatalf("the note has no button to send it")
}

func (d *driver) NoteLimit() int { return domain.MaxAnswerLen }

func (d *driver) Told(name string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.told[name]...)
}

func (d *driver) Copy(q *domain.Question) string {
	return seenText(d.e.F.Activity(q.Targets[0].MessageTS).Card())
}

func (d *driver) Live(q *domain.Question) bool {
	return seenLive(d.e.F.Activity(q.Targets[0].MessageTS).Card())
}

// TestInboundConformance runs the inbound suite (answers, refusals, votes,
// late clicks, dismissal, webhook pauses, adaptive questions, Deny with
// note) through signed adaptiveCard/action invokes.
func TestInboundConformance(t *testing.T) {
	channeltest.RunInbound(t, func(t *testing.T, rc lifecycle.RouterConfig) *channeltest.InboundEnv {
		e := newEnv(t, &rc)
		return &channeltest.InboundEnv{Router: e.Router, Targets: []domain.Target{{Platform: Platform, Channel: testChannel}},
			Driver: &driver{t: t, e: e}, ConfirmsDismissal: true}
	})
}
