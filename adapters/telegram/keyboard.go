package telegram

import (
	"fmt"
	"strings"

	"github.com/askbridge/askbridge/adapters/internal/actiontext"
	"github.com/askbridge/askbridge/adapters/internal/approval"
	"github.com/askbridge/askbridge/domain"
)

// ---- the keyboard

func button(text, data string) InlineKeyboardButton {
	return InlineKeyboardButton{Text: domain.Shorten(text, maxButtonText), CallbackData: data}
}

const (
	denyNoteLabel = "Deny with note…"
	editLabel     = "Edit…"
)

// keyboard draws the controls of a pending copy and tells how many
// "always allow" choices got a button.
func keyboard(q *domain.Question, o renderOpts) (*InlineKeyboardMarkup, int) {
	var rows [][]InlineKeyboardButton
	row := func(bs ...InlineKeyboardButton) { rows = append(rows, bs) }
	id := q.ID
	dismiss := button("Dismiss", callbackData(id, opDismiss))
	marked := func(it domain.Item, label string) bool {
		for _, l := range o.Marks[it.Question] {
			if l == label {
				return true
			}
		}
		return false
	}
	options := func(i int, it domain.Item, prefix string) {
		for j, op := range it.Options {
			text := op.Label
			if op.Recommended {
				text = "⭐ " + text
			}
			if op.Default {
				text += " (default)"
			}
			if usesDrafts(q) {
				box := "☐ "
				if marked(it, op.Label) {
					box = "✓ "
				}
				text = box + text
			}
			row(button(prefix+text, callbackData(id, opOption, i, j)))
		}
	}
	shownRules := 0
	switch shapeOf(q) {
	case shapeSingle:
		it := q.Questions[0]
		tones := approval.Tones(q)
		for j, op := range it.Options {
			text := op.Label
			switch {
			case tones != nil && tones[j] == approval.Allow:
				text = "✅ " + text
			case tones != nil && tones[j] == approval.Deny:
				text = "⛔ " + text
			case op.Recommended:
				text = "⭐ " + text
			}
			if op.Default { // its own button answers with it in one press
				text += " (default)"
			}
			row(button(text, callbackData(id, opOption, 0, j)))
		}
		var last []InlineKeyboardButton
		switch {
		case approval.NoteAllowed(q):
			last = append(last, button(denyNoteLabel, callbackData(id, opOther, 0)))
		case q.Kind == domain.KindApproval:
		default:
			last = append(last, button("Other…", callbackData(id, opOther, 0)))
		}
		if hasAction(q) && o.Edit && q.ApprovalsRequired < 2 && buttonURL(o.page(q)) {
			last = append(last, InlineKeyboardButton{Text: editLabel, URL: o.page(q)})
		}
		row(append(last, dismiss)...)
		if hasAction(q) && q.ApprovalsRequired < 2 {
			for j, s := range q.Action.Suggestions {
				if len(rows) >= maxButtons/2 {
					break
				}
				row(button(actiontext.AlwaysAllowLabel(s), callbackData(id, opRule, 0, j)))
				shownRules++
			}
		}
	case shapeMulti:
		it := q.Questions[0]
		options(0, it, "")
		row(button("Other…", callbackData(id, opOther, 0)))
		if b, ok := defaultsButton(q); ok {
			row(b)
		}
		row(button("Submit", callbackData(id, opSubmit)), dismiss)
	case shapeText:
		row(button("Answer…", callbackData(id, opText, 0)), dismiss)
	case shapeItems:
		// One item at a time: the step of the draft shown (MarksOf's).
		open := []InlineKeyboardButton{dismiss}
		if buttonURL(o.page(q)) {
			open = append(open, InlineKeyboardButton{Text: "Open form", URL: o.page(q)})
		}
		i, _, _ := step(q, o.Marks)
		if i < 0 {
			row(append([]InlineKeyboardButton{button("Submit", callbackData(id, opSubmit))}, open...)...)
			break
		}
		it := q.Questions[i]
		row(button(fmt.Sprintf("— %d. %s —", i+1, itemName(it, i)), callbackData(id, opInfo, i)))
		if it.OpenEnded() {
			row(button(fmt.Sprintf("Answer %d…", i+1), callbackData(id, opText, i)))
		} else {
			options(i, it, fmt.Sprintf("%d · ", i+1))
			var more []InlineKeyboardButton
			if q.Kind != domain.KindApproval {
				more = append(more, button(fmt.Sprintf("Other %d…", i+1), callbackData(id, opOther, i)))
			}
			if it.MultiSelect {
				more = append(more, button("Next ▶", callbackData(id, opNext, i)))
			}
			if len(more) > 0 {
				row(more...)
			}
		}
		if b, ok := defaultsButton(q); ok {
			row(b)
		}
		row(open...)
	}
	return &InlineKeyboardMarkup{InlineKeyboard: rows}, shownRules
}

// defaultsButton is "Submit defaults", offered where choices wait for
// Submit (a keyboard cannot pre-select) and every item asked under the
// defaults has one; its label says what it sends. Where each option is
// its own button (shapeSingle) the default's button, marked "(default)",
// is that one press.
func defaultsButton(q *domain.Question) (InlineKeyboardButton, bool) {
	summary := domain.DefaultsSummary(q.Questions)
	if summary == "" || q.Kind == domain.KindApproval {
		return InlineKeyboardButton{}, false
	}
	return button("Submit defaults: "+summary, callbackData(q.ID, opDefaults)), true
}

// rulesNote lists the "always allow" choices whose button label was cut,
// so none is hidden.
func rulesNote(q *domain.Question, o renderOpts, shown int) string {
	if !hasAction(q) || q.ApprovalsRequired > 1 || q.Status != domain.StatusPending {
		return ""
	}
	var b strings.Builder
	for j, s := range q.Action.Suggestions {
		l := actiontext.AlwaysAllowLabel(s)
		if j >= shown || units(l) > maxButtonText {
			fmt.Fprintf(&b, "\n%d. %s", j+1, l)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "\nAlways allow choices in full:" + b.String()
}
