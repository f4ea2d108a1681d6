package telegram

import (
	"encoding/base64"
	"fmt"
	"html"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/askbridge/askbridge/adapters/internal/actiontext"
	"github.com/askbridge/askbridge/adapters/internal/approval"
	"github.com/askbridge/askbridge/domain"
	"github.com/google/uuid"
)

// Bot API limits (https://core.telegram.org/bots/api#sendmessage,
// #inlinekeyboardbutton, #answercallbackquery).
const (
	maxText         = 4096 // message text after entity parsing, UTF-16 units
	maxCallbackData = 64   // bytes
	maxToast        = 200  // answerCallbackQuery text
	maxButtons      = 100  // buttons in one inline keyboard
	maxPerRow       = 8    // buttons in one row
	maxButtonText   = 60   // shortened by the adapter: clients cut long buttons anyway
	maxPlaceholder  = 64   // ForceReply input_field_placeholder
)

// units counts s as Telegram counts message length: UTF-16 code units.
func units(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// shortenUnits cuts s to at most max UTF-16 units, with "…".
func shortenUnits(s string, max int) string {
	if units(s) <= max {
		return s
	}
	if max <= 0 {
		return ""
	}
	n := 0
	for i, r := range s {
		if n+utf16.RuneLen(r) > max-1 {
			return strings.TrimRight(s[:i], " \t\n") + domain.Ellipsis
		}
		n += utf16.RuneLen(r)
	}
	return s
}

// esc escapes text for Telegram's HTML parse mode: agent and person text
// never becomes markup (a tag, an entity, a link).
func esc(s string) string { return html.EscapeString(s) }

// doc builds an HTML message and counts its visible length (what Telegram
// limits: the text after entity parsing).
type doc struct {
	b strings.Builder
	n int // visible UTF-16 units
}

// text adds visible, escaped text.
func (d *doc) text(s string) { d.b.WriteString(esc(s)); d.n += units(s) }

// tagged adds s inside a tag pair (b, i, pre, code, …).
func (d *doc) tagged(open, close, s string) {
	d.b.WriteString(open)
	d.text(s)
	d.b.WriteString(close)
}

// picture adds a question's picture as a link with its alt text: the
// bridge never fetches it, and link previews are off, so nobody's client
// loads it unless they open it.
func (d *doc) picture(img *domain.Image) {
	if img == nil {
		return
	}
	d.text("🖼 ")
	d.b.WriteString(`<a href="` + esc(img.URL) + `">`)
	d.text(domain.Shorten(strings.Join(strings.Fields(img.Alt), " "), 200))
	d.b.WriteString("</a>")
}

func (d *doc) String() string { return d.b.String() }

// ---- callback data: a short opaque key, never a label.

// Operations carried in callback_data: "<question key>:<op>[<item>[.<option>]]".
const (
	opOption  = 'o' // option button: answers (single-select) or toggles in the person's draft
	opOther   = 'x' // "Other…" / "Deny with note…": a ForceReply prompt
	opText    = 'a' // "Answer…" of an open-ended item: a ForceReply prompt
	opSubmit  = 's' // Submit a draft
	opDismiss = 'd' // Dismiss
	opRule    = 'r' // "always allow" choice <option>
	opInfo    = 'h' // an item's title row: shows its question as a toast
	opNext    = 'n' // "Next ▶" of a multi-select item among several: done with it
	// opDefaults is "Submit defaults": every item asked under the
	// defaults answered with them, in one press (domain.DefaultsRequest).
	opDefaults = 'f'
)

// nextKey is the draft entry listing the multi-select items (their numbers)
// the person pressed "Next ▶" on; no item's question is empty, so it never
// names an item.
const nextKey = "\x00next"

// step tells where a person's draft stands on a question of several items:
// cur is the item its keyboard shows — the first item asked (its condition
// met, domain.Shown) that the person has not answered (a multi-select item
// until they press Next) — or -1 when every item asked is answered; pos is
// its place among the items asked (1-based), total their number.
func step(q *domain.Question, marks map[string][]string) (cur, pos, total int) {
	choices := make([][]string, len(q.Questions))
	for i, it := range q.Questions {
		choices[i] = marks[it.Question]
	}
	shown := domain.Shown(q.Questions, choices)
	cur = -1
	for i, it := range q.Questions {
		if !shown[i] {
			continue
		}
		total++
		done := len(choices[i]) > 0 && (!it.MultiSelect || slices.Contains(marks[nextKey], strconv.Itoa(i)))
		if !done && cur < 0 {
			cur, pos = i, total
		}
	}
	if cur < 0 {
		pos = total
	}
	return cur, pos, total
}

// qkey is the question id in callback data: its UUID's 16 bytes in
// base64url (22 bytes), or the id itself after "~" when it is no UUID.
func qkey(id string) string {
	if u, err := uuid.Parse(id); err == nil {
		return base64.RawURLEncoding.EncodeToString(u[:])
	}
	return "~" + id
}

// qid reads a question key.
func qid(key string) (string, bool) {
	if rest, ok := strings.CutPrefix(key, "~"); ok {
		return rest, rest != ""
	}
	b, err := base64.RawURLEncoding.DecodeString(key)
	if err != nil || len(b) != 16 {
		return "", false
	}
	u, _ := uuid.FromBytes(b)
	return u.String(), true
}

// action is parsed callback data.
type action struct {
	QuestionID string
	Op         byte
	Item       int // -1 when absent
	Option     int // -1 when absent
}

func callbackData(id string, op byte, nums ...int) string {
	s := qkey(id) + ":" + string(op)
	for i, n := range nums {
		if i > 0 {
			s += "."
		}
		s += strconv.Itoa(n)
	}
	return s
}

// parseCallbackData reads callback data this adapter wrote; ok is false for
// anything else.
func parseCallbackData(s string) (action, bool) {
	if len(s) == 0 || len(s) > maxCallbackData {
		return action{}, false
	}
	key, rest, ok := strings.Cut(s, ":")
	if !ok || rest == "" {
		return action{}, false
	}
	id, ok := qid(key)
	if !ok {
		return action{}, false
	}
	a := action{QuestionID: id, Op: rest[0], Item: -1, Option: -1}
	if args := rest[1:]; args != "" {
		parts := strings.Split(args, ".")
		if len(parts) > 2 {
			return action{}, false
		}
		nums := []*int{&a.Item, &a.Option}
		for i, p := range parts {
			n, err := strconv.Atoi(p)
			if err != nil || n < 0 || n >= 100 || strconv.Itoa(n) != p {
				return action{}, false
			}
			*nums[i] = n
		}
	}
	switch a.Op {
	case opOption:
		return a, a.Item >= 0 && a.Option >= 0
	case opRule:
		return a, a.Item >= 0 && a.Option >= 0
	case opOther, opText, opInfo, opNext, opAllowAll, opDenyAll, opDenyAllNote:
		return a, a.Item >= 0 && a.Option < 0
	case opSubmit, opDismiss, opDefaults:
		return a, a.Item < 0
	}
	return action{}, false
}

// ---- shapes

type shape int

const (
	shapeSingle shape = iota // one single-select item: a button per option
	shapeMulti               // one multi-select item: toggles (✓) + Submit
	shapeText                // one open-ended item: "Answer…"
	shapeItems               // 2–4 items: every item's buttons in one keyboard + Submit
)

func shapeOf(q *domain.Question) shape {
	if len(q.Questions) != 1 {
		return shapeItems
	}
	switch it := q.Questions[0]; {
	case it.OpenEnded():
		return shapeText
	case it.MultiSelect:
		return shapeMulti
	}
	return shapeSingle
}

// usesDrafts reports whether choices wait for Submit.
func usesDrafts(q *domain.Question) bool {
	s := shapeOf(q)
	return s == shapeMulti || s == shapeItems
}

// hasAction reports whether q is a single-vote-style approval of a tool
// call, the kind that takes "always allow" choices.
func hasAction(q *domain.Question) bool {
	return q.Action != nil && q.Kind == domain.KindApproval && len(q.Questions) == 1 && shapeOf(q) == shapeSingle
}

// renderOpts is what rendering needs beyond the question.
type renderOpts struct {
	PublicURL string
	Edit      bool
	// Marks are the draft the keyboard shows ✓ for, and MarksOf whose it
	// is (the person who changed it last); nil: none.
	Marks   map[string][]string
	MarksOf string
}

// page is the question's page on the bridge, "" without a public URL.
func (o renderOpts) page(q *domain.Question) string {
	if o.PublicURL == "" {
		return ""
	}
	return strings.TrimRight(o.PublicURL, "/") + "/questions/" + q.ID
}

// buttonURL is a URL Telegram takes on a button: https only (it refuses
// http and loopback addresses on buttons).
func buttonURL(u string) bool { return strings.HasPrefix(u, "https://") }

// message is a rendered copy.
type message struct {
	Text     string
	Keyboard *InlineKeyboardMarkup // nil once final: the keyboard is removed
}

// render draws q as it should look now.
func render(q *domain.Question, now time.Time, o renderOpts) message {
	final := q.Status.Final()
	var kb *InlineKeyboardMarkup
	rules := 0
	if !final {
		kb, rules = keyboard(q, o)
	}
	return message{Text: renderText(q, now, o, rules), Keyboard: kb}
}

func renderText(q *domain.Question, now time.Time, o renderOpts, shownRules int) string {
	var d doc
	if q.Status.Final() {
		d.tagged("<b>", "</b>", outcome(q, o))
		d.text("\n\n")
	}
	title := "Question from " + q.AgentLabel()
	if q.Kind == domain.KindApproval {
		title = "Approval requested by " + q.AgentLabel()
	}
	if len(q.Questions) == 1 && q.Questions[0].Header != "" {
		title = q.Questions[0].Header + " · " + title
	}
	d.tagged("<b>", "</b>", domain.Shorten(title, 300))
	d.text("\n")

	// The footer and the pending notes are built first: they always fit,
	// the items come next, the context takes what room is left.
	var foot []string
	if q.AgentID != "" {
		foot = append(foot, "Agent "+q.AgentID)
	}
	if q.RunID != "" {
		foot = append(foot, "run "+q.RunID)
	}
	if q.Status == domain.StatusPending {
		foot = append(foot, domain.ExpiresPhrase(q, now))
	}
	var tail doc
	if q.Status == domain.StatusPending {
		if q.ApprovalsRequired > 1 {
			tally := domain.TallyLine(q)
			if tally == "" {
				tally = "no votes yet"
			}
			tail.text("\n")
			tail.tagged("<b>", "</b>", fmt.Sprintf("Needs %d approvals: ", q.ApprovalsRequired))
			tail.text(domain.Shorten(tally, 300))
		}
		if !q.Responders.Empty() {
			who := domain.DescribeResponders(q.Responders)
			if q.Responders.ExcludeRequester && q.RequestedBy != "" {
				who += " (not " + q.RequestedBy + ", who asked for it)"
			}
			tail.text("\n")
			tail.tagged("<b>", "</b>", "Who may answer: ")
			tail.text(domain.Shorten(who, 300))
		}
		for _, r := range q.Remarks { // escaped: a pager user's name comes from outside
			tail.text("\n📟 " + r.Text)
		}
		if h := domain.HistoryText(q.History, now); h != "" {
			tail.text("\n")
			tail.tagged("<i>", "</i>", domain.Shorten("🕘 "+h, 300))
		}
		if shapeOf(q) == shapeItems {
			tail.text("\n")
			tail.tagged("<b>", "</b>", stepLine(q, o))
		} else if len(o.Marks) > 0 && o.MarksOf != "" {
			tail.text("\n")
			tail.tagged("<i>", "</i>", domain.Shorten("✓ marks show "+o.MarksOf+"'s choices so far; press Submit when done.", 200))
		}
	}
	tail.text("\n")
	tail.tagged("<i>", "</i>", domain.Shorten(strings.Join(foot, " · "), 300))

	var body doc
	for i, it := range q.Questions {
		if i > 0 {
			body.text("\n")
		}
		if len(q.Questions) > 1 {
			body.tagged("<b>", "</b>", fmt.Sprintf("%d. %s", i+1, itemName(it, i)))
			if c := domain.ConditionText(q.Questions, it.ShowIf); c != "" {
				body.tagged("<i>", "</i>", " ("+c+")")
			}
			body.text("\n")
		}
		qlen, dlen := 1500, 200
		if len(q.Questions) > 1 {
			qlen, dlen = 500, 90
		}
		item(&body, it, qlen, dlen, len(q.Questions) > 1)
	}
	room := maxText - d.n - tail.n - 2
	if hasAction(q) {
		note := rulesNote(q, o, shownRules)
		body.text(note)
		body.text("\n\n")
		actionHTML(&body, q, o, max(room-body.n-units(q.Context)/4, room/2))
	}
	if body.n > room {
		// Only reachable with the longest items: shorten them evenly.
		body = doc{}
		per := max((room-30*len(q.Questions))/len(q.Questions), 60)
		for i, it := range q.Questions {
			body.text("\n")
			if len(q.Questions) > 1 {
				body.tagged("<b>", "</b>", shortenUnits(fmt.Sprintf("%d. %s", i+1, itemName(it, i)), 20))
				body.text("\n")
			}
			body.text(shortenUnits(it.Question, per))
		}
	}
	if c := strings.TrimSpace(q.Context); c != "" {
		if left := room - body.n - 2; left > 20 {
			d.text(shortenUnits(c, left))
			d.text("\n")
		}
	}
	if img := q.ContextImage; img != nil && q.Status == domain.StatusPending {
		if left := maxText - d.n - body.n - tail.n - 2; left > min(units(img.Alt), 200)+10 {
			d.picture(img)
			d.text("\n")
		}
	}
	d.b.WriteString(body.String())
	d.n += body.n
	d.b.WriteString(tail.String())
	d.n += tail.n
	return d.String()
}

// stepLine names the step the keyboard of several items shows, and whose
// draft it follows: "Question 2 of 3 (alice's answers): Auth".
func stepLine(q *domain.Question, o renderOpts) string {
	i, pos, total := step(q, o.Marks)
	whose := ""
	if len(o.Marks) > 0 && o.MarksOf != "" {
		whose = " (" + o.MarksOf + "'s answers)"
	}
	if i < 0 {
		return domain.Shorten(fmt.Sprintf("All %d questions answered%s: press Submit.", total, whose), 200)
	}
	return domain.Shorten(fmt.Sprintf("Question %d of %d%s: %s", pos, total, whose, itemName(q.Questions[i], i)), 200)
}

// item writes an item's question and options; among several items a
// multi-select one is left with Next.
func item(d *doc, it domain.Item, maxQ, maxDesc int, several bool) {
	d.tagged("<b>", "</b>", domain.Shorten(it.Question, maxQ))
	if it.Image != nil {
		d.text("\n")
		d.picture(it.Image)
	}
	if r := it.Other.Describe(); r != "" {
		d.text("\n")
		d.tagged("<i>", "</i>", domain.Shorten("Your own answer: "+r, 300))
	}
	if it.MultiSelect {
		d.text("\n")
		if several {
			d.tagged("<i>", "</i>", "Choose one or more, then Next.")
		} else {
			d.tagged("<i>", "</i>", "Choose one or more, then Submit.")
		}
	}
	for j, o := range it.Options {
		d.text(fmt.Sprintf("\n%d. %s", j+1, domain.Shorten(o.Label, 200)))
		if o.Recommended {
			d.text(" ⭐ recommended")
		}
		if o.Default {
			d.text(" (default)")
		}
		if o.Description != "" {
			d.text(" — " + domain.Shorten(o.Description, maxDesc))
		}
		if o.Image != nil {
			d.text(" ")
			d.picture(o.Image)
		}
	}
}

func itemName(it domain.Item, i int) string {
	if it.Header != "" {
		return it.Header
	}
	return fmt.Sprintf("Question %d", i+1)
}

// outcome is the final copy's first line.
func outcome(q *domain.Question, o renderOpts) string {
	icon := "⏹"
	if q.Status == domain.StatusAnswered {
		icon = "✅"
	}
	line := domain.OutcomeLine(q)
	if verb, note, ok := approval.Verdict(q); ok && q.RespondedBy != nil {
		if verb != "Allowed" {
			icon = "⛔"
		}
		line = verb + " by " + q.RespondedBy.String()
		if note != "" {
			line += ": " + note
		}
	}
	if q.AppliedRule != nil && q.Action != nil && *q.AppliedRule < len(q.Action.Suggestions) && q.Status == domain.StatusAnswered {
		s := q.Action.Suggestions[*q.AppliedRule]
		line += ", and not asked again " + actiontext.RuleScope(s) + " for " + actiontext.RuleWords(s)
	}
	return domain.Shorten(icon+" "+line, 1500)
}
