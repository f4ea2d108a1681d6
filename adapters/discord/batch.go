package discord

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/askbridge/askbridge/adapters/internal/actiontext"
	"github.com/askbridge/askbridge/adapters/internal/approval"
	"github.com/askbridge/askbridge/domain"
	"github.com/bwmarrin/discordgo"
)

// A batch of approvals (lifecycle.BatchChannel) is one message: an embed
// with a section per call — its question, its action as a single approval
// shows it, its outcome once decided — and a row of buttons per pending
// call (Allow, Deny, Deny with note…, Edit… where allowed), then a row
// with Allow all N / Deny all N / Deny all with note…. Discord takes 5
// rows of buttons and 6,000 characters of embed: a batch with more than 4
// calls waiting gets no per-call buttons, and one whose actions do not fit
// shows a line per call; either way the message says so and links the
// batch's page of the web inbox, where each call is decided on its own.

// Controls of a batch's message: "ab:<action>:<batch id>:<calls shown>".
const (
	actAllowAll    = "A"
	actDenyAll     = "D"
	actDenyAllNote = "N" // opens the "Deny all with note" modal
	actBatchModal  = "M" // its submit

	// maxCallRows is how many calls get a row of their own: one row is
	// the batch's.
	maxCallRows = maxRows - 1
	// minCallText is the least a call's section gets with its whole
	// action; below it every call is one line.
	minCallText = 250
	// minLine is the least a call's line gets when every call is one line.
	minLine = 60
)

// isBatchAction reports whether kind is a control of a batch's row.
func isBatchAction(kind string) bool {
	switch kind {
	case actAllowAll, actDenyAll, actDenyAllNote, actBatchModal:
		return true
	}
	return false
}

// batchPage says where each call of b is decided on its own: the batch's
// page of the web inbox.
func batchPage(b *domain.Batch, o renderOpts) string {
	if o.PublicURL != "" {
		return strings.TrimRight(o.PublicURL, "/") + "/batches/" + url.PathEscape(b.ID)
	}
	return "the web inbox (/batches/" + b.ID + ")"
}

// renderBatch draws a batch's message as it should look now.
func (a *Adapter) renderBatch(b *domain.Batch) message {
	now := a.now()
	n := len(b.Questions)
	var pending []*domain.Question
	for _, q := range b.Questions {
		if q.Status == domain.StatusPending {
			pending = append(pending, q)
		}
	}
	o := a.opts(b.Questions[0])
	e := &discordgo.MessageEmbed{Type: discordgo.EmbedTypeRich, Color: colourPending}
	if len(pending) == 0 {
		e.Color = colourAnswered
	}
	q0 := b.Questions[0]
	e.Title = domain.Shorten(fmt.Sprintf("%d approvals requested by %s", n, q0.AgentLabel()), maxEmbedTitle)
	foot := []string{fmt.Sprintf("%d of %d decided", n-len(pending), n)}
	if q0.RunID != "" {
		foot = append(foot, "run "+q0.RunID)
	}
	if len(pending) > 0 {
		foot = append(foot, domain.ExpiresPhrase(pending[0], now))
	}
	e.Footer = &discordgo.MessageEmbedFooter{Text: domain.Shorten(strings.Join(foot, " · "), maxEmbedFooter)}

	var notes []string
	if len(pending) > maxCallRows {
		notes = append(notes, fmt.Sprintf("⚠️ %d calls are waiting: more than Discord's rows of buttons hold. Decide each call on %s, or all at once below.", len(pending), batchPage(b, o)))
	}
	room := min(maxEmbedDesc, maxEmbedTotal-utf8.RuneCountInString(e.Title)-utf8.RuneCountInString(e.Footer.Text)) - 400
	per := room/n - 4
	var sections []string
	if per >= minCallText {
		for i, q := range b.Questions {
			sections = append(sections, a.callSection(q.WithLinksShown(), i, per, o))
		}
	} else {
		if len(notes) == 0 {
			notes = append(notes, fmt.Sprintf("⚠️ %d calls are more than one Discord message shows in full. Read and decide each on %s, or all at once below.", n, batchPage(b, o)))
		}
		calls := b.Questions
		if per < minLine { // thousands of calls: as many lines as fit, then how many more
			calls, per = calls[:max(room/(minLine+4)-1, 1)], minLine
		}
		for i, q := range calls {
			sections = append(sections, callLine(q.WithLinksShown(), i, per))
		}
		if more := n - len(calls); more > 0 {
			sections = append(sections, fmt.Sprintf("*…and %d more calls: every one is on the batch's page.*", more))
		}
	}
	e.Description = domain.Shorten(strings.Join(append(notes, sections...), "\n\n"), maxEmbedDesc)
	m := message{Embeds: []*discordgo.MessageEmbed{e}, Components: []discordgo.MessageComponent{}}
	if len(pending) == 0 {
		m.Content = fmt.Sprintf("✅ Every call of this batch is decided (%d).", n)
		return m
	}
	if len(pending) <= maxCallRows {
		for _, q := range b.Questions {
			if q.Status == domain.StatusPending {
				if row := callRow(q, b.Questions, o); len(row) > 0 {
					m.Components = append(m.Components, discordgo.ActionsRow{Components: row})
				}
			}
		}
	}
	shown := min(n, 99)
	m.Components = append(m.Components, discordgo.ActionsRow{Components: []discordgo.MessageComponent{
		discordgo.Button{Label: fmt.Sprintf("Allow all %d", len(pending)), Style: discordgo.SuccessButton, CustomID: customID(actAllowAll, b.ID, shown)},
		discordgo.Button{Label: fmt.Sprintf("Deny all %d", len(pending)), Style: discordgo.DangerButton, CustomID: customID(actDenyAll, b.ID, shown)},
		discordgo.Button{Label: "Deny all with note…", Style: discordgo.SecondaryButton, CustomID: customID(actDenyAllNote, b.ID, shown)},
	}})
	return m
}

// callNumber is the number a call has on its batch's message.
func callNumber(q *domain.Question, calls []*domain.Question) int {
	for i, c := range calls {
		if c.ID == q.ID {
			return i + 1
		}
	}
	return 0
}

// callSection is call i in at most budget runes: its question, its action
// as its single-call copy shows it, and its outcome once decided.
func (a *Adapter) callSection(q *domain.Question, i, budget int, o renderOpts) string {
	head := fmt.Sprintf("**%d.** %s", i+1, domain.Shorten(q.Questions[0].Question, 300))
	state := ""
	if q.Status != domain.StatusPending {
		state = "\n" + domain.Shorten(callOutcome(q, o), 300)
	}
	body := ""
	if q.Action != nil {
		body = "\n" + actionText(q, a.opts(q), budget-utf8.RuneCountInString(head+state)-1)
	}
	return head + body + state
}

// callLine is call i in one line of at most budget runes.
func callLine(q *domain.Question, i, budget int) string {
	what := q.Questions[0].Question
	if q.Action != nil {
		if args, _ := actiontext.Arguments(q.Action); args != "" {
			what = q.Action.Tool + ": " + args
		}
	}
	state := "waiting"
	if q.Status != domain.StatusPending {
		state = domain.Shorten(callOutcome(q, renderOpts{}), 120)
	}
	room := max(budget-utf8.RuneCountInString(state)-12, 20)
	return fmt.Sprintf("**%d.** `%s` — %s", i+1, strings.ReplaceAll(domain.Shorten(strings.Join(strings.Fields(what), " "), room), "`", "'"), state)
}

// callOutcome is the line a decided call shows, as its single-call copy's.
func callOutcome(q *domain.Question, o renderOpts) string {
	if l, ok := actionOutcome(q, o); ok {
		return l
	}
	icon := "⏹️"
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
	return icon + " " + line
}

// callRow is a pending call's buttons, numbered as its section: its
// options by tone, Deny with note…, and Edit… where its route allows it.
func callRow(q *domain.Question, calls []*domain.Question, o renderOpts) []discordgo.MessageComponent {
	if shapeOf(q) != shapeSingleButtons {
		if shapeOf(q) == shapeSingleText {
			return []discordgo.MessageComponent{discordgo.Button{Label: fmt.Sprintf("Answer #%d…", callNumber(q, calls)), Style: discordgo.PrimaryButton, CustomID: customID(actText, q.ID, 0)}}
		}
		return nil
	}
	n := callNumber(q, calls)
	it := q.Questions[0]
	tones := approval.Tones(q)
	var row []discordgo.MessageComponent
	for j, opt := range it.Options {
		if len(row) == maxButtonsPerRow-2 {
			break
		}
		style := discordgo.SecondaryButton
		if tones != nil && tones[j] == approval.Allow {
			style = discordgo.SuccessButton
		} else if tones != nil && tones[j] == approval.Deny {
			style = discordgo.DangerButton
		}
		row = append(row, discordgo.Button{Label: domain.Shorten(fmt.Sprintf("%s #%d", opt.Label, n), maxButtonLabel), Style: style, CustomID: customID(actOption, q.ID, 0, j)})
	}
	if approval.NoteAllowed(q) {
		row = append(row, discordgo.Button{Label: fmt.Sprintf("Deny #%d with note…", n), Style: discordgo.SecondaryButton, CustomID: customID(actOther, q.ID, 0)})
	}
	if canEdit(q, o) {
		row = append(row, discordgo.Button{Label: fmt.Sprintf("Edit #%d…", n), Style: discordgo.PrimaryButton, CustomID: customID(actEdit, q.ID, 0)})
	}
	return row
}

// batchNoteModal is the "Deny all with note" modal.
func batchNoteModal(batchID string, shown int) *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseModal,
		Data: &discordgo.InteractionResponseData{
			CustomID: customID(actBatchModal, batchID, shown),
			Title:    "Deny all with note",
			Components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
				discordgo.TextInput{CustomID: textInputID, Label: "Why are you denying them?",
					Style: discordgo.TextInputParagraph, Placeholder: "The agent reads this note for every call; they are denied.", Required: true,
					MinLength: 1, MaxLength: min(domain.MaxAnswerLen, maxTextInputLength)},
			}}},
		},
	}
}
