package slack

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/askbridge/askbridge/adapters/internal/actiontext"
	"github.com/askbridge/askbridge/domain"
	"github.com/slack-go/slack"
)

// openEdit opens the modal that edits an action's arguments before
// allowing it: the command of a Bash action, or the arguments as JSON,
// pre-filled. Arguments longer than a Slack input holds cannot be edited
// here; the person is told so and pointed at the question page.
func (a *Adapter) openEdit(ctx context.Context, w place, qid, trigger string) {
	_, q, ok := a.loadPending(ctx, w, qid)
	if !ok {
		return
	}
	if q.Action == nil {
		return
	}
	x := a.extras(q)
	if !x.canEdit {
		a.tell(ctx, w, "Editing is turned off for this approval's route; allow or deny the action as asked.")
		return
	}
	if err := a.router.Check(ctx, q, a.person(ctx, q, w.user, w.name)); err != nil {
		a.tell(ctx, w, a.explain(w.user, err, q))
		return
	}
	text, bash := actiontext.EditText(q.Action)
	if textLen(text) > maxInputLength {
		msg := "These arguments are too long to edit in Slack (" + itoa(textLen(text)) + " characters; a Slack text box holds " + itoa(maxInputLength) + "). "
		if x.pageURL != "" {
			msg += "Edit them on the question page: <" + x.pageURL + ">"
		} else {
			msg += "Edit them in the web inbox or with `askbridge questions answer " + q.ID + " --edit '<JSON>'`."
		}
		a.tell(ctx, w, msg)
		return
	}
	meta, _ := json.Marshal(modalMeta{QuestionID: qid, Channel: w.channel, ThreadTS: w.thread, Digest: q.Action.Digest, Bash: bash})
	view := renderEdit(q, text, bash, string(meta))
	err := a.call(ctx, "views.open", w.user, callOpts{noWait: true}, func(ctx context.Context) error {
		_, err := a.api.OpenViewContext(ctx, trigger, view)
		return err
	})
	if err != nil {
		a.tell(ctx, w, "The edit form could not be opened (Slack said: "+escape(errText(err))+"). Please click again.")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// renderEdit is the edit modal: the tool, and one multiline input with the
// command or the JSON arguments.
func renderEdit(q *domain.Question, text string, bash bool, meta string) slack.ModalViewRequest {
	input := slack.NewPlainTextInputBlockElement(nil, editAction)
	input.Multiline = true
	input.MaxLength = maxInputLength
	input.InitialValue = text
	input.FocusOnLoad = true
	label := "Arguments (a JSON object)"
	hint := "Change the arguments, then press *Allow edited*. The agent runs the action with your arguments; the audit keeps both versions."
	if bash {
		label = "Command"
		hint = "Change the command, then press *Allow edited*. The agent runs your command; the audit keeps both versions."
	}
	blocks := []slack.Block{
		slack.NewSectionBlock(mrkdwn("*Tool:* `"+codeEsc(oneLine(clip(q.Action.Tool, domain.MaxToolLen)))+"`\n"+hint), nil, nil),
		slack.NewInputBlock(editBlock, plain(label), nil, input),
	}
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           plain("Edit, then allow"),
		Submit:          plain("Allow edited"),
		Close:           plain("Cancel"),
		Blocks:          slack.Blocks{BlockSet: blocks},
		PrivateMetadata: meta,
		CallbackID:      editCallback,
	}
}

// editSubmission checks the edited text at once (a field error keeps the
// modal open with the person's text) and records the edited action in the
// background, bound to the digest the person saw.
func (a *Adapter) editSubmission(ic *slack.InteractionCallback) any {
	var meta modalMeta
	if err := json.Unmarshal([]byte(ic.View.PrivateMetadata), &meta); err != nil || meta.QuestionID == "" {
		return nil
	}
	var text string
	if ic.View.State != nil {
		text = ic.View.State.Values[editBlock][editAction].Value
	}
	// The arguments' own shape is checked against the record below; the
	// JSON can be checked now, without it.
	if !meta.Bash {
		if _, err := actiontext.EditedInput(&domain.Action{Input: json.RawMessage("{}")}, text, false); err != nil {
			return slack.NewErrorsViewSubmissionResponse(map[string]string{editBlock: clip(capitalize(err.Error())+". Fix it, or press Cancel.", 2000)})
		}
	} else if strings.TrimSpace(text) == "" {
		return slack.NewErrorsViewSubmissionResponse(map[string]string{editBlock: "The command is empty: write the command to run, or press Cancel."})
	}
	w := place{channel: meta.Channel, thread: meta.ThreadTS, user: ic.User.ID, name: userName(ic.User)}
	a.goBG(a.answerTimeout(), func(ctx context.Context) {
		a.respond(ctx, w, meta.QuestionID, func(_ context.Context, _ string, q *domain.Question) (domain.RespondRequest, string) {
			if q.Action == nil {
				return domain.RespondRequest{}, "This question has no action to edit."
			}
			in, err := actiontext.EditedInput(q.Action, text, meta.Bash)
			if err != nil {
				return domain.RespondRequest{}, "Nothing was recorded: " + escape(err.Error())
			}
			return domain.RespondRequest{EditedInput: in, Digest: meta.Digest}, ""
		})
	})
	return nil
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// allowWithRule allows the action and accepts its suggestion n.
func (a *Adapter) allowWithRule(ctx context.Context, w place, qid string, n int) {
	a.respond(ctx, w, qid, func(_ context.Context, _ string, q *domain.Question) (domain.RespondRequest, string) {
		if q.Action == nil || n >= len(q.Action.Suggestions) {
			return domain.RespondRequest{}, "That button no longer matches the question."
		}
		return domain.RespondRequest{Rule: &n, Digest: q.Action.Digest}, ""
	})
}

// showFullAction opens (or, from its own "Next page" button, updates) the
// modal that pages through the whole action. Reading is not answering.
func (a *Adapter) showFullAction(ctx context.Context, w place, qid string, page int, trigger, viewID string) {
	_, q, err := a.load(ctx, qid)
	if err != nil {
		a.tell(ctx, w, a.explain(w.user, err, nil))
		return
	}
	if q.Action == nil {
		return
	}
	view := renderFullAction(q, page)
	err = a.call(ctx, "views.open", w.user, callOpts{noWait: true}, func(ctx context.Context) error {
		if viewID != "" {
			_, err := a.api.UpdateViewContext(ctx, view, "", "", viewID)
			return err
		}
		_, err := a.api.OpenViewContext(ctx, trigger, view)
		return err
	})
	if err != nil {
		a.tell(ctx, w, "The full action could not be shown (Slack said: "+escape(errText(err))+"). Please click again.")
	}
}
