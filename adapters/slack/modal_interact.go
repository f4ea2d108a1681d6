package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/approval"
	"github.com/askbridge/askbridge/domain"
	"github.com/slack-go/slack"
)

// openModal opens the free-text modal of an item within the trigger window.
func (a *Adapter) openModal(ctx context.Context, w place, qid string, item int, trigger string) {
	_, q, ok := a.loadPending(ctx, w, qid)
	if !ok {
		return
	}
	if item < 0 || item >= len(q.Questions) {
		return
	}
	if err := a.router.Check(ctx, q, a.person(ctx, q, w.user, w.name)); err != nil {
		a.tell(ctx, w, a.explain(w.user, err, q))
		return
	}
	meta, _ := json.Marshal(modalMeta{QuestionID: qid, Item: item, Channel: w.channel, ThreadTS: w.thread, Draft: hasSubmit(q)})
	view := renderModal(q, item, string(meta), hasSubmit(q))
	err := a.call(ctx, "views.open", w.user, callOpts{noWait: true}, func(ctx context.Context) error {
		_, err := a.api.OpenViewContext(ctx, trigger, view)
		return err
	})
	if err != nil {
		a.tell(ctx, w, "The answer form could not be opened (Slack said: "+escape(errText(err))+"). Please click again.")
	}
}

// showFull opens the modal with the whole text of an item (item ≥ 0) or
// of the context. Reading is not answering: anyone who sees the message may
// open it, also once the question has ended.
func (a *Adapter) showFull(ctx context.Context, w place, qid string, item int, trigger string) {
	_, q, err := a.load(ctx, qid)
	if err != nil {
		a.tell(ctx, w, a.explain(w.user, err, nil))
		return
	}
	if item >= len(q.Questions) {
		return
	}
	view := renderFull(q, item)
	err = a.call(ctx, "views.open", w.user, callOpts{noWait: true}, func(ctx context.Context) error {
		_, err := a.api.OpenViewContext(ctx, trigger, view)
		return err
	})
	if err != nil {
		a.tell(ctx, w, "The full question could not be shown (Slack said: "+escape(errText(err))+"). Please click again.")
	}
}

func errText(err error) string {
	if c := ErrorCode(err); c != "" {
		return c
	}
	return "no answer in time"
}

// viewSubmission validates a modal synchronously (inline errors must be in
// the acknowledgement) and records the answer in the background.
func (a *Adapter) viewSubmission(ic *slack.InteractionCallback) any {
	if ic.View.CallbackID == editCallback {
		return a.editSubmission(ic)
	}
	if ic.View.CallbackID == batchNoteCallback {
		return a.batchNoteSubmission(ic)
	}
	if ic.View.CallbackID != modalCallback {
		return nil
	}
	var meta modalMeta
	if err := json.Unmarshal([]byte(ic.View.PrivateMetadata), &meta); err != nil || meta.QuestionID == "" {
		return nil
	}
	var raw string
	if ic.View.State != nil {
		raw = ic.View.State.Values[modalBlock][modalAction].Value
	}
	text := strings.TrimSpace(raw)
	switch {
	case text == "":
		return slack.NewErrorsViewSubmissionResponse(map[string]string{modalBlock: "Write an answer, or press Cancel."})
	case textLen(raw) > domain.MaxAnswerLen:
		return slack.NewErrorsViewSubmissionResponse(map[string]string{modalBlock: fmt.Sprintf("At most %d characters, please.", domain.MaxAnswerLen)})
	}
	// The item's rules for free text (other) are checked here, so the
	// refusal sits on the field and what was typed stays in the modal
	// (response_action: errors); the Router checks them again on record.
	if problem := a.ruleProblem(meta, text); problem != "" {
		return slack.NewErrorsViewSubmissionResponse(map[string]string{modalBlock: clip(problem, 2000)})
	}
	w := place{channel: meta.Channel, thread: meta.ThreadTS, user: ic.User.ID, name: userName(ic.User)}
	a.goBG(a.answerTimeout(), func(ctx context.Context) {
		if meta.Draft {
			a.saveDraft(ctx, w, meta, text)
			return
		}
		a.respond(ctx, w, meta.QuestionID, func(_ context.Context, _ string, q *domain.Question) (domain.RespondRequest, string) {
			if meta.Item < 0 || meta.Item >= len(q.Questions) {
				return domain.RespondRequest{}, "That form no longer matches the question."
			}
			if q.Kind == domain.KindApproval && !q.Questions[meta.Item].OpenEnded() {
				// Only "Deny with note…" opens a modal on an approval: the
				// note denies as the reason, exactly as typed, and is never
				// read as an answer (domain/decide.go).
				req, ok := approval.NoteRequest(q, raw)
				if !ok {
					return domain.RespondRequest{}, "This approval is decided with its buttons; a note cannot be added to it."
				}
				return req, ""
			}
			return domain.RespondRequest{Answers: map[string]domain.StringList{q.Questions[meta.Item].Question: {text}}}, ""
		})
	})
	return nil
}

// saveDraft keeps one item's free text until the person presses Submit.
func (a *Adapter) saveDraft(ctx context.Context, w place, meta modalMeta, text string) {
	project, q, ok := a.loadPending(ctx, w, meta.QuestionID)
	if !ok {
		return
	}
	if meta.Item < 0 || meta.Item >= len(q.Questions) {
		return
	}
	st := a.router
	person := "slack:" + w.user
	draft, err := st.GetDraft(ctx, project, q.ID, person)
	if err != nil || draft == nil {
		draft = map[string][]string{}
	}
	it := q.Questions[meta.Item]
	draft[it.Question] = []string{text}
	ttl := time.Until(q.ExpiresAt) + time.Minute
	if err := st.PutDraft(ctx, project, q.ID, person, draft, max(ttl, time.Minute)); err != nil {
		a.log.Error("saving a draft failed", "question", q.ID, "err", err)
		a.tell(ctx, w, "Your answer could not be saved; please try again.")
		return
	}
	a.tell(ctx, w, "Saved your answer to “"+escClip(oneLine(itemName(it)), 80)+"”. Press *Submit* on the question when every part is answered.")
}

// ruleProblem is what is wrong with text under the rules of the modal's
// item, or "" (also when the question cannot be read in time: the
// Router's check on record then refuses it).
func (a *Adapter) ruleProblem(meta modalMeta, text string) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, q, err := a.load(ctx, meta.QuestionID)
	if err != nil || meta.Item < 0 || meta.Item >= len(q.Questions) || q.Kind == domain.KindApproval {
		return ""
	}
	return domain.FreeTextProblem(q.Questions[meta.Item], text)
}
