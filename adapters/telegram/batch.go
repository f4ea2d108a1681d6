package telegram

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/askbridge/askbridge/adapters/internal/actiontext"
	"github.com/askbridge/askbridge/adapters/internal/approval"
	"github.com/askbridge/askbridge/domain"
)

// A batch of approvals (lifecycle.BatchChannel) is one message: a section
// per call — its question, its action as a single approval shows it, its
// outcome once decided — and a keyboard with a row per waiting call
// (✅ Allow #n, ⛔ Deny #n, Deny #n with note…, Edit #n… where allowed)
// and a last row with Allow all N / Deny all N / Deny all with note….
// Telegram takes 4,096 characters and 100 buttons: a batch whose actions
// do not fit shows a line per call, and one whose rows would pass 100
// buttons keeps only the batch's row; either way the message says so and
// links the batch's page of the web inbox. Callback data stays within 64
// bytes: the batch's key (22 bytes), an operation and how many calls the
// message showed.

// Operations of a batch's row.
const (
	opAllowAll    = 'A'
	opDenyAll     = 'D'
	opDenyAllNote = 'N' // a ForceReply prompt for the note
	// minCallText is the least a call's section gets with its whole
	// action; below it every call is one line.
	minCallText = 250
	// minLine is the least a call's line gets when every call is one line.
	minLine = 60
)

// isBatchOp reports whether op is a control of a batch's row.
func isBatchOp(op byte) bool { return op == opAllowAll || op == opDenyAll || op == opDenyAllNote }

// batchPage says where each call of b is decided on its own.
func (o renderOpts) batchPage(b *domain.Batch) string {
	if o.PublicURL == "" {
		return "the web inbox (/batches/" + b.ID + ")"
	}
	return strings.TrimRight(o.PublicURL, "/") + "/batches/" + url.PathEscape(b.ID)
}

// renderBatch draws a batch's message as it should look now.
func (a *Adapter) renderBatch(b *domain.Batch) message {
	o := a.opts(b.Questions[0])
	n := len(b.Questions)
	var pending []*domain.Question
	for _, q := range b.Questions {
		if q.Status == domain.StatusPending {
			pending = append(pending, q)
		}
	}
	var kb [][]InlineKeyboardButton
	rows := len(pending) > 0
	if len(pending) > 0 {
		buttons := 3
		for _, q := range pending {
			buttons += len(callRow(q, b.Questions, o))
		}
		if buttons <= maxButtons {
			for _, q := range pending {
				if row := callRow(q, b.Questions, o); len(row) > 0 {
					kb = append(kb, row)
				}
			}
		} else {
			rows = false
		}
		shown := min(n, 99)
		kb = append(kb, []InlineKeyboardButton{
			button(fmt.Sprintf("✅ Allow all %d", len(pending)), callbackData(b.ID, opAllowAll, shown)),
			button(fmt.Sprintf("⛔ Deny all %d", len(pending)), callbackData(b.ID, opDenyAll, shown)),
			button("Deny all with note…", callbackData(b.ID, opDenyAllNote, shown)),
		})
	}
	var d doc
	q0 := b.Questions[0]
	d.tagged("<b>", "</b>", domain.Shorten(fmt.Sprintf("%d approvals requested by %s", n, q0.AgentLabel()), 300))
	d.text("\n")
	foot := []string{fmt.Sprintf("%d of %d decided", n-len(pending), n)}
	if q0.RunID != "" {
		foot = append(foot, "run "+q0.RunID)
	}
	if len(pending) > 0 {
		foot = append(foot, domain.ExpiresPhrase(pending[0], a.now()))
	}
	footer := domain.Shorten(strings.Join(foot, " · "), 300)
	note := ""
	if len(pending) > 0 && !rows {
		note = fmt.Sprintf("⚠️ %d calls are waiting: more than Telegram's 100 buttons hold. Decide each call on %s, or all at once below.", len(pending), o.batchPage(b))
	}
	per := (maxText-d.n-units(footer)-units(note)-100)/n - 4
	if per < minCallText && note == "" {
		note = fmt.Sprintf("⚠️ %d calls are more than one Telegram message shows in full. Read and decide each on %s, or all at once below.", n, o.batchPage(b))
		per = (maxText-d.n-units(footer)-units(note)-100)/n - 4
	}
	if note != "" {
		d.text(note + "\n")
	}
	calls := b.Questions
	if per < minLine { // thousands of calls: as many lines as fit, then how many more
		room := maxText - d.n - units(footer) - 100
		calls, per = calls[:max(room/(minLine+1)-1, 1)], minLine
	}
	for i, q := range calls {
		d.text("\n")
		if per >= minCallText {
			callSection(&d, q, i, per, a.opts(q))
		} else {
			d.text(callLine(q, i, per))
		}
	}
	if more := n - len(calls); more > 0 {
		d.text("\n")
		d.tagged("<i>", "</i>", fmt.Sprintf("…and %d more calls: every one is on the batch's page.", more))
	}
	d.text("\n\n")
	d.tagged("<i>", "</i>", footer)
	m := message{Text: d.String()}
	if len(kb) > 0 {
		m.Keyboard = &InlineKeyboardMarkup{InlineKeyboard: kb}
	}
	return m
}

// callSection writes call i in about budget units: its question, its
// action as its single-call copy shows it, its outcome once decided.
func callSection(d *doc, q *domain.Question, i, budget int, o renderOpts) {
	start := d.n
	d.tagged("<b>", "</b>", fmt.Sprintf("%d. ", i+1))
	d.text(domain.Shorten(q.Questions[0].Question, 300))
	state := ""
	if q.Status != domain.StatusPending {
		state = domain.Shorten(outcome(q, o), 300)
	}
	if q.Action != nil {
		d.text("\n")
		// actionHTML measures its budget from the start of the document.
		actionHTML(d, q, o, d.n+budget-(d.n-start)-units(state)-2)
	}
	if state != "" {
		d.text("\n")
		d.tagged("<b>", "</b>", state)
	}
}

// callLine is call i in one line of at most budget units.
func callLine(q *domain.Question, i, budget int) string {
	what := q.Questions[0].Question
	if q.Action != nil {
		if args, _ := actiontext.Arguments(q.Action); args != "" {
			what = q.Action.Tool + ": " + args
		}
	}
	state := "waiting"
	if q.Status != domain.StatusPending {
		state = domain.Shorten(outcome(q, renderOpts{}), 120)
	}
	room := max(budget-units(state)-10, 20)
	return fmt.Sprintf("%d. %s — %s", i+1, shortenUnits(strings.Join(strings.Fields(what), " "), room), state)
}

// callRow is a waiting call's buttons, numbered as its section.
func callRow(q *domain.Question, calls []*domain.Question, o renderOpts) []InlineKeyboardButton {
	n := 0
	for i, c := range calls {
		if c.ID == q.ID {
			n = i + 1
		}
	}
	switch shapeOf(q) {
	case shapeText:
		return []InlineKeyboardButton{button(fmt.Sprintf("Answer #%d…", n), callbackData(q.ID, opText, 0))}
	case shapeSingle:
	default:
		return nil
	}
	tones := approval.Tones(q)
	var row []InlineKeyboardButton
	for j, op := range q.Questions[0].Options {
		if j == 3 {
			break
		}
		text := op.Label
		switch {
		case tones != nil && tones[j] == approval.Allow:
			text = "✅ " + text
		case tones != nil && tones[j] == approval.Deny:
			text = "⛔ " + text
		}
		row = append(row, button(fmt.Sprintf("%s #%d", text, n), callbackData(q.ID, opOption, 0, j)))
	}
	if approval.NoteAllowed(q) {
		row = append(row, button(fmt.Sprintf("Deny #%d with note…", n), callbackData(q.ID, opOther, 0)))
	}
	if hasAction(q) && o.Edit && q.ApprovalsRequired < 2 && buttonURL(o.page(q)) {
		row = append(row, InlineKeyboardButton{Text: fmt.Sprintf("Edit #%d…", n), URL: o.page(q)})
	}
	return row
}
