package discord

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/askbridge/askbridge/adapters/internal/approval"
	"github.com/askbridge/askbridge/domain"
	"github.com/bwmarrin/discordgo"
)

// Discord limits for classic components and embeds.
// https://discord.com/developers/docs/components/reference
// https://discord.com/developers/docs/resources/message#embed-object-embed-limits
const (
	maxRows            = 5
	maxButtonsPerRow   = 5
	maxCustomID        = 100
	maxButtonLabel     = 80
	maxSelectOptions   = 25
	maxSelectText      = 100 // option label, value, description; placeholder 150
	maxPlaceholder     = 150
	maxContent         = 2000
	maxEmbedTitle      = 256
	maxEmbedDesc       = 4096
	maxEmbedFields     = 25
	maxFieldName       = 256
	maxFieldValue      = 1024
	maxEmbedFooter     = 2048
	maxEmbedTotal      = 6000
	maxModalTitle      = 45
	maxTextInputLabel  = 45
	maxTextInputLength = 4000
	maxThreadName      = 100
)

// Embed colours: pending, answered, closed without an answer.
const (
	colourPending  = 0x5865F2
	colourAnswered = 0x57F287
	colourClosed   = 0x99AAB5
)

// Actions carried in custom_id: "ab:<action>:<question id>[:<item>[:<option>]]".
const (
	idPrefix    = "ab"
	actOption   = "o" // button of a single-select option: answers (one item) or drafts
	actSelect   = "s" // string select of an item: drafts
	actOther    = "x" // "Other…": opens a modal
	actText     = "a" // "Answer…" of an open-ended item: opens a modal
	actSubmit   = "u" // Submit of a question with drafts
	actDismiss  = "d" // Dismiss
	actModal    = "m" // modal submit
	actEdit     = "e" // "Edit…" of an approval's action: opens the edit modal
	actEditSave = "n" // edit modal submit: "ab:n:<question id>:<digest prefix>"
	actRule     = "r" // "Allow, and don't ask again …": allows with suggestion <option>
	otherValue  = "other"
	textInputID = "text"
)

// action is a parsed custom_id.
type action struct {
	Kind       string
	QuestionID string
	Item       int // -1 when absent
	Option     int // -1 when absent
	// Digest is the start of the action digest (hex) an edit modal was
	// opened on.
	Digest string
}

// digestPrefix is how much of an action's digest an edit modal carries in
// its custom_id: enough to tell the action the person edited.
const digestPrefix = 16

func editSaveID(q *domain.Question) string {
	return idPrefix + ":" + actEditSave + ":" + q.ID + ":" + shortDigest(q.Action.Digest)
}

func shortDigest(d string) string {
	d = strings.TrimPrefix(d, "sha256:")
	return d[:min(len(d), digestPrefix)]
}

func customID(kind, qid string, nums ...int) string {
	var b strings.Builder
	b.WriteString(idPrefix + ":" + kind + ":" + qid)
	for _, n := range nums {
		b.WriteString(":" + strconv.Itoa(n))
	}
	return b.String()
}

// parseCustomID reads a custom_id this adapter wrote. ok is false for
// anything else (another bot's components, garbage).
func parseCustomID(s string) (action, bool) {
	if len(s) > maxCustomID {
		return action{}, false
	}
	parts := strings.Split(s, ":")
	if len(parts) < 3 || len(parts) > 5 || parts[0] != idPrefix || parts[2] == "" {
		return action{}, false
	}
	a := action{Kind: parts[1], QuestionID: parts[2], Item: -1, Option: -1}
	if a.Kind == actEditSave {
		if len(parts) != 4 || len(parts[3]) != digestPrefix || strings.Trim(parts[3], "0123456789abcdef") != "" {
			return action{}, false
		}
		a.Digest = parts[3]
		return a, true
	}
	nums := []*int{&a.Item, &a.Option}
	for i, p := range parts[3:] {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n >= 100 {
			return action{}, false
		}
		*nums[i] = n
	}
	switch a.Kind {
	case actOption, actRule:
		return a, a.Item >= 0 && a.Option >= 0
	case actSelect, actOther, actText, actModal, actEdit, actAllowAll, actDenyAll, actDenyAllNote, actBatchModal:
		return a, a.Item >= 0 && a.Option < 0
	case actSubmit, actDismiss:
		return a, a.Item < 0
	}
	return action{}, false
}

// shape tells how a question is rendered.
type shape int

const (
	shapeSingleButtons shape = iota // one single-select item: a button per option
	shapeSingleMulti                // one multi-select item: a string select + Submit
	shapeSingleText                 // one open-ended item: "Answer…"
	shapeItems                      // 2–4 items: one control per item + Submit
)

func shapeOf(q *domain.Question) shape {
	if len(q.Questions) != 1 {
		return shapeItems
	}
	it := q.Questions[0]
	switch {
	case it.OpenEnded():
		return shapeSingleText
	case it.MultiSelect:
		return shapeSingleMulti
	}
	return shapeSingleButtons
}

// usesDrafts reports whether selections wait for Submit.
func usesDrafts(q *domain.Question) bool {
	s := shapeOf(q)
	return s == shapeSingleMulti || s == shapeItems
}

// message is what a copy shows: the same for Post, Finish and the type 7
// update of the clicked copy.
type message struct {
	Content    string
	Embeds     []*discordgo.MessageEmbed
	Components []discordgo.MessageComponent
}

// noMentions allows no mention at all: agent text may contain @everyone.
func noMentions() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}
}

// render draws q as it should look now: pending with live controls, or
// final with the outcome line and disabled controls.
func render(q *domain.Question, now time.Time, o renderOpts) message {
	// Discord renders Markdown: a masked link in agent text would show only
	// its words, which can imitate the bridge's own address.
	q = q.WithLinksShown()
	final := q.Status.Final()
	comps, shownRules := renderComponents(q, final, o)
	m := message{Embeds: []*discordgo.MessageEmbed{renderEmbed(q, now, o, shownRules)}}
	if final {
		icon := "⏹️"
		if q.Status == domain.StatusAnswered {
			icon = "✅"
		}
		line := domain.OutcomeLine(q)
		if verb, note, ok := approval.Verdict(q); ok && q.RespondedBy != nil { // "⛔ Denied with a note by alice: …"
			if verb != "Allowed" {
				icon = "⛔"
			}
			line = verb + " by " + q.RespondedBy.String()
			if note != "" {
				line += ": " + note
			}
		}
		m.Content = domain.Shorten(icon+" "+line, maxContent)
		if l, ok := actionOutcome(q, o); ok {
			m.Content = l
		}
	}
	m.Components = comps
	return m
}

func renderEmbed(q *domain.Question, now time.Time, o renderOpts, shownRules int) *discordgo.MessageEmbed {
	e := &discordgo.MessageEmbed{Type: discordgo.EmbedTypeRich, Color: colourPending}
	switch q.Status {
	case domain.StatusAnswered:
		e.Color = colourAnswered
	case domain.StatusCancelled, domain.StatusExpired:
		e.Color = colourClosed
	}
	title := "Question from " + q.AgentLabel()
	if q.Kind == domain.KindApproval {
		title = "Approval requested by " + q.AgentLabel()
	}
	if len(q.Questions) == 1 && q.Questions[0].Header != "" {
		title = q.Questions[0].Header + " · " + title
	}
	e.Title = domain.Shorten(title, maxEmbedTitle)

	var foot []string
	if q.AgentID != "" {
		foot = append(foot, "Agent "+q.AgentID)
	}
	if q.RunID != "" {
		foot = append(foot, "run "+q.RunID)
	}
	if q.Status == domain.StatusPending {
		foot = append(foot, domain.ExpiresPhrase(q, now))
		e.Timestamp = q.ExpiresAt.UTC().Format(time.RFC3339)
	}
	e.Footer = &discordgo.MessageEmbedFooter{Text: domain.Shorten(strings.Join(foot, " · "), maxEmbedFooter)}

	var body string
	if len(q.Questions) == 1 {
		body = itemText(q.Questions[0], 2000, 200)
	} else {
		for i, it := range q.Questions {
			name := it.Header
			if name == "" {
				name = fmt.Sprintf("Question %d", i+1)
			}
			value := itemText(it, 500, 90)
			if c := domain.ConditionText(q.Questions, it.ShowIf); c != "" {
				value = "*(" + c + ")*\n" + value
			}
			e.Fields = append(e.Fields, &discordgo.MessageEmbedField{
				Name:  domain.Shorten(fmt.Sprintf("%d. %s", i+1, name), maxFieldName),
				Value: domain.Shorten(value, maxFieldValue),
			})
		}
	}
	if q.Status == domain.StatusPending {
		e.Fields = append(e.Fields, pendingFields(q)...)
		if len(q.Remarks) > 0 {
			var lines []string
			for _, r := range q.Remarks {
				lines = append(lines, "📟 "+domain.Shorten(escapeMarkdown(r.Text), maxFieldValue/domain.MaxRemarks-4))
			}
			e.Fields = append(e.Fields, &discordgo.MessageEmbedField{Name: "Meanwhile",
				Value: domain.Shorten(strings.Join(lines, "\n"), maxFieldValue)})
		}
		if h := domain.HistoryText(q.History, now); h != "" {
			e.Fields = append(e.Fields, &discordgo.MessageEmbedField{Name: "Earlier answers", Value: domain.Shorten(h, maxFieldValue)})
		}
	}
	// Pictures: the context's (else the first item's) as the embed image,
	// an item's as the thumbnail. Discord's media proxy loads them.
	var pics []*domain.Image
	if q.ContextImage != nil {
		pics = append(pics, q.ContextImage)
	}
	for _, it := range q.Questions {
		if it.Image != nil {
			pics = append(pics, it.Image)
		}
	}
	if len(pics) > 0 {
		e.Image = &discordgo.MessageEmbedImage{URL: pics[0].URL}
	}
	if len(pics) > 1 {
		e.Thumbnail = &discordgo.MessageEmbedThumbnail{URL: pics[1].URL}
	}
	// The context gets whatever room the rest leaves, within the limits.
	used := utf8.RuneCountInString(e.Title) + utf8.RuneCountInString(e.Footer.Text)
	for _, f := range e.Fields {
		used += utf8.RuneCountInString(f.Name) + utf8.RuneCountInString(f.Value)
	}
	room := min(maxEmbedDesc, maxEmbedTotal-used)
	if q.Action != nil && len(q.Questions) == 1 {
		// The action comes whole or explicitly cut, before the context.
		body = domain.Shorten(body, min(room/4, 1000))
		body += rulesNote(q, o, shownRules)
		body += "\n\n" + actionText(q, o, room-utf8.RuneCountInString(body)-2)
	}
	if body != "" {
		body = domain.Shorten(body, room)
		room -= utf8.RuneCountInString(body) + 2
	}
	desc := body
	if c := strings.TrimSpace(q.Context); c != "" && room > 20 {
		desc = domain.Shorten(c, room)
		if body != "" {
			desc += "\n\n" + body
		}
	}
	e.Description = desc
	return e
}

// pendingFields show, on a pending copy, how many approvals the question
// needs and how the votes stand ("Approve: 1 of 2 approvals — alice"), and
// who may answer (including people added by escalation). Names are plain
// text: the copy never pings anyone; reminders do that.
func pendingFields(q *domain.Question) []*discordgo.MessageEmbedField {
	var fs []*discordgo.MessageEmbedField
	if q.ApprovalsRequired > 1 {
		tally := domain.TallyLine(q)
		if tally == "" {
			tally = "No votes yet"
		}
		fs = append(fs, &discordgo.MessageEmbedField{
			Name:  domain.Shorten(fmt.Sprintf("Needs %d approvals", q.ApprovalsRequired), maxFieldName),
			Value: domain.Shorten(tally, maxFieldValue),
		})
	}
	if !q.Responders.Empty() {
		who := domain.DescribeResponders(q.Responders)
		if q.Responders.ExcludeRequester && q.RequestedBy != "" {
			who += " (not " + q.RequestedBy + ", who asked for it)"
		}
		fs = append(fs, &discordgo.MessageEmbedField{Name: "Who may answer", Value: domain.Shorten(who, maxFieldValue)})
	}
	return fs
}

// itemText is an item's question and its options with their descriptions.
func itemText(it domain.Item, maxQuestion, maxDesc int) string {
	var b strings.Builder
	b.WriteString("**" + domain.Shorten(it.Question, maxQuestion) + "**")
	if it.MultiSelect {
		b.WriteString("\n*Choose one or more, then Submit.*")
	}
	for j, o := range it.Options {
		fmt.Fprintf(&b, "\n%d. %s", j+1, domain.Shorten(o.Label, maxSelectText))
		if o.Recommended {
			b.WriteString(" ⭐ *recommended*")
		}
		if o.Default {
			b.WriteString(" *(default)*")
		}
		if o.Description != "" {
			b.WriteString(" — " + domain.Shorten(o.Description, maxDesc))
		}
		if o.Image != nil { // alt text always; the link opens the picture
			b.WriteString(" — 🖼 " + domain.Shorten(o.Image.Alt, maxDesc) + " <" + o.Image.URL + ">")
		}
	}
	if it.Image != nil {
		b.WriteString("\n🖼 " + domain.Shorten(it.Image.Alt, maxDesc) + " <" + it.Image.URL + ">")
	}
	if it.Other != nil {
		b.WriteString("\n*Your own answer: " + domain.Shorten(it.Other.Describe(), maxDesc) + "*")
	}
	return b.String()
}

// renderComponents draws the controls and tells how many "always allow"
// choices got a button.
func renderComponents(q *domain.Question, final bool, o renderOpts) ([]discordgo.MessageComponent, int) {
	var chosen map[string]bool
	if q.Status == domain.StatusAnswered {
		chosen = map[string]bool{}
		for item, labels := range q.Selections {
			for _, l := range labels {
				chosen[item+"\x00"+l] = true
			}
		}
	}
	id := q.ID
	var rows []discordgo.MessageComponent
	row := func(cs ...discordgo.MessageComponent) {
		rows = append(rows, discordgo.ActionsRow{Components: cs})
	}
	dismiss := discordgo.Button{Label: "Dismiss", Style: discordgo.DangerButton, CustomID: customID(actDismiss, id), Disabled: final}
	switch shapeOf(q) {
	case shapeSingleButtons:
		it := q.Questions[0]
		tones := approval.Tones(q)
		var bs []discordgo.MessageComponent
		for j, o := range it.Options {
			style := discordgo.SecondaryButton
			switch {
			case tones != nil && tones[j] == approval.Allow:
				style = discordgo.SuccessButton
			case tones != nil && tones[j] == approval.Deny:
				style = discordgo.DangerButton
			case tones != nil:
			case o.Recommended:
				style = discordgo.PrimaryButton
			}
			if tones == nil && chosen[it.Question+"\x00"+o.Label] {
				style = discordgo.SuccessButton
			}
			label := o.Label
			if o.Default && !final { // buttons cannot be pre-selected: the default is named
				label = domain.Shorten(o.Label, maxButtonLabel-10) + " (default)"
			}
			bs = append(bs, discordgo.Button{Label: domain.Shorten(label, maxButtonLabel), Style: style,
				CustomID: customID(actOption, id, 0, j), Disabled: final})
		}
		row(bs...)
		var edit []discordgo.MessageComponent
		if canEdit(q, o) {
			edit = append(edit, discordgo.Button{Label: editLabel, Style: discordgo.PrimaryButton, CustomID: customID(actEdit, id, 0), Disabled: final})
		}
		switch {
		case approval.NoteAllowed(q):
			// An approval has no "Other": free text never decides.
			// Denying with a note is its own, explicit action.
			row(append(append([]discordgo.MessageComponent{discordgo.Button{Label: denyNoteLabel, Style: discordgo.SecondaryButton, CustomID: customID(actOther, id, 0), Disabled: final}}, edit...), dismiss)...)
		case q.Kind == domain.KindApproval:
			row(append(edit, dismiss)...)
		default:
			row(discordgo.Button{Label: "Other…", Style: discordgo.SecondaryButton, CustomID: customID(actOther, id, 0), Disabled: final}, dismiss)
		}
	case shapeSingleMulti:
		row(selectFor(q, 0, final, chosen, domain.DefaultChoices(q.Questions)[0]))
		row(discordgo.Button{Label: "Submit", Style: discordgo.SuccessButton, CustomID: customID(actSubmit, id), Disabled: final}, dismiss)
	case shapeSingleText:
		row(discordgo.Button{Label: "Answer…", Style: discordgo.PrimaryButton, CustomID: customID(actText, id, 0), Disabled: final}, dismiss)
	case shapeItems:
		choices := o.Choices
		if choices == nil {
			choices = domain.DefaultChoices(q.Questions)
		}
		shownItems := domain.Shown(q.Questions, choices)
		for i, it := range q.Questions {
			if !final && !shownItems[i] {
				continue // asked once its condition is met: the message is updated then
			}
			if it.OpenEnded() {
				row(discordgo.Button{Label: domain.Shorten("Answer "+itemName(it, i)+"…", maxButtonLabel), Style: discordgo.PrimaryButton,
					CustomID: customID(actText, id, i), Disabled: final})
				continue
			}
			row(selectFor(q, i, final, chosen, choices[i]))
		}
		row(discordgo.Button{Label: "Submit", Style: discordgo.SuccessButton, CustomID: customID(actSubmit, id), Disabled: final}, dismiss)
	}
	rules, missing := ruleButtons(q, final, maxRows-len(rows))
	rows = append(rows, rules...)
	shown := 0
	if q.Action != nil {
		shown = len(q.Action.Suggestions) - missing
	}
	return rows, shown
}

func itemName(it domain.Item, i int) string {
	if it.Header != "" {
		return it.Header
	}
	return fmt.Sprintf("question %d", i+1)
}

// selectFor renders item i as a string select; option values are option
// indexes (labels may exceed 100 characters) plus "other".
func selectFor(q *domain.Question, i int, final bool, chosen map[string]bool, picked []string) discordgo.SelectMenu {
	it := q.Questions[i]
	minV := 1
	var opts []discordgo.SelectMenuOption
	for j, o := range it.Options {
		desc := o.Description
		if o.Recommended {
			desc = strings.TrimSpace("Recommended. " + desc)
		}
		opts = append(opts, discordgo.SelectMenuOption{
			Label: domain.Shorten(o.Label, maxSelectText), Value: strconv.Itoa(j),
			Description: domain.Shorten(desc, maxSelectText),
			Default:     chosen[it.Question+"\x00"+o.Label] || (!final && chosen == nil && slices.Contains(picked, o.Label)),
		})
	}
	if q.Kind != domain.KindApproval { // an approval has no "Other"
		opts = append(opts, discordgo.SelectMenuOption{Label: "Other…", Value: otherValue, Description: "Type your own answer"})
	}
	maxV := 1
	ph := "Choose one"
	if it.MultiSelect {
		maxV = len(opts) // the options and "Other…"
		ph = "Choose one or more"
	}
	if len(q.Questions) > 1 {
		ph = domain.Shorten(itemName(it, i)+": "+strings.ToLower(ph[:1])+ph[1:], maxPlaceholder)
	}
	return discordgo.SelectMenu{MenuType: discordgo.StringSelectMenu, CustomID: customID(actSelect, q.ID, i),
		Placeholder: ph, MinValues: &minV, MaxValues: maxV, Options: opts, Disabled: final}
}

// denyNoteLabel is the approval's "Deny with note…" button: it opens a
// modal whose text is recorded as a denial (adapters/internal/approval).
const denyNoteLabel = "Deny with note…"

// editLabel is the approval's "Edit…" button: it opens a modal with the
// action's arguments, and submitting it allows the edited action.
const editLabel = "Edit…"

// modalFor is the modal of "Other…", "Answer…" and "Deny with note…" for item i.
func modalFor(q *domain.Question, i int, prefill string) *discordgo.InteractionResponse {
	it := q.Questions[i]
	title := "Your answer"
	if it.Header != "" {
		title = "Answer: " + it.Header
	}
	ph := domain.Shorten(it.Question, maxSelectText)
	if it.Other != nil && q.Kind != domain.KindApproval {
		ph = domain.Shorten("Expected: "+it.Other.Describe(), maxSelectText)
	}
	label := domain.Shorten(it.Question, maxTextInputLabel)
	minLen, maxLen := 1, min(domain.MaxAnswerLen, maxTextInputLength)
	if r := it.Other; r != nil && it.OpenEnded() && q.Kind != domain.KindApproval {
		minLen = max(minLen, min(r.MinLength, maxLen))
		if r.MaxLength > 0 {
			maxLen = min(maxLen, r.MaxLength)
		}
	}
	if approval.NoteAllowed(q) {
		title, label, ph = "Deny with note", "Why are you denying it?", "The agent reads this note; the request is denied."
	}
	return &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseModal,
		Data: &discordgo.InteractionResponseData{
			CustomID: customID(actModal, q.ID, i),
			Title:    domain.Shorten(title, maxModalTitle),
			Components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
				discordgo.TextInput{CustomID: textInputID, Label: label,
					Style: discordgo.TextInputParagraph, Placeholder: ph, Value: prefill, Required: true,
					MinLength: minLen, MaxLength: maxLen},
			}}},
		},
	}
}

// markdownEscaper backslash-escapes what Discord's Markdown reads as
// formatting, links, headings, quotes or mentions, for text from outside
// (a pager user's name) shown as it is.
var markdownEscaper = strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "~", `\~`, "`", "\\`", "|", `\|`,
	">", `\>`, "<", `\<`, "#", `\#`, "[", `\[`, "]", `\]`, "(", `\(`, ")", `\)`, "-", `\-`, "@", "@\u200b")

func escapeMarkdown(s string) string { return markdownEscaper.Replace(s) }
