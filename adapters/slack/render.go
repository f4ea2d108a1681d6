package slack

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/approval"
	"github.com/askbridge/askbridge/domain"
	"github.com/slack-go/slack"
)

// Ids carried by interactive blocks. A block id is "ab|<question id>|<part>"
// and the action id names the control, so a click alone finds its question
// on any replica.
const (
	blockPrefix = "ab|"
	partSubmit  = "x"

	actOption  = "opt"    // opt:<item>:<option>  a single-select button
	actPick    = "pick"   // pick:<item>          radio buttons or checkboxes
	actOther   = "other"  // other:<item>         opens the free-text modal
	actAnswer  = "answer" // answer:<item>        opens the free-text modal (open-ended)
	actSubmit  = "submit"
	actDismiss = "dismiss"
	actFull    = "full" // full:<item>  shows the whole item in a modal
	// actFullContext shows the agent's whole context in a modal.
	actFullContext = "fullctx"

	modalCallback = "askbridge_answer"
	modalBlock    = "ab_text"
	modalAction   = "text"
)

func blockID(qid, part string) string { return blockPrefix + qid + "|" + part }

// parseBlockID returns the question id of one of our block ids.
func parseBlockID(id string) (qid, part string, ok bool) {
	rest, found := strings.CutPrefix(id, blockPrefix)
	if !found {
		return "", "", false
	}
	qid, part, found = strings.Cut(rest, "|")
	return qid, part, found && qid != ""
}

// action is a parsed action id.
type action struct {
	verb         string
	item, option int
}

func parseActionID(id string) (action, bool) {
	parts := strings.Split(id, ":")
	a := action{verb: parts[0], item: -1, option: -1}
	nums := make([]int, 0, 2)
	for _, p := range parts[1:] {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return action{}, false
		}
		nums = append(nums, n)
	}
	switch {
	case a.verb == actOption && len(nums) == 2:
		a.item, a.option = nums[0], nums[1]
	case (a.verb == actPick || a.verb == actOther || a.verb == actAnswer || a.verb == actFull || a.verb == actRule || a.verb == actFullAction) && len(nums) == 1:
		a.item = nums[0]
	case (a.verb == actSubmit || a.verb == actDismiss || a.verb == actFullContext || a.verb == actEdit) && len(nums) == 0:
	default:
		return action{}, false
	}
	return a, true
}

func plain(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, s, true, false)
}
func mrkdwn(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, s, false, false)
}

// hasSubmit reports whether answers are collected and sent with a Submit
// button (several items, or one multi-select item) rather than by one click.
func hasSubmit(q *domain.Question) bool {
	return len(q.Questions) > 1 || (len(q.Questions) == 1 && q.Questions[0].MultiSelect)
}

func itemName(it domain.Item) string {
	if it.Header != "" {
		return it.Header
	}
	return it.Question
}

func title(q *domain.Question) string {
	if q.Kind == domain.KindApproval {
		return "Approval needed"
	}
	if len(q.Questions) == 1 && q.Questions[0].Header != "" {
		return q.Questions[0].Header
	}
	return "Question from " + q.AgentLabel()
}

// fallback is the message's top-level text: notifications and clients that
// cannot show blocks.
func fallback(q *domain.Question) string {
	var b strings.Builder
	b.WriteString(q.AgentLabel() + " asks: ")
	for i, it := range q.Questions {
		if i > 0 {
			b.WriteString(" / ")
		}
		b.WriteString(it.Question)
	}
	return escClip(oneLine(b.String()), maxFallbackText)
}

// heading is the header block and the line naming agent, run and deadline,
// then the approval line and the context within l's limits.
func heading(q *domain.Question, now time.Time, pending bool, l layout) []slack.Block {
	blocks := []slack.Block{slack.NewHeaderBlock(plain(clip(oneLine(title(q)), maxHeaderText)))}
	meta := "*" + escClip(oneLine(q.AgentLabel()), 200) + "*"
	if q.RunID != "" {
		meta += " · run `" + escClip(strings.ReplaceAll(q.RunID, "`", "'"), 200) + "`"
	}
	if pending && !q.ExpiresAt.IsZero() {
		meta += fmt.Sprintf(" · expires in %s (<!date^%d^{date_short_pretty} {time}|%s>)",
			domain.HumanDuration(q.ExpiresAt.Sub(now)), q.ExpiresAt.Unix(), q.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC"))
	}
	blocks = append(blocks, slack.NewContextBlock("", mrkdwn(clip(meta, maxContextText))))
	if pending {
		if line := approvalLine(q); line != "" {
			blocks = append(blocks, slack.NewContextBlock("", mrkdwn(clip(line, l.approval))))
		}
		if line := remarkLines(q); line != "" {
			blocks = append(blocks, slack.NewContextBlock(blockID(q.ID, "rem"), mrkdwn(line)))
		}
	}
	if strings.TrimSpace(q.Context) != "" {
		text := l.whole.contextMD
		var more *slack.Accessory
		if l.context < l.whole.context {
			text = escClip(q.Context, l.context) // what markdown does with a text too long
			more = slack.NewAccessory(fullButton(actFullContext, "Show full context"))
		}
		blocks = append(blocks, slack.NewSectionBlock(mrkdwn(text), nil, more, slack.SectionBlockOptionBlockID(blockID(q.ID, "ctx"))))
	}
	if img := q.ContextImage; img != nil {
		blocks = append(blocks, slack.NewImageBlock(img.URL, clip(img.Alt, domain.MaxImageAltLen), blockID(q.ID, "ctximg"), nil))
	}
	return blocks
}

// mediaBlocks are item i's pictures: its image as an image block, and its
// options' images as thumbnails beside their labels. Slack loads them
// through its own proxy; the bridge never fetches them.
func mediaBlocks(q *domain.Question, i int) []slack.Block {
	it := q.Questions[i]
	var blocks []slack.Block
	if it.Image != nil {
		blocks = append(blocks, slack.NewImageBlock(it.Image.URL, clip(it.Image.Alt, domain.MaxImageAltLen), blockID(q.ID, "img"+strconv.Itoa(i)), nil))
	}
	var els []slack.MixedElement
	for j, o := range it.Options {
		if o.Image == nil || len(els) >= 8 {
			continue
		}
		els = append(els, slack.NewImageBlockElement(o.Image.URL, clip(o.Image.Alt, domain.MaxImageAltLen)),
			mrkdwn(fmt.Sprintf("*%d.* %s", j+1, escClip(oneLine(o.Label), 200))))
	}
	if len(els) > 0 {
		blocks = append(blocks, slack.NewContextBlock(blockID(q.ID, "oimg"+strconv.Itoa(i)), els...))
	}
	return blocks
}

// initialOptions are the option objects among opts that picked names.
func initialOptions(it domain.Item, opts []*slack.OptionBlockObject, picked []string) []*slack.OptionBlockObject {
	var out []*slack.OptionBlockObject
	for j, o := range it.Options {
		for _, p := range picked {
			if m, ok := domain.MatchOption(it, p); ok && m.Label == o.Label {
				out = append(out, opts[j])
				break
			}
		}
	}
	return out
}

// approvalLine says, on a pending copy, how many approvals the question
// needs and how the votes stand ("Approve: 1 of 2 approvals — alice"), and
// who may answer (including people added by escalation). Names are plain
// text: an edited copy must not notify anyone; reminders do that.
func approvalLine(q *domain.Question) string {
	var parts []string
	if q.ApprovalsRequired > 1 {
		line := fmt.Sprintf("*Needs %d approvals* from different people", q.ApprovalsRequired)
		if tally := domain.TallyLine(q); tally != "" {
			line += " · " + escape(tally)
		} else {
			line += " · no votes yet"
		}
		parts = append(parts, line)
	}
	if !q.Responders.Empty() {
		who := domain.DescribeResponders(q.Responders)
		if q.Responders.ExcludeRequester && q.RequestedBy != "" {
			who += " (not " + q.RequestedBy + ", who asked for it)"
		}
		parts = append(parts, "Who may answer: "+escape(who))
	}
	return strings.Join(parts, "\n")
}

// itemText is the item's question, numbered when there are several; the
// question's text takes at most max units.
func itemText(q *domain.Question, i int, max int) string {
	it := q.Questions[i]
	var b strings.Builder
	if len(q.Questions) > 1 {
		fmt.Fprintf(&b, "*%d. ", i+1)
		if it.Header != "" {
			b.WriteString(escClip(oneLine(it.Header), 100) + "* — ")
		} else {
			b.WriteString("* ")
		}
		b.WriteString(escClip(it.Question, max))
		return b.String()
	}
	return "*" + escClip(it.Question, max) + "*"
}

// optionList shows every option with its number, description and whether
// the agent recommends it, in at most limit units; the controls can only
// show 75 characters.
func optionList(it domain.Item, limit int) string {
	var lines []string
	budget := (limit - 100) / max(len(it.Options), 1)
	for j, o := range it.Options {
		line := fmt.Sprintf("*%d.* %s", j+1, escClip(oneLine(o.Label), budget/3))
		if o.Recommended {
			line += " _(recommended)_"
		}
		if o.Default {
			line += " _(default)_"
		}
		if o.Description != "" {
			line += " — " + escClip(oneLine(o.Description), budget*2/3-30)
		}
		lines = append(lines, line)
	}
	return clip(strings.Join(lines, "\n"), limit)
}

// denyNoteLabel is the approval's "Deny with note…" button: it opens a
// modal whose text is recorded as a denial (adapters/internal/approval).
const denyNoteLabel = "Deny with note…"

func dismissButton() *slack.ButtonBlockElement {
	b := slack.NewButtonBlockElement(actDismiss, "dismiss", plain("Dismiss"))
	b.Style = slack.StyleDanger
	ask := words.DismissConfirm() // the web inbox's Dismiss… form says the same
	b.Confirm = slack.NewConfirmationBlockObject(plain(ask.Title), plain(ask.Text), plain("Dismiss"), plain("Keep it"))
	b.Confirm.Style = slack.StyleDanger
	return b
}

func optionObjects(it domain.Item) []*slack.OptionBlockObject {
	opts := make([]*slack.OptionBlockObject, len(it.Options))
	for j, o := range it.Options {
		var desc *slack.TextBlockObject
		if o.Description != "" {
			desc = plain(clip(oneLine(o.Description), maxOptionDesc))
		}
		label := oneLine(o.Label)
		if o.Recommended {
			label = clip(label, maxOptionText-2) + " ★"
		}
		opts[j] = slack.NewOptionBlockObject(strconv.Itoa(j), plain(clip(label, maxOptionText)), desc)
	}
	return opts
}

// renderQuestion builds the blocks and fallback text of a pending question,
// within Slack's total text limit (see fit).
func renderQuestion(q *domain.Question, now time.Time) ([]slack.Block, string) {
	return renderQuestionX(q, now, extras{})
}

// renderQuestionX is renderQuestion with what an action approval needs
// (see action.go): the action gets what the question's text leaves of the
// budget, and at least minActionBudget.
func renderQuestionX(q *domain.Question, now time.Time, x extras) ([]slack.Block, string) {
	if q.Action == nil {
		return fit(q, false, func(l layout) []slack.Block { return questionBlocks(q, now, l, x, nil) }), fallback(q)
	}
	ab := withAction(q, false, func(ab []slack.Block, limit int) []slack.Block {
		return fitWithin(q, false, limit, func(l layout) []slack.Block { return questionBlocks(q, now, l, x, ab) })
	}, x)
	return ab, fallback(q)
}

// withAction renders a message with q's action: first without it, to see
// what the rest needs, then with the action in what is left.
func withAction(q *domain.Question, final bool, render func(ab []slack.Block, limit int) []slack.Block, x extras) []slack.Block {
	rest := blocksText(render(nil, maxBlocksText))
	budget := max(maxBlocksText-rest, minActionBudget)
	ab := actionBlocks(q, budget, x)
	// The whole message, action included, is fitted: the question's texts
	// give way to the action where they must.
	return render(ab, maxBlocksText)
}

func questionBlocks(q *domain.Question, now time.Time, l layout, x extras, ab []slack.Block) []slack.Block {
	blocks := heading(q, now, true, l)
	if h := domain.HistoryText(q.History, now); h != "" {
		blocks = append(blocks, slack.NewContextBlock(blockID(q.ID, "hist"), mrkdwn(escClip("🕘 "+h, 1000))))
	}
	single := len(q.Questions) == 1
	edit, rules := actionControls(q, x)
	choices := x.choices
	if choices == nil {
		choices = domain.DefaultChoices(q.Questions)
	}
	shown := domain.Shown(q.Questions, choices)
	for i, it := range q.Questions {
		if !shown[i] {
			continue // asked once its condition is met: the message is updated then
		}
		blocks = append(blocks, itemBlocks(q, i, l)...)
		blocks = append(blocks, mediaBlocks(q, i)...)
		blocks = append(blocks, ab...)
		part := strconv.Itoa(i)
		var elems []slack.BlockElement
		switch {
		case it.OpenEnded():
			label := "Answer…"
			if !single {
				label = "Write answer…"
			}
			b := slack.NewButtonBlockElement(fmt.Sprintf("%s:%d", actAnswer, i), "answer", plain(label))
			b.Style = slack.StylePrimary
			elems = append(elems, b)
		case single && !it.MultiSelect:
			tones := approval.Tones(q)
			for j, o := range it.Options {
				b := slack.NewButtonBlockElement(fmt.Sprintf("%s:%d:%d", actOption, i, j), strconv.Itoa(j),
					plain(clip(oneLine(o.Label), maxButtonText)))
				switch {
				case tones != nil:
					// Approvals: Allow and Deny never look alike.
					b.Style = map[approval.Tone]slack.Style{approval.Allow: slack.StylePrimary, approval.Deny: slack.StyleDanger}[tones[j]]
				case o.Recommended:
					b.Style = slack.StylePrimary
				}
				if o.Default { // buttons cannot be pre-selected: the default is named
					b.Text = plain(clip(oneLine(o.Label), maxButtonText-10) + " (default)")
				}
				elems = append(elems, b)
			}
			if edit != nil {
				elems = append(elems, edit)
			}
		case it.MultiSelect:
			opts := optionObjects(it)
			cb := slack.NewCheckboxGroupsBlockElement(fmt.Sprintf("%s:%d", actPick, i), opts...)
			cb.InitialOptions = initialOptions(it, opts, choices[i])
			elems = append(elems, cb)
		default:
			opts := optionObjects(it)
			rb := slack.NewRadioButtonsBlockElement(fmt.Sprintf("%s:%d", actPick, i), opts...)
			if init := initialOptions(it, opts, choices[i]); len(init) > 0 {
				rb.InitialOption = init[0]
			}
			elems = append(elems, rb)
		}
		switch {
		case approval.NoteAllowed(q):
			// An approval has no "Other": free text never decides.
			// Denying with a note is its own, explicit action.
			elems = append(elems, slack.NewButtonBlockElement(fmt.Sprintf("%s:%d", actOther, i), "deny-note", plain(denyNoteLabel)))
		case q.Kind == domain.KindApproval:
		case !it.OpenEnded():
			elems = append(elems, slack.NewButtonBlockElement(fmt.Sprintf("%s:%d", actOther, i), "other", plain("Other…")))
		}
		if single && !hasSubmit(q) {
			elems = append(elems, dismissButton())
		}
		blocks = append(blocks, slack.NewActionBlock(blockID(q.ID, part), elems...))
		if it.Other != nil && q.Kind != domain.KindApproval {
			blocks = append(blocks, slack.NewContextBlock(blockID(q.ID, "r"+part), mrkdwn(escClip("Your own answer: "+it.Other.Describe(), 1000))))
		}
		blocks = append(blocks, rules...)
	}
	if hasSubmit(q) {
		submit := slack.NewButtonBlockElement(actSubmit, "submit", plain("Submit"))
		submit.Style = slack.StylePrimary
		blocks = append(blocks, slack.NewActionBlock(blockID(q.ID, partSubmit), submit, dismissButton()))
	}
	return blocks
}

// outcome is the one line a finished copy shows.
func outcome(q *domain.Question) string { return outcomeWithin(q, maxSectionText-300) }

// outcomeWithin is outcome with the answers shortened to max units.
func outcomeWithin(q *domain.Question, max int) string {
	switch q.Status {
	case domain.StatusAnswered:
		if q.Defaulted { // "No answer in time; answered by default: Deny"
			return ":hourglass: " + escClip(domain.OutcomeLine(q), max)
		}
		if q.ApprovalsRequired > 1 { // "Approved by alice, bob: Approve"
			return ":white_check_mark: " + escClip(domain.OutcomeLine(q), max)
		}
		if line := decisionLine(q, max); line != "" { // "Allowed with edits by <@U1>: …"
			return line
		}
		if verb, note, ok := approval.Verdict(q); ok { // "Denied with a note by <@U1>: …"
			icon := ":white_check_mark: "
			if verb != "Allowed" {
				icon = ":no_entry: "
			}
			line := icon + verb + " by " + personRef(q.RespondedBy)
			if note != "" {
				line += ": " + escClip(note, maxSectionText-300)
			}
			return line
		}
		var parts []string
		for _, it := range q.Questions {
			ans := q.Answers[it.Question]
			if len(q.Questions) > 1 {
				ans = itemName(it) + ": " + ans
			}
			parts = append(parts, ans)
		}
		return ":white_check_mark: Answered by " + personRef(q.RespondedBy) + ": " +
			escClip(strings.Join(parts, "; "), max)
	case domain.StatusExpired:
		return ":hourglass: Expired without an answer; the agent carries on without one."
	case domain.StatusCancelled:
		note := escClip(domain.NoteSuffix(q), 2*domain.MaxCancelNote)
		switch q.CancelReason {
		case domain.CancelUser:
			return ":no_entry_sign: Dismissed by " + personRef(q.RespondedBy) + note + "."
		case domain.CancelSuperseded:
			return ":arrows_counterclockwise: Replaced by a newer question from this run."
		default:
			return ":no_entry_sign: Withdrawn by the agent" + note + "."
		}
	}
	return "Status: " + string(q.Status)
}

// personRef names who acted: a Slack user as a mention (an edited message
// notifies nobody), anyone else by name.
func personRef(p *domain.Person) string {
	switch {
	case p == nil:
		return "someone"
	case p.Platform == "slack" && slackID(p.ID):
		return "<@" + p.ID + ">"
	}
	return "*" + escClip(oneLine(p.String()), 200) + "*"
}

// renderFinalX builds the blocks of a finished copy: the question without
// controls, and the outcome, within Slack's total text limit (see fit).
//
// An action approval keeps showing its action: it is what was decided.
func renderFinalX(q *domain.Question, x extras) ([]slack.Block, string) {
	render := func(ab []slack.Block, limit int) []slack.Block {
		return fitWithin(q, true, limit, func(l layout) []slack.Block {
			blocks := heading(q, time.Time{}, false, l)
			for i := range q.Questions {
				blocks = append(blocks, itemBlocks(q, i, l)...)
				blocks = append(blocks, ab...)
			}
			return append(blocks, slack.NewSectionBlock(mrkdwn(clip(outcomeWithin(q, l.outcome), maxSectionText)), nil, nil))
		})
	}
	var blocks []slack.Block
	if q.Action == nil {
		blocks = render(nil, maxBlocksText)
	} else {
		blocks = withAction(q, true, render, x)
	}
	return blocks, clip(escClip(oneLine(title(q)), maxHeaderText)+" — "+outcome(q), maxFallbackText)
}

// modalMeta travels in a modal's private_metadata: a modal has no channel.
type modalMeta struct {
	QuestionID string `json:"q"`
	Item       int    `json:"i"`
	Channel    string `json:"c,omitempty"`
	ThreadTS   string `json:"t,omitempty"`
	Draft      bool   `json:"d,omitempty"` // keep the text until Submit
	// The edit modal of an action approval: the digest of the action the
	// person saw, and whether the text is a Bash command (else JSON).
	Digest string `json:"g,omitempty"`
	Bash   bool   `json:"b,omitempty"`
	// Message is the ts of the batch message "Deny all with note…" was
	// pressed on.
	Message string `json:"m,omitempty"`
}

// renderModal builds the free-text modal of an item.
func renderModal(q *domain.Question, item int, meta string, draft bool) slack.ModalViewRequest {
	it := q.Questions[item]
	label := "Your answer"
	if !it.OpenEnded() {
		label = "Your own answer (instead of the options)"
		if it.MultiSelect {
			label = "Your own answer (added to the ticked options)"
		}
	}
	input := slack.NewPlainTextInputBlockElement(plain(clip("Type your answer", maxPlaceholder)), modalAction)
	input.Multiline = true
	input.MaxLength = maxInputLength
	input.FocusOnLoad = true
	var hint *slack.TextBlockObject
	if r := it.Other; r != nil && q.Kind != domain.KindApproval {
		hint = plain(clip("Expected: "+r.Describe(), 2000))
		if it.OpenEnded() { // an item with options also takes a label typed here
			if r.MaxLength > 0 {
				input.MaxLength = min(r.MaxLength, maxInputLength)
			}
			input.MinLength = min(r.MinLength, maxInputLength)
		}
	}
	blocks := []slack.Block{
		slack.NewSectionBlock(mrkdwn(itemText(&domain.Question{Questions: []domain.Item{it}}, 0, maxSectionText-200)), nil, nil),
		slack.NewInputBlock(modalBlock, plain(clip(label, maxInputLabel)), hint, input),
	}
	submit := "Send"
	if draft {
		submit = "Save"
	}
	modalTitle := "Answer"
	if it.Header != "" {
		modalTitle = it.Header
	}
	if approval.NoteAllowed(q) {
		blocks[1] = slack.NewInputBlock(modalBlock, plain("Why are you denying it? The agent reads this note."), nil, input)
		modalTitle, submit = "Deny with note", "Deny"
	}
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           plain(clip(oneLine(modalTitle), maxModalTitle)),
		Submit:          plain(submit),
		Close:           plain("Cancel"),
		Blocks:          slack.Blocks{BlockSet: blocks},
		PrivateMetadata: meta,
		CallbackID:      modalCallback,
	}
}

// remarkLines are a pending copy's remarks (its page acknowledged, …), one
// line each, escaped: their words (a pager user's name) come from outside.
func remarkLines(q *domain.Question) string {
	var lines []string
	for _, r := range q.Remarks {
		lines = append(lines, "📟 "+escClip(r.Text, maxContextText/domain.MaxRemarks-4)) // all of them fit, escaped
	}
	return clip(strings.Join(lines, "\n"), maxContextText)
}
