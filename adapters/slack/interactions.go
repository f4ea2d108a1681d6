package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/shape"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/slack-go/slack"
)

const maxBody = 1 << 20

// place is where a person acted: where to answer them privately.
type place struct {
	channel, thread string
	user, name      string
	// message is the ts of the copy a click came from ("" from a modal,
	// an ephemeral message or a thread reply): the click must come from
	// one of the question's own copies (copyAt).
	message string
}

// copyAt reports whether q has a copy posted in channel at ts: a block_id
// naming a question is not enough, or a control on another message, in
// another channel or workspace, could act on another project's question.
func copyAt(q *domain.Question, channel, ts string) bool {
	for _, t := range q.Targets {
		if t.Platform == Platform && t.Channel == channel && t.MessageTS == ts {
			return true
		}
	}
	return false
}

// readSigned reads the body and verifies Slack's signature before anything
// is parsed. It writes the 401 itself.
func (a *Adapter) readSigned(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	a.arrived()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		http.Error(w, "request body too large or unreadable", http.StatusBadRequest)
		return nil, false
	}
	if err := verify(r.Header, body, a.cfg.SigningSecret, a.cfg.Now()); err != nil {
		a.log.Warn("refused a request without a valid Slack signature", "path", r.URL.Path, "reason", err.Error())
		http.Error(w, "invalid Slack signature", http.StatusUnauthorized)
		return nil, false
	}
	return body, true
}

// serveInteraction is POST /slack/interactions.
func (a *Adapter) serveInteraction(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readSigned(w, r)
	if !ok {
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("payload") == "" {
		http.Error(w, "missing payload", http.StatusBadRequest)
		return
	}
	if shape.CheckDepth([]byte(form.Get("payload")), shape.MaxDepth) != nil {
		http.Error(w, "payload nests too deeply", http.StatusBadRequest)
		return
	}
	ic, err := parseInteraction([]byte(form.Get("payload")))
	if err != nil {
		http.Error(w, "malformed payload", http.StatusBadRequest)
		return
	}
	// A captured click sent again within the signature's window (after the
	// person changed their vote, say) changes nothing. A button click is
	// acknowledged at once and checked before its work; a modal's
	// submission is answered with its outcome, so it is checked now.
	fresh := a.firstTimeOnce(ic)
	if ic.Type == slack.InteractionTypeViewSubmission && !fresh(r.Context()) {
		w.WriteHeader(http.StatusOK)
		return
	}
	resp := a.interactChecked(ic, fresh)
	if resp == nil {
		w.WriteHeader(http.StatusOK)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// interact handles one interaction, whichever transport brought it, and
// returns the acknowledgement's body (nil: empty). It never blocks on Slack
// or the store except to validate a modal: slow work runs in the background.
func (a *Adapter) interact(ic *slack.InteractionCallback) any {
	return a.interactChecked(ic, func(context.Context) bool { return true })
}

// interactChecked is interact for a transport whose interactions can be
// replayed: the work of a button click runs only if fresh reports it new.
func (a *Adapter) interactChecked(ic *slack.InteractionCallback, fresh func(context.Context) bool) any {
	switch ic.Type {
	case slack.InteractionTypeBlockActions:
		a.blockActions(ic, fresh)
	case slack.InteractionTypeViewSubmission:
		return a.viewSubmission(ic)
	}
	return nil
}

func userName(u slack.User) string {
	if u.Name != "" {
		return u.Name
	}
	return u.Profile.DisplayName
}

func (a *Adapter) blockActions(ic *slack.InteractionCallback, fresh func(context.Context) bool) {
	goBG := func(timeout time.Duration, fn func(ctx context.Context)) {
		a.goBG(timeout, func(ctx context.Context) {
			if fresh(ctx) {
				fn(ctx)
			}
		})
	}
	goTracked := func(timeout time.Duration, bounded bool, fn func(ctx context.Context)) {
		a.goTracked(timeout, bounded, func(ctx context.Context) {
			if fresh(ctx) {
				fn(ctx)
			}
		})
	}
	w := place{channel: ic.Container.ChannelID, thread: ic.Container.ThreadTs, user: ic.User.ID, name: userName(ic.User)}
	if ic.Container.Type == "message" && !ic.Container.IsEphemeral {
		w.message = ic.Container.MessageTs
	}
	if w.channel == "" {
		w.channel = ic.Channel.ID
	}
	for _, ba := range ic.ActionCallback.BlockActions {
		qid, part, ok := parseBlockID(ba.BlockID)
		if !ok {
			continue
		}
		if part == partAll {
			a.batchAction(ic, w, qid, ba.ActionID, ba.Value, goBG)
			continue
		}
		act, ok := parseActionID(ba.ActionID)
		if !ok {
			continue
		}
		switch act.verb {
		case actOption:
			goBG(a.answerTimeout(), func(ctx context.Context) {
				a.respond(ctx, w, qid, func(_ context.Context, _ string, q *domain.Question) (domain.RespondRequest, string) {
					if act.item >= len(q.Questions) || act.option >= len(q.Questions[act.item].Options) {
						return domain.RespondRequest{}, "That button no longer matches the question."
					}
					it := q.Questions[act.item]
					req := domain.RespondRequest{Answers: map[string]domain.StringList{it.Question: {it.Options[act.option].Label}}}
					if q.Action != nil && q.Kind == domain.KindApproval {
						req.Digest = q.Action.Digest // the action the message showed
					}
					return req, ""
				})
			})
		case actPick:
			// A choice that other items depend on (show_if): the message
			// is updated to ask the items it now shows.
			if w.message == "" || ic.BlockActionState == nil {
				continue
			}
			state := ic.BlockActionState.Values
			goBG(a.answerTimeout(), func(ctx context.Context) { a.reveal(ctx, w, qid, act.item, state) })
		case actOther, actAnswer:
			trigger := ic.TriggerID
			goTracked(3*time.Second, false, func(ctx context.Context) { a.openModal(ctx, w, qid, act.item, trigger) })
		case actSubmit:
			var state map[string]map[string]slack.BlockAction
			if ic.BlockActionState != nil {
				state = ic.BlockActionState.Values
			}
			goBG(a.answerTimeout(), func(ctx context.Context) {
				a.respond(ctx, w, qid, func(ctx context.Context, project string, q *domain.Question) (domain.RespondRequest, string) {
					draft, err := a.router.GetDraft(ctx, project, q.ID, "slack:"+w.user)
					if err != nil {
						a.log.Warn("reading a draft failed", "question", q.ID, "err", err)
					}
					return collect(q, state, draft)
				})
			})
		case actDismiss:
			goBG(a.answerTimeout(), func(ctx context.Context) { a.dismiss(ctx, w, qid) })
		case actEdit:
			trigger := ic.TriggerID
			goTracked(3*time.Second, false, func(ctx context.Context) { a.openEdit(ctx, w, qid, trigger) })
		case actRule:
			goBG(a.answerTimeout(), func(ctx context.Context) { a.allowWithRule(ctx, w, qid, act.item) })
		case actFullAction:
			trigger, page, viewID := ic.TriggerID, act.item, ""
			if ic.Container.Type == "view" {
				viewID = ic.View.ID
			}
			goTracked(3*time.Second, false, func(ctx context.Context) { a.showFullAction(ctx, w, qid, page, trigger, viewID) })
		case actFull, actFullContext:
			trigger, item := ic.TriggerID, act.item // -1 for the context
			goTracked(3*time.Second, false, func(ctx context.Context) { a.showFull(ctx, w, qid, item, trigger) })
		}
	}
}

// answerTimeout bounds recording one answer: the Router's wait for a
// webhook-mode run to pause, and the store.
func (a *Adapter) answerTimeout() time.Duration { return lifecycle.DefaultPauseWait + 30*time.Second }

// collect reads a Submit: the ticked boxes and radio buttons of the message,
// plus free text the person saved from "Other…" or "Write answer…". Every
// item must be answered; the hint names the ones that are not.
func collect(q *domain.Question, state map[string]map[string]slack.BlockAction, draft map[string][]string) (domain.RespondRequest, string) {
	answers := map[string]domain.StringList{}
	var missing []string
	choices := picks(q, state, draft)
	shown := domain.Shown(q.Questions, choices)
	for i, it := range q.Questions {
		if !shown[i] {
			continue // not asked: its condition is not met
		}
		if len(choices[i]) == 0 {
			missing = append(missing, "“"+escClip(oneLine(itemName(it)), 80)+"”")
		}
		answers[it.Question] = choices[i]
	}
	if len(missing) > 0 {
		return domain.RespondRequest{}, "Nothing was sent yet: please answer " + strings.Join(missing, " and ") +
			", then press Submit. Answers go to the agent all together."
	}
	return domain.RespondRequest{Answers: answers}, ""
}

// picks reads, per item, the ticked boxes and radio buttons of a message's
// state plus the free text saved from "Other…" or "Write answer…".
func picks(q *domain.Question, state map[string]map[string]slack.BlockAction, draft map[string][]string) [][]string {
	out := make([][]string, len(q.Questions))
	for i, it := range q.Questions {
		var picked []string
		label := func(v string) {
			if j, err := strconv.Atoi(v); err == nil && j >= 0 && j < len(it.Options) {
				picked = append(picked, it.Options[j].Label)
			}
		}
		if act, ok := state[blockID(q.ID, strconv.Itoa(i))][fmt.Sprintf("%s:%d", actPick, i)]; ok {
			if it.MultiSelect {
				for _, o := range act.SelectedOptions {
					label(o.Value)
				}
			} else if act.SelectedOption.Value != "" {
				label(act.SelectedOption.Value)
			}
		}
		if text := draft[it.Question]; len(text) > 0 {
			if it.MultiSelect {
				picked = append(picked, text...)
			} else {
				picked = text[:1] // "Other…" replaces a radio choice (radios cannot be cleared)
			}
		}
		out[i] = picked
	}
	return out
}

// reveal updates the message after a choice on item when other items
// depend on it, so the items its answer shows are asked and the ones it
// hides are not. The choices made so far stay selected.
func (a *Adapter) reveal(ctx context.Context, w place, qid string, item int, state map[string]map[string]slack.BlockAction) {
	_, q, err := a.load(ctx, qid)
	if err != nil || q.Status != domain.StatusPending || !copyAt(q, w.channel, w.message) {
		return
	}
	depends := false
	for _, it := range q.Questions {
		depends = depends || (it.ShowIf != nil && it.ShowIf.Item == item)
	}
	if !depends {
		return
	}
	x := a.extras(q)
	x.choices = picks(q, state, nil)
	blocks, text := renderQuestionX(q, a.router.Clock().Now(), x)
	err = a.call(ctx, "chat.update", w.channel, callOpts{}, func(ctx context.Context) error {
		_, _, _, err := a.api.UpdateMessageContext(ctx, w.channel, w.message, slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
		return err
	})
	if err != nil {
		a.log.Warn("showing the items a choice asks failed", "question", qid, "err", err)
	}
}

// load finds a question from the id a click carries.
func (a *Adapter) load(ctx context.Context, qid string) (string, *domain.Question, error) {
	project, err := a.router.Locate(ctx, qid)
	if err != nil {
		return "", nil, err
	}
	q, err := a.router.Question(ctx, project, qid)
	return project, q, err
}

// loadPending reads question qid for an action that answers it; when it
// cannot be read or is no longer pending, the person is told why (who
// answered, when it ended) and ok is false.
func (a *Adapter) loadPending(ctx context.Context, w place, qid string) (project string, q *domain.Question, ok bool) {
	project, q, err := a.load(ctx, qid)
	if err != nil {
		a.tell(ctx, w, a.explain(w.user, err, nil))
		return "", nil, false
	}
	if w.message != "" && !copyAt(q, w.channel, w.message) {
		a.tell(ctx, w, words.NotOurs().Text)
		return "", nil, false
	}
	if q.Status != domain.StatusPending {
		a.tell(ctx, w, a.explain(w.user, domain.StatusError(q), q))
		return "", nil, false
	}
	return project, q, true
}

// respond records a person's answer to question qid. build turns the
// interaction into an answer, or returns a hint for the person instead.
// It reports whether the answer was recorded.
func (a *Adapter) respond(ctx context.Context, w place, qid string,
	build func(ctx context.Context, project string, q *domain.Question) (domain.RespondRequest, string)) bool {
	project, q, ok := a.loadPending(ctx, w, qid)
	if !ok {
		return false
	}
	who := a.person(ctx, q, w.user, w.name)
	if err := a.router.Check(ctx, q, who); err != nil {
		a.tell(ctx, w, a.explain(w.user, err, q))
		return false
	}
	req, hint := build(ctx, project, q)
	if hint != "" {
		a.tell(ctx, w, hint)
		return false
	}
	return a.record(ctx, w, project, q, who, req)
}

// record answers q (just read and checked) as who, and tells the person
// when it fails. A webhook-mode answer waits inside the Router for the run
// to pause.
func (a *Adapter) record(ctx context.Context, w place, project string, q *domain.Question, who domain.Person, req domain.RespondRequest) bool {
	final, err := a.router.AnswerRead(ctx, q, req, who)
	if err == nil {
		a.log.Info("question answered", "question", q.ID, "project", project, "user", who.ID)
		return true
	}
	if final == nil {
		final = q
	}
	a.tell(ctx, w, a.explain(w.user, err, final))
	return false
}

func (a *Adapter) dismiss(ctx context.Context, w place, qid string) {
	project, q, err := a.load(ctx, qid)
	if err != nil {
		a.tell(ctx, w, a.explain(w.user, err, nil))
		return
	}
	who := a.person(ctx, q, w.user, w.name)
	final, err := a.router.Cancel(ctx, project, qid, domain.CancelUser, &who)
	if err != nil {
		if final == nil {
			final = q
		}
		a.tell(ctx, w, a.explain(w.user, err, final))
	}
}

// words writes the sentences every surface shows (domain.Words) in Slack
// mrkdwn: Slack users and user groups as mentions (an ephemeral message
// notifies nobody), text from agents and people escaped.
var words = domain.Words{Person: personRef, Responders: describe, Text: escape}

// explain turns an error of the Router into the sentence for the person
// (domain.Words: one table for every surface). q is the question as it is
// now, nil when it could not be read.
func (a *Adapter) explain(user string, err error, q *domain.Question) string {
	n := words.Refusal(err, q, domain.Person{Platform: "slack", ID: user})
	switch domain.ErrorCode(err) {
	case domain.EAlreadyAnswered, domain.EQuestionCancelled, domain.EQuestionExpired:
		return ":information_source: " + n.Text
	case domain.ENotAllowed, domain.EConflict, domain.ERunNotPaused, domain.EInvalidAnswer, domain.ENotFound:
		return n.Text
	}
	a.log.Error("recording a Slack answer failed", "err", err)
	return n.Text
}

// describe names who may answer, with Slack mentions for Slack users and
// user groups (an ephemeral message notifies nobody), then everyone in the
// words every surface uses (people and groups of other platforms too).
func describe(r domain.Responders) string {
	if r.Empty() {
		return domain.DescribeResponders(r)
	}
	var parts []string
	for _, u := range r.Users {
		if id, ok := strings.CutPrefix(u, "slack:"); ok && slackID(id) {
			parts = append(parts, "<@"+id+">")
		} else {
			parts = append(parts, escape(u))
		}
	}
	for _, g := range r.Group(GroupKind) {
		if slackID(g) {
			parts = append(parts, "<!subteam^"+g+">")
		}
	}
	return strings.Join(parts, ", ") + " (" + escape(domain.DescribeResponders(r)) + ")"
}

func slackID(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, c := range s {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// tell sends a private message to the person where they acted.
func (a *Adapter) tell(ctx context.Context, w place, text string) {
	if w.channel == "" || w.user == "" {
		return
	}
	opts := []slack.MsgOption{slack.MsgOptionText(clip(text, maxFallbackText), false)}
	if w.thread != "" {
		opts = append(opts, slack.MsgOptionTS(w.thread))
	}
	_ = a.call(ctx, "chat.postEphemeral", w.channel, callOpts{}, func(ctx context.Context) error {
		_, err := a.api.PostEphemeralContext(ctx, w.channel, w.user, opts...)
		return err
	})
}

func parseInteraction(payload []byte) (*slack.InteractionCallback, error) {
	var ic slack.InteractionCallback
	if err := json.Unmarshal(payload, &ic); err != nil {
		return nil, err
	}
	return &ic, nil
}

// replayWindow is how long a click is remembered: longer than a signature's
// timestamp is accepted.
const replayWindow = 10 * time.Minute

// firstTimeOnce returns what reports whether the interaction is seen for
// the first time on any replica, by its trigger_id (one per interaction),
// asking the store once however many actions it carries. When the store
// cannot say, it lets the interaction through (answering needs the store
// anyway).
func (a *Adapter) firstTimeOnce(ic *slack.InteractionCallback) func(context.Context) bool {
	var once sync.Once
	first := true
	return func(ctx context.Context) bool {
		once.Do(func() {
			if ic.TriggerID == "" {
				return
			}
			ok, err := a.router.Once(ctx, "slack:interaction:"+ic.Team.ID+":"+ic.TriggerID, replayWindow)
			first = err != nil || ok
		})
		return first
	}
}
