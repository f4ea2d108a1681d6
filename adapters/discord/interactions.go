package discord

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/approval"
	"github.com/askbridge/askbridge/domain"
	"github.com/bwmarrin/discordgo"
)

// handle decides what an interaction does. Every path replies once.
func (a *Adapter) handle(ctx context.Context, x *exchange) {
	in := x.in
	if in.Type != typeComponent && in.Type != typeModalSubmit {
		x.reply(ctx, ephemeral("This application only handles askbridge questions."))
		return
	}
	if !a.firstTime(ctx, in.ID) {
		// A captured interaction sent again within the signature's window
		// (after the person changed their vote, say) changes nothing. It is
		// checked here, off the acknowledgement's path.
		x.reply(ctx, deferredUpdate)
		return
	}
	act, ok := parseCustomID(in.Data.CustomID)
	if !ok || (in.Type == typeModalSubmit) != (act.Kind == actModal || act.Kind == actEditSave || act.Kind == actBatchModal) {
		x.reply(ctx, ephemeral(words.NotOurs().Text))
		return
	}
	if isBatchAction(act.Kind) {
		a.handleBatch(ctx, x, act)
		return
	}
	project, err := a.router.Locate(ctx, act.QuestionID)
	if err != nil {
		a.failed(ctx, x, err)
		return
	}
	q, err := a.router.Question(ctx, project, act.QuestionID)
	if err != nil {
		a.failed(ctx, x, err)
		return
	}
	if !postedOn(q, in) {
		x.reply(ctx, ephemeral(words.NotOurs().Text))
		return
	}
	if act.Item >= len(q.Questions) || (act.Option >= 0 && act.Option >= len(q.Questions[act.Item].Options)) {
		x.reply(ctx, ephemeral("This control no longer matches the question."))
		return
	}
	who := in.person()
	switch act.Kind {
	case actOption:
		it := q.Questions[act.Item]
		if shapeOf(q) != shapeSingleButtons {
			x.reply(ctx, deferredUpdate)
			return
		}
		a.answer(ctx, x, q, who, map[string]domain.StringList{it.Question: {it.Options[act.Option].Label}})
	case actRule:
		if !hasAction(q) || act.Option >= len(q.Action.Suggestions) {
			x.reply(ctx, ephemeral("This choice no longer matches the question; nothing was recorded."))
			return
		}
		rule := act.Option
		a.respond(ctx, x, q, who, domain.RespondRequest{Rule: &rule, Digest: q.Action.Digest})
	case actEdit:
		a.openEditor(ctx, x, q, who)
	case actEditSave:
		a.editSubmitted(ctx, x, q, who, act.Digest)
	case actDismiss:
		x.expectUpdate()
		final, err := a.router.Cancel(ctx, project, q.ID, domain.CancelUser, &who)
		a.outcome(ctx, x, final, who, err)
	case actOther, actText:
		if !a.gate(ctx, x, q, who) {
			return
		}
		prefill := ""
		draft, _ := a.router.GetDraft(ctx, project, q.ID, draftKey(who))
		if usesDrafts(q) {
			prefill = freeText(q.Questions[act.Item], draft[q.Questions[act.Item].Question])
		}
		if typed := draft[typedKey(act.Item)]; len(typed) > 0 { // refused by the rules: typed again
			prefill = typed[0]
		}
		x.reply(ctx, modalFor(q, act.Item, prefill))
	case actSelect:
		if !a.gate(ctx, x, q, who) {
			return
		}
		a.selectChanged(ctx, x, q, who, act.Item, in.Data.Values)
	case actSubmit:
		if !a.gate(ctx, x, q, who) {
			return
		}
		a.submit(ctx, x, q, who)
	case actModal:
		a.modalSubmitted(ctx, x, q, who, act.Item)
	}
}

// submit answers with the person's draft once every item has a choice.
func (a *Adapter) submit(ctx context.Context, x *exchange, q *domain.Question, who domain.Person) {
	draft, err := a.router.GetDraft(ctx, q.ProjectID, q.ID, draftKey(who))
	if err != nil {
		a.failed(ctx, x, err)
		return
	}
	var missing []string
	answers := map[string]domain.StringList{}
	choices := draftChoices(q, draft)
	shown := domain.Shown(q.Questions, choices)
	for i, it := range q.Questions {
		if !shown[i] {
			continue // not asked: its condition is not met
		}
		if len(choices[i]) == 0 {
			missing = append(missing, itemName(it, i))
			continue
		}
		answers[it.Question] = choices[i]
	}
	if len(missing) > 0 {
		x.reply(ctx, ephemeral("Still to answer: "+strings.Join(missing, ", ")+". Make your choices above, then press Submit."))
		return
	}
	a.answer(ctx, x, q, who, answers)
}

// modalSubmitted takes the text typed in the modal of one item: the answer
// itself, or a part of the person's draft on a question answered with
// Submit.
func (a *Adapter) modalSubmitted(ctx context.Context, x *exchange, q *domain.Question, who domain.Person, item int) {
	it := q.Questions[item]
	text := x.in.text()
	if text == "" {
		x.reply(ctx, ephemeral("The answer was empty; nothing was recorded."))
		return
	}
	if q.Kind == domain.KindApproval && !it.OpenEnded() {
		// Only "Deny with note…" opens a modal on an approval: the note
		// denies as the reason (the agent's feedback), exactly as typed,
		// and is never read as an answer.
		req, ok := approval.NoteRequest(q, x.in.rawText())
		if !ok {
			x.reply(ctx, ephemeral("This approval is decided with its buttons; a note cannot be added to it."))
			return
		}
		a.respond(ctx, x, q, who, req)
		return
	}
	if problem := domain.FreeTextProblem(it, text); problem != "" && q.Kind != domain.KindApproval {
		// Discord cannot answer a modal with a modal: the problem comes
		// with a button that re-opens it, holding what was typed.
		a.keepTyped(ctx, q, who, item, text)
		x.reply(ctx, retry(q, item, "Not sent: "+problem+". Nothing was recorded."))
		return
	}
	if !usesDrafts(q) {
		a.answer(ctx, x, q, who, map[string]domain.StringList{it.Question: {text}})
		return
	}
	if !a.gate(ctx, x, q, who) {
		return
	}
	err := a.editDraft(ctx, q, who, func(d map[string][]string) {
		var keep []string
		if it.MultiSelect {
			keep = optionLabels(it, d[it.Question])
		}
		d[it.Question] = append(keep, text)
	})
	if err != nil {
		a.failed(ctx, x, err)
		return
	}
	x.reply(ctx, ephemeral("Saved your answer to "+itemName(it, item)+". Press Submit when everything is answered."))
	a.rememberToken(ctx, q, x.in.discordgo())
}

// selectChanged keeps the person's choice for one item in their draft.
// Choosing "Other…" opens the modal for the free text.
func (a *Adapter) selectChanged(ctx context.Context, x *exchange, q *domain.Question, who domain.Person, item int, values []string) {
	it := q.Questions[item]
	var labels []string
	other := false
	for _, v := range values {
		if v == otherValue {
			other = true
			continue
		}
		j, err := strconv.Atoi(v)
		if err != nil || j < 0 || j >= len(it.Options) {
			x.reply(ctx, ephemeral("That choice no longer matches the question."))
			return
		}
		labels = append(labels, it.Options[j].Label)
	}
	var prior []string
	err := a.editDraft(ctx, q, who, func(d map[string][]string) {
		prior = d[it.Question]
		next := labels
		if other { // keep the free text until the modal replaces it
			if t := freeText(it, prior); t != "" {
				next = append(next, t)
			}
		}
		d[it.Question] = next
	})
	if err != nil {
		a.failed(ctx, x, err)
		return
	}
	switch {
	case other:
		x.reply(ctx, modalFor(q, item, freeText(it, prior)))
	case dependedOn(q, item):
		// Items that depend on this choice (show_if) are asked or no
		// longer asked: the message is updated with the person's choices.
		d, _ := a.router.GetDraft(ctx, q.ProjectID, q.ID, draftKey(who))
		o := a.opts(q)
		o.Choices = draftChoices(q, d)
		x.reply(ctx, update(render(q, a.now(), o)))
	default:
		x.reply(ctx, deferredUpdate)
	}
	a.rememberToken(ctx, q, x.in.discordgo())
}

// editDraft applies fn to the person's draft and stores it until shortly
// after the question's deadline (at most a day), readable by any replica.
func (a *Adapter) editDraft(ctx context.Context, q *domain.Question, who domain.Person, fn func(map[string][]string)) error {
	st := a.router
	d, err := st.GetDraft(ctx, q.ProjectID, q.ID, draftKey(who))
	if err != nil {
		return err
	}
	if d == nil {
		d = map[string][]string{}
	}
	fn(d)
	ttl := min(max(q.ExpiresAt.Sub(a.now())+time.Minute, time.Minute), 24*time.Hour)
	return st.PutDraft(ctx, q.ProjectID, q.ID, draftKey(who), d, ttl)
}

func draftKey(p domain.Person) string { return "discord:" + p.ID }

// optionLabels keeps the choices that are option labels.
func optionLabels(it domain.Item, choices []string) []string {
	var out []string
	for _, c := range choices {
		for _, o := range it.Options {
			if o.Label == c {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// freeText returns the choice that is not an option label, if any.
func freeText(it domain.Item, choices []string) string {
	for _, c := range choices {
		if len(optionLabels(it, []string{c})) == 0 {
			return c
		}
	}
	return ""
}

// gate lets through a person who may act on a pending question, and tells
// anyone else why nothing happens.
func (a *Adapter) gate(ctx context.Context, x *exchange, q *domain.Question, who domain.Person) bool {
	if q.Status != domain.StatusPending {
		x.reply(ctx, ephemeral(words.Late(q).Text))
		return false
	}
	if err := a.router.Check(ctx, q, who); err != nil {
		a.refuse(ctx, x, err, q, who)
		return false
	}
	return true
}

// answer records the answer (see respond).
func (a *Adapter) answer(ctx context.Context, x *exchange, q *domain.Question, who domain.Person, answers map[string]domain.StringList) {
	a.respond(ctx, x, q, who, domain.RespondRequest{Answers: answers})
}

// respond records req as who's answer on q, just read and checked. A
// webhook-mode answer waits inside the Router for the run to pause; the
// interaction is acknowledged meanwhile (awaitFirst's budget).
func (a *Adapter) respond(ctx context.Context, x *exchange, q *domain.Question, who domain.Person, req domain.RespondRequest) {
	x.expectUpdate()
	final, err := a.router.AnswerRead(ctx, q, req, who)
	a.outcome(ctx, x, final, who, err)
}

// outcome replies to the result of an answer or dismissal.
func (a *Adapter) outcome(ctx context.Context, x *exchange, q *domain.Question, who domain.Person, err error) {
	if err == nil && a.onBatchMessage(ctx, q, x.in) {
		// The batch's message shows every call: the Router re-renders it.
		x.reply(ctx, deferredUpdate)
		return
	}
	if err == nil && q.Status == domain.StatusPending {
		// A vote that did not decide an approval yet: the clicked copy
		// shows the tally; Update brings the other copies along. Not a
		// final state, so Finish must still edit this copy later.
		x.reply(ctx, update(a.render(q)))
		return
	}
	if err == nil {
		x.replyFinal(ctx, update(a.render(q)))
		return
	}
	a.refuse(ctx, x, err, q, who)
}

// words writes the sentences every surface shows (domain.Words) for
// Discord: plain names and text (ephemeral replies mention nobody).
var words = domain.Words{}

// refuse tells who privately why what they did changed nothing, in the
// words every surface uses. q is the question as it is now, nil when it
// could not be read.
func (a *Adapter) refuse(ctx context.Context, x *exchange, err error, q *domain.Question, who domain.Person) {
	switch domain.ErrorCode(err) {
	case domain.ENotAllowed, domain.EAlreadyAnswered, domain.EQuestionCancelled, domain.EQuestionExpired,
		domain.EConflict, domain.ERunNotPaused, domain.EInvalidAnswer, domain.ENotFound:
	default:
		a.log.Error("handling a Discord interaction failed", "interaction", x.in.ID, "custom_id", x.in.Data.CustomID, "err", err)
	}
	x.reply(ctx, ephemeral(words.Refusal(err, q, who).Text))
}

// failed tells the person what went wrong before the question was read,
// without internals.
func (a *Adapter) failed(ctx context.Context, x *exchange, err error) {
	a.refuse(ctx, x, err, nil, x.in.person())
}

// postedOn reports whether a click on a message came from one of q's
// copies (a message id is unique across Discord): a custom_id naming a question is
// not enough, or a control copied onto another message, in another
// channel or server, could act on another project's question. Ephemeral
// messages the bridge sent one person, and modals, carry no copy.
func postedOn(q *domain.Question, in *inbound) bool {
	const ephemeralFlag = 1 << 6
	if in.Message == nil || in.Message.Flags&ephemeralFlag != 0 {
		return true
	}
	for _, t := range q.Targets {
		if t.Platform == Platform && t.MessageTS == in.Message.ID {
			return true
		}
	}
	return false
}

// draftChoices is each item's choices in the person's draft, or its
// default options when the draft has none (they show pre-selected).
func draftChoices(q *domain.Question, draft map[string][]string) [][]string {
	choices := domain.DefaultChoices(q.Questions)
	for i, it := range q.Questions {
		if d := draft[it.Question]; len(d) > 0 {
			choices[i] = d
		}
	}
	return choices
}

// dependedOn reports whether an item's show_if names item.
func dependedOn(q *domain.Question, item int) bool {
	for _, it := range q.Questions {
		if it.ShowIf != nil && it.ShowIf.Item == item {
			return true
		}
	}
	return false
}

// typedKey is where a draft keeps text the rules refused, so the modal
// re-opens with it; it is no item's text (those never start with NUL).
func typedKey(item int) string { return "\x00typed:" + strconv.Itoa(item) }

// keepTyped keeps text the rules refused for the re-opened modal.
func (a *Adapter) keepTyped(ctx context.Context, q *domain.Question, who domain.Person, item int, text string) {
	if err := a.editDraft(ctx, q, who, func(d map[string][]string) { d[typedKey(item)] = []string{text} }); err != nil {
		a.log.Warn("keeping refused text failed", "question", q.ID, "err", err)
	}
}

// retry is the private reply to text the rules refused: the problem, and
// a button that re-opens the item's modal with what was typed.
func retry(q *domain.Question, item int, text string) *discordgo.InteractionResponse {
	kind := actOther
	if q.Questions[item].OpenEnded() {
		kind = actText
	}
	r := ephemeral(text)
	r.Data.Components = []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
		discordgo.Button{Label: "Edit your answer…", Style: discordgo.PrimaryButton, CustomID: customID(kind, q.ID, item)},
	}}}
	return r
}
