package telegram

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// maxUpdate bounds a webhook body; updates the bridge asks for are small.
const maxUpdate = 1 << 20

// handleTimeout bounds the handling of one update (a webhook-mode answer
// waits up to the router's pause wait).
const handleTimeout = time.Minute

// WebhookHandler is POST /telegram/webhook. The secret token header is
// compared in constant time before the body is read: anything else gets
// 401 and nothing is parsed. A good update is handled before the answer
// (Telegram sends a chat's updates one after another and retries non-2xx).
func (a *Adapter) WebhookHandler() http.Handler {
	secret := []byte(a.cfg.WebhookSecret)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("X-Telegram-Bot-Api-Secret-Token"))
		if len(secret) == 0 || subtle.ConstantTimeCompare(got, secret) != 1 {
			http.Error(w, "wrong or missing X-Telegram-Bot-Api-Secret-Token", http.StatusUnauthorized)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxUpdate))
		if err != nil {
			http.Error(w, "body too large or cut off", http.StatusRequestEntityTooLarge)
			return
		}
		u, err := decodeUpdate(body)
		if err != nil {
			http.Error(w, "not a Telegram update", http.StatusBadRequest)
			return
		}
		// An update taken is handled to the end even if Telegram hangs up.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), handleTimeout)
		defer cancel()
		a.handleUpdate(ctx, u)
		w.WriteHeader(http.StatusOK)
	})
}

// Start runs getUpdates long polling until ctx ends when no webhook secret
// is configured (a bridge without a public URL). With a secret it returns
// nil at once: Telegram delivers to the webhook, never to both.
func (a *Adapter) Start(ctx context.Context) error {
	if a.Webhook() {
		return nil
	}
	// getUpdates is refused (409) while a webhook is set.
	if err := a.api.call(ctx, "deleteWebhook", map[string]any{"drop_pending_updates": false}, nil); err != nil {
		a.log.Warn("removing the webhook before long polling failed", "err", err)
	}
	a.log.Info("telegram long polling started; updates arrive by getUpdates")
	var offset int64
	backoff := time.Second
	for ctx.Err() == nil {
		var us []json.RawMessage
		err := a.api.call(ctx, "getUpdates", getUpdates{Offset: offset, Timeout: int(a.cfg.PollTimeout / time.Second), AllowedUpdates: allowedUpdates}, &us)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			a.log.Warn("getUpdates failed; retrying", "err", err, "in", backoff)
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, time.Minute)
			continue
		}
		backoff = time.Second
		for _, raw := range us {
			u, err := decodeUpdate(raw)
			if err != nil {
				continue
			}
			offset = max(offset, u.UpdateID+1)
			a.pool.Go(func(ctx context.Context) { a.handleUpdate(ctx, u) })
		}
	}
	return nil
}

// handleUpdate handles one update once (Telegram retries a webhook
// delivery; a replica that restarts polling may see one again).
func (a *Adapter) handleUpdate(ctx context.Context, u *Update) {
	defer func() {
		if p := recover(); p != nil {
			a.log.Error("handling a Telegram update panicked", "update", u.UpdateID, "panic", p)
		}
	}()
	if first, err := a.router.Once(ctx, "telegram:update:"+a.botID()+":"+strconv.FormatInt(u.UpdateID, 10), 24*time.Hour); err == nil && !first {
		return
	}
	switch {
	case u.CallbackQuery != nil:
		// A callback id is one press: the same press under another
		// update_id (a replay) does nothing more — the first press of
		// Dismiss never counts as the confirming second. Kept in the
		// store, as update ids are, so it holds across replicas.
		if first, err := a.router.Once(ctx, "telegram:callback:"+a.botID()+":"+u.CallbackQuery.ID, 24*time.Hour); err == nil && !first {
			return
		}
		a.handleCallback(ctx, u.CallbackQuery)
	case u.Message != nil && u.Message.ReplyToMessage != nil && u.Message.From != nil && !u.Message.From.IsBot:
		a.handleReply(ctx, u.Message)
	}
}

// botID is the numeric part of the token (the bot's user id).
func (a *Adapter) botID() string { id, _, _ := strings.Cut(a.cfg.Token, ":"); return id }

// words writes the sentences every surface shows for Telegram: plain text
// (toasts and direct messages are not parsed).
var words = domain.Words{}

func personOf(u User) domain.Person {
	name := u.Username
	if name == "" {
		name = strings.TrimSpace(u.FirstName + " " + u.LastName)
	}
	return domain.Person{Platform: Platform, ID: strconv.FormatInt(u.ID, 10), Name: name}
}

// reply is what the person who pressed a button is told.
type reply struct {
	text  string
	alert bool // a refusal: shown as an alert the person dismisses
}

// handleCallback decides what a button press does, and always answers it
// (answerCallbackQuery), or the person's client keeps spinning.
func (a *Adapter) handleCallback(ctx context.Context, cq *CallbackQuery) {
	who := personOf(cq.From)
	r := a.callback(ctx, cq)
	a.answer(ctx, cq, who, r)
}

// answer answers the callback query with r. A refusal longer than a toast
// takes (200 characters) is cut there and sent whole to the person
// directly (or, if they never started the bot, as a reply in the chat).
func (a *Adapter) answer(ctx context.Context, cq *CallbackQuery, who domain.Person, r reply) {
	toast := domain.Shorten(r.text, maxToast)
	if err := a.api.call(ctx, "answerCallbackQuery", answerCallbackQuery{CallbackQueryID: cq.ID, Text: toast, ShowAlert: r.alert}, nil); err != nil {
		a.log.Warn("answering a button press failed", "err", err)
	}
	if toast != r.text && r.alert {
		a.tell(ctx, cq.From, cq.Message, r.text) // why nothing happened, whole
	}
}

// tell sends text to the person privately; when the bot may not write to
// them (they never started it), as a reply in the chat where they acted.
func (a *Adapter) tell(ctx context.Context, u User, where *Message, text string) {
	text = shortenUnits(text, maxText-100)
	err := a.send(ctx, sendMessage{ChatID: strconv.FormatInt(u.ID, 10), Text: text}, nil)
	if err == nil || where == nil {
		return
	}
	mention := `<a href="tg://user?id=` + strconv.FormatInt(u.ID, 10) + `">` + esc(domain.Shorten(personOf(u).Name, 64)) + `</a>, `
	err = a.send(ctx, sendMessage{ChatID: strconv.FormatInt(where.Chat.ID, 10), MessageThreadID: where.MessageThreadID,
		Text: mention + esc(text), ParseMode: "HTML", ReplyParameters: &ReplyParameters{MessageID: where.MessageID, AllowSendingWithoutReply: true}}, nil)
	if err != nil {
		a.log.Warn("telling a person why nothing happened failed", "err", err)
	}
}

// load reads the question of an action and checks the press came from one
// of its copies.
func (a *Adapter) load(ctx context.Context, id string, m *Message) (*domain.Question, *reply) {
	project, err := a.router.Locate(ctx, id)
	if err != nil {
		return nil, &reply{words.Refusal(err, nil, domain.Person{}).Text, true}
	}
	q, err := a.router.Question(ctx, project, id)
	if err != nil {
		return nil, &reply{words.Refusal(err, nil, domain.Person{}).Text, true}
	}
	if !postedOn(q, m) {
		return nil, &reply{words.NotOurs().Text, true}
	}
	return q, nil
}

// postedOn reports whether a message is one of q's copies: the same chat
// and message id. callback_data naming a question is not enough — a button
// copied onto an old or another message must not act on it.
func postedOn(q *domain.Question, m *Message) bool {
	if m == nil || m.MessageID == 0 {
		return false // an inaccessible (too old) message
	}
	id := strconv.FormatInt(m.MessageID, 10)
	chat := strconv.FormatInt(m.Chat.ID, 10)
	for _, t := range q.Targets {
		if t.Platform == Platform && t.MessageTS == id && (copyChat(t) == chat || t.Channel == "@"+m.Chat.Username) {
			return true
		}
	}
	return false
}

func (a *Adapter) callback(ctx context.Context, cq *CallbackQuery) reply {
	act, ok := parseCallbackData(cq.Data)
	if !ok {
		return reply{words.NotOurs().Text, true}
	}
	if isBatchOp(act.Op) {
		return a.batchCallback(ctx, cq, act)
	}
	q, r := a.load(ctx, act.QuestionID, cq.Message)
	if r != nil {
		return *r
	}
	who, err := a.person(ctx, q, cq.From)
	if err != nil && act.Op != opInfo && domain.Permit(q, who) != nil {
		return adminsUnread(q) // fail closed, and say why
	}
	if act.Item >= len(q.Questions) || (act.Op == opOption && act.Option >= len(q.Questions[act.Item].Options)) {
		return reply{"This button no longer matches the question. " + domain.ChangedNothing, true}
	}
	switch act.Op {
	case opInfo:
		return reply{text: q.Questions[act.Item].Question}
	case opOption:
		it := q.Questions[act.Item]
		if !usesDrafts(q) {
			return a.respond(ctx, q, who, domain.RespondRequest{Answers: map[string]domain.StringList{it.Question: {it.Options[act.Option].Label}}})
		}
		if r := a.gate(ctx, q, who); r != nil {
			return *r
		}
		return a.toggle(ctx, q, who, cq.Message, act.Item, act.Option)
	case opRule:
		if !hasAction(q) || act.Option >= len(q.Action.Suggestions) {
			return reply{"This choice no longer matches the question; nothing was recorded.", true}
		}
		rule := act.Option
		return a.respond(ctx, q, who, domain.RespondRequest{Rule: &rule, Digest: q.Action.Digest})
	case opOther, opText:
		if r := a.gate(ctx, q, who); r != nil {
			return *r
		}
		return a.prompt(ctx, q, who, cq, act.Item)
	case opNext:
		if r := a.gate(ctx, q, who); r != nil {
			return *r
		}
		return a.next(ctx, q, who, cq.Message, act.Item)
	case opSubmit:
		if r := a.gate(ctx, q, who); r != nil {
			return *r
		}
		return a.submit(ctx, q, who)
	case opDefaults:
		if r := a.gate(ctx, q, who); r != nil {
			return *r
		}
		req, ok := domain.DefaultsRequest(q.Questions)
		if !ok || q.Kind == domain.KindApproval {
			return reply{"This question has no default for every item asked; make your choices, then press Submit. " + domain.ChangedNothing, true}
		}
		return a.respond(ctx, q, who, req)
	case opDismiss:
		if r := a.gate(ctx, q, who); r != nil {
			return *r
		}
		// A button cannot ask first: the first press asks, a second press
		// within dismissWindow dismisses.
		first, err := a.router.Once(ctx, "telegram:dismiss:"+q.ID+":"+who.ID, dismissWindow)
		if err != nil {
			return reply{words.Failed().Text, true}
		}
		if first {
			return reply{words.DismissConfirm().Text + " Press Dismiss again to dismiss it.", true}
		}
		final, err := a.router.Cancel(ctx, q.ProjectID, q.ID, domain.CancelUser, &who)
		if err != nil {
			return a.refuse(err, final, who)
		}
		return reply{text: "Dismissed."}
	}
	return reply{words.NotOurs().Text, true}
}

// dismissWindow is how long a first press of Dismiss waits for the second.
const dismissWindow = 30 * time.Second

// gate lets through a person who may act on a pending question and says
// why to anyone else.
func (a *Adapter) gate(ctx context.Context, q *domain.Question, who domain.Person) *reply {
	if q.Status != domain.StatusPending {
		return &reply{words.Late(q).Text, true}
	}
	if err := a.router.Check(ctx, q, who); err != nil {
		r := a.refuse(err, q, who)
		return &r
	}
	return nil
}

// respond records req as who's answer.
func (a *Adapter) respond(ctx context.Context, q *domain.Question, who domain.Person, req domain.RespondRequest) reply {
	final, err := a.router.AnswerRead(ctx, q, req, who)
	if err != nil {
		return a.refuse(err, final, who)
	}
	if final.Status == domain.StatusPending {
		tally := domain.TallyLine(final)
		return reply{text: domain.Shorten("Your vote counts. "+tally, maxToast)}
	}
	if line := domain.AnswerLine(final); line != "" {
		return reply{text: "Recorded: " + line}
	}
	return reply{text: "Recorded."}
}

// refuse is the sentence for err, in the words every surface uses.
func (a *Adapter) refuse(err error, q *domain.Question, who domain.Person) reply {
	switch domain.ErrorCode(err) {
	case domain.ENotAllowed, domain.EAlreadyAnswered, domain.EQuestionCancelled, domain.EQuestionExpired,
		domain.EConflict, domain.ERunNotPaused, domain.EInvalidAnswer, domain.ENotFound:
	default:
		a.log.Error("handling a Telegram update failed", "err", err)
	}
	return reply{words.Refusal(err, q, who).Text, true}
}

// toggle changes the person's draft for one option: on a multi-select item
// it turns the option on or off, on a single-select item it chooses it. The
// keyboard then shows that person's choices with ✓.
func (a *Adapter) toggle(ctx context.Context, q *domain.Question, who domain.Person, m *Message, item, option int) reply {
	it := q.Questions[item]
	label := it.Options[option].Label
	var now []string
	d, err := a.editDraft(ctx, q, who, func(d map[string][]string) {
		cur := d[it.Question]
		on := false
		var next []string
		for _, c := range cur {
			if c == label {
				on = true
				continue
			}
			next = append(next, c)
		}
		if it.MultiSelect {
			if !on {
				next = append(next, label)
			}
		} else {
			next = []string{label}
		}
		d[it.Question] = next
		now = next
	})
	if err != nil {
		return reply{words.Failed().Text, true}
	}
	a.showMarks(ctx, q, who, m, d)
	choice := "nothing yet"
	if len(now) > 0 {
		choice = strings.Join(now, ", ")
	}
	return reply{text: domain.Shorten("Your choice for "+itemName(it, item)+": "+choice+". Press Submit when everything is answered.", maxToast)}
}

// next marks a multi-select item of several done in the person's draft, so
// the keyboard moves on to the next item asked.
func (a *Adapter) next(ctx context.Context, q *domain.Question, who domain.Person, m *Message, item int) reply {
	it := q.Questions[item]
	if !it.MultiSelect {
		return reply{"This button no longer matches the question. " + domain.ChangedNothing, true}
	}
	d, err := a.router.GetDraft(ctx, q.ProjectID, q.ID, draftKey(who))
	if err != nil {
		return reply{words.Failed().Text, true}
	}
	if len(d[it.Question]) == 0 {
		return reply{domain.Shorten("Check at least one choice for "+itemName(it, item)+" (or use Other), then press Next.", maxToast), true}
	}
	d, err = a.editDraft(ctx, q, who, func(d map[string][]string) {
		if n := strconv.Itoa(item); !slices.Contains(d[nextKey], n) {
			d[nextKey] = append(d[nextKey], n)
		}
	})
	if err != nil {
		return reply{words.Failed().Text, true}
	}
	a.showMarks(ctx, q, who, m, d)
	return reply{text: domain.Shorten(stepLine(q, renderOpts{Marks: d}), maxToast)}
}

// showMarks edits the copy's keyboard to show who's draft with ✓.
func (a *Adapter) showMarks(ctx context.Context, q *domain.Question, who domain.Person, m *Message, d map[string][]string) {
	for _, t := range q.Targets {
		if t.Platform == Platform && m != nil && t.MessageTS == strconv.FormatInt(m.MessageID, 10) {
			o := a.opts(q)
			o.Marks, o.MarksOf = d, who.String()
			if err := a.edit(ctx, t, render(q, a.now(), o)); err != nil {
				a.log.Info("showing a person's choices on the copy failed", "question", q.ID, "err", err)
			}
			return
		}
	}
}

// submit answers with the person's draft once every item asked (its
// condition met) has a choice.
func (a *Adapter) submit(ctx context.Context, q *domain.Question, who domain.Person) reply {
	draft, err := a.router.GetDraft(ctx, q.ProjectID, q.ID, draftKey(who))
	if err != nil {
		return reply{words.Failed().Text, true}
	}
	var missing []string
	answers := map[string]domain.StringList{}
	choices := make([][]string, len(q.Questions))
	for i, it := range q.Questions {
		choices[i] = draft[it.Question]
	}
	shown := domain.Shown(q.Questions, choices)
	for i, it := range q.Questions {
		if !shown[i] { // its condition is not met: not asked, listed in skipped
			continue
		}
		if len(draft[it.Question]) == 0 {
			missing = append(missing, itemName(it, i))
			continue
		}
		answers[it.Question] = draft[it.Question]
	}
	if len(missing) > 0 {
		return reply{domain.Shorten("Still to answer: "+strings.Join(missing, ", ")+". Make your choices, then press Submit.", maxToast), true}
	}
	return a.respond(ctx, q, who, domain.RespondRequest{Answers: answers})
}

func draftKey(p domain.Person) string { return Platform + ":" + p.ID }

// editDraft applies fn to the person's draft and keeps it until shortly
// after the question's deadline (at most a day), on any replica.
func (a *Adapter) editDraft(ctx context.Context, q *domain.Question, who domain.Person, fn func(map[string][]string)) (map[string][]string, error) {
	d, err := a.router.GetDraft(ctx, q.ProjectID, q.ID, draftKey(who))
	if err != nil {
		return nil, err
	}
	if d == nil {
		d = map[string][]string{}
	}
	fn(d)
	ttl := min(max(q.ExpiresAt.Sub(a.now())+time.Minute, time.Minute), 24*time.Hour)
	return d, a.router.PutDraft(ctx, q.ProjectID, q.ID, draftKey(who), d, ttl)
}

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
