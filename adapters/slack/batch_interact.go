package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/slack-go/slack"
)

var _ lifecycle.BatchChannel = (*Adapter)(nil)

// PostBatch implements lifecycle.BatchChannel: it posts the batch's
// message on t (in the run's thread under `thread: per-run`).
func (a *Adapter) PostBatch(ctx context.Context, b *domain.Batch, t domain.Target) (domain.Target, error) {
	thread := t.ThreadTS
	if thread == "" {
		thread = a.runThread(ctx, b.Questions[0], t.Channel)
	}
	blocks, text := a.renderBatch(b, a.router.Clock().Now())
	opts := []slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...),
		slack.MsgOptionDisableLinkUnfurl(), slack.MsgOptionDisableMediaUnfurl()}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	var ts string
	err := a.call(ctx, "chat.postMessage", t.Channel, callOpts{}, func(ctx context.Context) error {
		var err error
		_, ts, err = a.api.PostMessageContext(ctx, t.Channel, opts...)
		return err
	})
	if err != nil {
		return t, err
	}
	t.MessageTS = ts
	if thread != "" && thread != t.ThreadTS {
		t.Refs = map[string]string{"thread_ts": thread}
	}
	return t, nil
}

// UpdateBatch implements lifecycle.BatchChannel: it re-renders the batch's
// message with every call as it is now.
func (a *Adapter) UpdateBatch(ctx context.Context, b *domain.Batch, t domain.Target) error {
	if t.MessageTS == "" {
		return nil
	}
	blocks, text := a.renderBatch(b, a.router.Clock().Now())
	return a.call(ctx, "chat.update", t.Channel, callOpts{}, func(ctx context.Context) error {
		_, _, _, err := a.api.UpdateMessageContext(ctx, t.Channel, t.MessageTS,
			slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
		return err
	})
}

// batchAction handles a click on the batch row: Allow all, Deny all, or
// Deny all with note… (a modal). shown is how many calls the message
// showed (the button's value).
func (a *Adapter) batchAction(ic *slack.InteractionCallback, w place, batchID, verb, value string, goBG func(time.Duration, func(context.Context))) {
	shown, err := strconv.Atoi(value)
	if err != nil || shown < 1 {
		return
	}
	switch verb {
	case actAllowAll, actDenyAll:
		decision := domain.DecideAllow
		if verb == actDenyAll {
			decision = domain.DecideDeny
		}
		goBG(a.answerTimeout(), func(ctx context.Context) { a.decideBatch(ctx, w, batchID, shown, decision, nil) })
	case actDenyAllRsn:
		trigger := ic.TriggerID
		a.goTracked(3*time.Second, false, func(ctx context.Context) { a.openBatchNote(ctx, w, batchID, shown, trigger) })
	}
}

// shownCalls reads the batch and the ids of the calls its message at w
// showed: the first shown calls whose copy is that message.
func (a *Adapter) shownCalls(ctx context.Context, w place, batchID string, shown int) (string, *domain.Batch, []string, error) {
	project, err := a.router.Locate(ctx, batchID)
	if err != nil {
		return "", nil, nil, err
	}
	b, err := a.router.Batch(ctx, project, batchID)
	if err != nil {
		return "", nil, nil, err
	}
	var ids []string
	for _, q := range b.Questions {
		if len(ids) < shown && copyAt(q, w.channel, w.message) {
			ids = append(ids, q.ID)
		}
	}
	return project, b, ids, nil
}

// decideBatch decides the calls the message showed at once, as who: each
// call is checked and recorded as its own answer. The person is told
// privately of every call left pending for them, and why.
func (a *Adapter) decideBatch(ctx context.Context, w place, batchID string, shown int, decision string, reason *string) {
	project, b, ids, err := a.shownCalls(ctx, w, batchID, shown)
	if err != nil {
		a.tell(ctx, w, a.explain(w.user, err, nil))
		return
	}
	if len(ids) == 0 {
		a.tell(ctx, w, words.NotOurs().Text)
		return
	}
	who := domain.Person{Platform: "slack", ID: w.user, Name: w.name}
	for _, q := range b.Questions {
		if q.Status == domain.StatusPending && slices.Contains(ids, q.ID) {
			for _, g := range a.person(ctx, q, w.user, w.name).Groups {
				if !slices.Contains(who.Groups, g) {
					who.Groups = append(who.Groups, g)
				}
			}
		}
	}
	req := domain.BatchRespondRequest{Decision: decision, Reason: reason, Questions: ids}
	out, err := a.router.DecideBatch(ctx, project, batchID, req, who, true)
	if err != nil {
		a.tell(ctx, w, a.explain(w.user, err, nil))
		return
	}
	if len(out.Refused) > 0 {
		a.tell(ctx, w, refusedText(out, func(id string) int { return slices.Index(ids, id) + 1 }))
	}
	a.log.Info("batch decided", "batch", batchID, "project", project, "user", w.user, "decided", len(out.Decided), "refused", len(out.Refused))
}

// refusedText tells a person which calls a batch decision left pending,
// by their number on the message, and why.
func refusedText(out lifecycle.BatchOutcome, number func(id string) int) string {
	lines := []string{fmt.Sprintf("%d call(s) decided; %d left pending for someone else:", len(out.Decided)+len(out.Voted), len(out.Refused))}
	for _, r := range out.Refused {
		lines = append(lines, fmt.Sprintf("• call %d: %s", number(r.ID), escape(r.Message)))
	}
	return clip(strings.Join(lines, "\n"), maxFallbackText)
}

// openBatchNote opens the "Deny all with note" modal.
func (a *Adapter) openBatchNote(ctx context.Context, w place, batchID string, shown int, trigger string) {
	_, b, ids, err := a.shownCalls(ctx, w, batchID, shown)
	if err != nil {
		a.tell(ctx, w, a.explain(w.user, err, nil))
		return
	}
	if b.Pending == 0 || len(ids) == 0 {
		a.tell(ctx, w, ":information_source: Every call of this batch is decided already.")
		return
	}
	meta, _ := json.Marshal(modalMeta{QuestionID: batchID, Item: shown, Channel: w.channel, ThreadTS: w.thread, Message: w.message})
	input := slack.NewPlainTextInputBlockElement(plain("Why are you denying them?"), modalAction)
	input.Multiline, input.MaxLength, input.FocusOnLoad = true, maxInputLength, true
	view := slack.ModalViewRequest{
		Type:   slack.VTModal,
		Title:  plain("Deny all with note"),
		Submit: plain("Deny all"),
		Close:  plain("Cancel"),
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			slack.NewSectionBlock(mrkdwn(fmt.Sprintf("Deny every call of this batch still waiting (%d shown). The agent reads the note as the reason for each.", len(ids))), nil, nil),
			slack.NewInputBlock(modalBlock, plain("Why are you denying them? The agent reads this note."), nil, input),
		}},
		PrivateMetadata: string(meta),
		CallbackID:      batchNoteCallback,
	}
	err = a.call(ctx, "views.open", w.user, callOpts{noWait: true}, func(ctx context.Context) error {
		_, err := a.api.OpenViewContext(ctx, trigger, view)
		return err
	})
	if err != nil {
		a.tell(ctx, w, "The note form could not be opened (Slack said: "+escape(errText(err))+"). Please click again.")
	}
}

// batchNoteSubmission denies the calls the message showed with the note
// as their reason, never as an answer.
func (a *Adapter) batchNoteSubmission(ic *slack.InteractionCallback) any {
	var meta modalMeta
	if err := json.Unmarshal([]byte(ic.View.PrivateMetadata), &meta); err != nil || meta.QuestionID == "" || meta.Item < 1 {
		return nil
	}
	var raw string
	if ic.View.State != nil {
		raw = ic.View.State.Values[modalBlock][modalAction].Value
	}
	switch {
	case strings.TrimSpace(raw) == "":
		return slack.NewErrorsViewSubmissionResponse(map[string]string{modalBlock: "Write why, or press Cancel."})
	case textLen(raw) > domain.MaxAnswerLen:
		return slack.NewErrorsViewSubmissionResponse(map[string]string{modalBlock: fmt.Sprintf("At most %d characters, please.", domain.MaxAnswerLen)})
	}
	w := place{channel: meta.Channel, thread: meta.ThreadTS, user: ic.User.ID, name: userName(ic.User), message: meta.Message}
	a.goBG(a.answerTimeout(), func(ctx context.Context) { a.decideBatch(ctx, w, meta.QuestionID, meta.Item, domain.DecideDeny, &raw) })
	return nil
}
