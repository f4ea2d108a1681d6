package teams

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/askbridge/askbridge/adapters/internal/actiontext"
	"github.com/askbridge/askbridge/adapters/internal/approval"
	"github.com/askbridge/askbridge/domain"
)

// The shapes of a pending question's controls:
//   - one single-select item: a button per option (Allow and Deny styled
//     apart on an approval), with "Other…" (or, on an approval, "Deny with
//     note…"), "Edit…", "Always allow…" and "Dismiss…", each opening its
//     small form under the buttons (Action.ShowCard);
//   - one open-ended item: a text input and Send;
//   - anything else (several items, a multi-select item): a form with an
//     Input.ChoiceSet per item (isMultiSelect for multi-select), a text
//     input for free text, and one Submit, so partial answers never
//     reach the agent.

// form reports whether q is answered through one Submit.
func form(q *domain.Question) bool {
	return len(q.Questions) > 1 || q.Questions[0].MultiSelect
}

// cardWords writes the sentences every surface shows, as plain text.
var cardWords = domain.Words{}

func itemName(it domain.Item, i int) string {
	if it.Header != "" {
		return it.Header
	}
	n, _ := clip(oneLine(it.Question), 60)
	if n == "" {
		return "question " + strconv.Itoa(i+1)
	}
	return n
}

// items renders every item: its text, condition, picture, options and,
// while the view is interactive, its controls; then the form's Submit.
func (r *cardRender) items() []el {
	q := r.q
	var out []el
	for i := range q.Questions {
		out = append(out, r.item(i)...)
	}
	if r.interactive() && form(q) {
		out = append(out, actionSet(
			styled(execute(verbSubmit, "Submit", r.data(el{})), "positive"),
			r.dismiss(),
		))
	}
	return out
}

func (r *cardRender) item(i int) []el {
	q := r.q
	it := q.Questions[i]
	var head []el
	if len(q.Questions) > 1 {
		head = append(head, run(fmt.Sprintf("%d. ", i+1), el{"weight": "bolder"}))
		if it.Header != "" {
			head = append(head, run(oneLine(it.Header)+" — ", el{"weight": "bolder"}))
		}
		head = append(head, run(r.short("question text", it.Question, r.l.question)))
	} else {
		head = append(head, run(r.short("question text", it.Question, r.l.question), el{"weight": "bolder"}))
	}
	out := []el{runs(head...)}
	out[0]["separator"] = true
	if it.ShowIf != nil {
		out = append(out, runs(run(domain.ConditionText(q.Questions, it.ShowIf)+"; otherwise leave it empty", el{"isSubtle": true, "italic": true})))
	}
	if it.Image != nil {
		out = append(out, r.image(it.Image, fmt.Sprintf("question %d's picture", i+1))...)
	}
	if listNeeded(q, it) {
		out = append(out, r.optionList(it)...)
	}
	if i == 0 {
		out = append(out, r.actionBlocks()...)
	}
	if !r.interactive() {
		return out
	}
	switch {
	case form(q):
		out = append(out, r.formInputs(i)...)
	case it.OpenEnded():
		out = append(out, r.textInput(i, inText+strconv.Itoa(i), "Your answer", true))
		out = append(out, actionSet(styled(execute(verbText, "Send", r.data(el{"i": i})), "positive"), r.dismiss()))
	default:
		out = append(out, r.buttons(i)...)
	}
	return out
}

// listNeeded reports whether the options are listed above the controls:
// when the controls do not show all there is to an option (a description,
// a picture, the agent's recommendation, a default, a label longer than a
// button shows).
func listNeeded(q *domain.Question, it domain.Item) bool {
	for _, o := range it.Options {
		if o.Description != "" || o.Image != nil || o.Recommended || (o.Default && !form(q)) ||
			(!form(q) && len([]rune(o.Label)) > buttonLen) {
			return true
		}
	}
	return false
}

// optionList names every option with its number, whether the agent
// recommends it or it is the default, and its description, and shows the
// options' pictures: the buttons and choices show only the label.
func (r *cardRender) optionList(it domain.Item) []el {
	var inl []el
	var pics []el
	for j, o := range it.Options {
		if j > 0 {
			inl = append(inl, run("\n"))
		}
		inl = append(inl, run(fmt.Sprintf("%d. ", j+1)), run(oneLine(o.Label), el{"weight": "bolder"}))
		var notes []string
		if o.Recommended {
			notes = append(notes, "recommended")
		}
		if o.Default {
			notes = append(notes, "default")
		}
		if len(notes) > 0 {
			inl = append(inl, run(" ("+strings.Join(notes, ", ")+")", el{"italic": true}))
		}
		if o.Description != "" {
			if r.l.option == 0 {
				r.cut = append(r.cut, "option descriptions left out")
			} else {
				inl = append(inl, run(" — "+r.short("option descriptions", oneLine(o.Description), r.l.option), el{"isSubtle": true}))
			}
		}
		if o.Image != nil {
			if img := r.image(o.Image, "options' pictures"); img != nil {
				img[0]["size"] = "medium"
				pics = append(pics, runs(run(fmt.Sprintf("Option %d, %s:", j+1, oneLine(o.Label)), el{"isSubtle": true})))
				pics = append(pics, img...)
			}
		}
	}
	return append([]el{runs(inl...)}, pics...)
}

// buttons are the controls of one single-select item: a button per option
// and the extras, at most maxActions per row.
func (r *cardRender) buttons(i int) []el {
	q := r.q
	it := q.Questions[i]
	tones := approval.Tones(q)
	var opts []el
	for j, o := range it.Options {
		title := o.Label
		if o.Default { // buttons cannot be pre-selected: the default is named
			title = domain.Shorten(oneLine(o.Label), buttonLen-10) + " (default)"
		}
		b := execute(verbAnswer, label(title, buttonLen), r.data(el{"i": i, "o": j}))
		b["associatedInputs"] = "None"
		switch {
		case tones != nil && tones[j] == approval.Allow:
			b["style"] = "positive"
		case tones != nil && tones[j] == approval.Deny:
			b["style"] = "destructive"
		case tones == nil && o.Recommended:
			b["style"] = "positive"
		}
		opts = append(opts, b)
	}
	var extras []el
	switch {
	case approval.NoteAllowed(q):
		// An approval has no "Other": free text never decides. Denying
		// with a note is its own action, and the note is a reason.
		extras = append(extras, showCard("Deny with note…",
			r.textInput(i, inNote+r.sfx, "Why are you denying it? The agent reads this note.", true),
			actionSet(styled(execute(verbDenyNote, "Deny with this note", r.data(el{"i": i})), "destructive"))))
	case q.Kind == domain.KindApproval:
	default:
		extras = append(extras, showCard("Other…",
			r.textInput(i, inOwn+strconv.Itoa(i), "Your own answer (instead of the options)", true),
			actionSet(styled(execute(verbOther, "Send", r.data(el{"i": i})), "positive"))))
	}
	extras = append(extras, r.actionControls()...)
	extras = append(extras, r.dismiss())
	// Options and extras on their own rows: never more than Teams shows.
	return []el{actionSet(opts...), actionSet(extras...)}
}

// data is an action's data: the question, and the digest of the action an
// approval shows, so a click decides only the action the person saw.
func (r *cardRender) data(d el) el {
	d["q"] = r.q.ID
	if r.q.Action != nil {
		d["g"] = r.q.Action.Digest
	}
	if r.sfx != "" {
		d["s"] = r.sfx
	}
	return d
}

// dismiss is "Dismiss…": the question closes unanswered, after the words
// every surface asks first.
func (r *cardRender) dismiss() el {
	ask := cardWords.DismissConfirm()
	d := styled(execute(verbDismiss, "Dismiss", el{"q": r.q.ID}), "destructive")
	d["associatedInputs"] = "None"
	return showCard("Dismiss…",
		runs(run(ask.Title, el{"weight": "bolder"}), run("\n"+ask.Text)),
		actionSet(d))
}

// formInputs are one item's inputs in the form: its options as a
// ChoiceSet (defaults picked), and a text input for free text.
func (r *cardRender) formInputs(i int) []el {
	q := r.q
	it := q.Questions[i]
	if it.OpenEnded() {
		return []el{r.textInput(i, inText+strconv.Itoa(i), "Your answer to "+itemName(it, i), it.ShowIf == nil)}
	}
	choices := make([]el, len(it.Options))
	var picked []string
	for j, o := range it.Options {
		choices[j] = el{"title": label(o.Label, domain.MaxLabelLen), "value": strconv.Itoa(j)}
		if o.Default {
			picked = append(picked, strconv.Itoa(j))
		}
	}
	cs := el{"type": "Input.ChoiceSet", "id": inChoice + strconv.Itoa(i), "style": "expanded", "wrap": true,
		"isMultiSelect": it.MultiSelect, "choices": choices, "label": label(itemName(it, i), 100)}
	if len(picked) > 0 {
		cs["value"] = strings.Join(picked, ",")
	}
	if v, ok := r.typed[inChoice+strconv.Itoa(i)]; ok {
		cs["value"] = v
	}
	out := []el{cs}
	if q.Kind == domain.KindApproval {
		// No free text on an approval; every asked item needs a choice.
		if it.ShowIf == nil {
			cs["isRequired"] = true
			cs["errorMessage"] = label("Pick an answer for "+itemName(it, i)+".", 200)
		}
		return out
	}
	own := "Or your own answer instead"
	if it.MultiSelect {
		own = "Your own answer, besides the ticked options (optional)"
	}
	return append(out, r.textInput(i, inOwn+strconv.Itoa(i), own, false))
}

// textInput is a free-text input for item i with its rules: a pattern the
// client checks as the bridge does, lengths, and the words saying what is
// expected. The bridge checks the text again.
func (r *cardRender) textInput(i int, id, lbl string, required bool) el {
	it := r.q.Questions[i]
	in := el{"type": "Input.Text", "id": id, "label": label(lbl, 200), "isMultiline": true,
		"maxLength": domain.MaxAnswerLen}
	note := id == inNote+r.sfx
	if note {
		in["maxLength"] = domain.MaxAnswerLen
	}
	if required {
		in["isRequired"] = true
		in["errorMessage"] = "Write something first, or close this."
	}
	if v := r.typed[id]; v != "" {
		in["value"] = v
	}
	rules := it.Other
	if rules == nil || r.q.Kind == domain.KindApproval || note {
		return in
	}
	hint := "Expected: " + rules.Describe()
	in["placeholder"] = label(hint, 200)
	in["errorMessage"] = label(hint, 500)
	if it.OpenEnded() {
		// An item with options also takes an option's label typed here,
		// which the rules need not match; the bridge decides then.
		if p := rules.HTMLPattern(); p != "" {
			in["regex"] = "^(?:" + p + ")$"
		}
		if rules.MaxLength > 0 {
			in["maxLength"] = min(rules.MaxLength, domain.MaxAnswerLen)
		}
	}
	return in
}

// showCard is a button that opens a small form under the row.
func showCard(title string, body ...el) el {
	return el{"type": "Action.ShowCard", "title": title, "card": el{"type": "AdaptiveCard", "body": body}}
}

// styled is a with its style ("positive", "destructive").
func styled(a el, style string) el {
	a["style"] = style
	return a
}

// actionControls are an action approval's controls beside Allow and Deny:
// "Edit…" where the route and the agent allow it, and "Always allow…"
// with the agent's suggestions. A gate decided by votes has neither.
func (r *cardRender) actionControls() []el {
	q := r.q
	if q.Action == nil || !approval.Is(q) || q.ApprovalsRequired > 1 {
		return nil
	}
	var out []el
	if domain.EditAllowed(q, r.v.NoEdit) {
		out = append(out, r.editCard())
	}
	if n := len(q.Action.Suggestions); n > 0 {
		var lines []el
		choices := make([]el, n)
		for j, s := range q.Action.Suggestions {
			sentence := actiontext.Describe(s).Sentence()
			if j > 0 {
				lines = append(lines, run("\n"))
			}
			lines = append(lines, run(fmt.Sprintf("%d. %s", j+1, sentence)))
			choices[j] = el{"title": label(fmt.Sprintf("%d. %s", j+1, sentence), 200), "value": strconv.Itoa(j)}
		}
		pick := el{"type": "Input.ChoiceSet", "id": inRule, "style": "compact", "choices": choices, "value": "0",
			"label": "Rule to add", "isRequired": true, "errorMessage": "Pick the rule to add."}
		out = append(out, showCard("Always allow…",
			runs(lines...), pick,
			actionSet(styled(execute(verbRule, "Allow, and don't ask again", r.data(el{})), "positive"))))
	}
	return out
}

// editCard is "Edit…": the command of a Bash action, or the arguments as
// JSON, prefilled, and "Allow edited". Arguments too long for a card are
// edited on the question page.
func (r *cardRender) editCard() el {
	q := r.q
	text, bash := actiontext.EditText(q.Action)
	lbl, hint := "Arguments (a JSON object)", "Change the arguments, then press Allow edited. The agent runs the action with your arguments; the audit keeps both versions."
	if bash {
		lbl, hint = "Command", "Change the command, then press Allow edited. The agent runs your command; the audit keeps both versions."
	}
	if len([]rune(text)) > r.l.edit {
		msg := fmt.Sprintf("These arguments are too long to edit in Teams (%d characters). ", len([]rune(text)))
		body := []el{runs(run(msg))}
		if u := pageURL(q, r.v); u != "" {
			body = append(body, actionSet(el{"type": "Action.OpenUrl", "title": "Edit on the question page", "url": u}))
		} else {
			body[0] = runs(run(msg + "Edit them in the web inbox, or with: askbridge questions answer " + q.ID + " --edit '<JSON>'"))
		}
		return showCard("Edit…", body...)
	}
	if v := r.typed[inEdit+r.sfx]; v != "" {
		text = v
	}
	in := el{"type": "Input.Text", "id": inEdit + r.sfx, "label": lbl, "isMultiline": true, "value": text,
		"isRequired": true, "errorMessage": "Write the " + strings.ToLower(lbl) + ", or close this."}
	return showCard("Edit…", runs(run(hint, el{"isSubtle": true})), in,
		actionSet(styled(execute(verbEdit, "Allow edited", r.data(el{})), "positive")))
}
