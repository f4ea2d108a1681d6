package telegram

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/approval"
	"github.com/askbridge/askbridge/domain"
)

// ---- ForceReply: free text ("Other…", "Answer…", "Deny with note…")

// promptProject keeps the prompts' links to their questions in the
// store's drafts, under a name no project can have.
const promptProject = "~telegram-prompts"

// prompt sends a ForceReply message that asks the person for their text,
// and keeps which question and item it is for, so the reply is matched to
// it on any replica.
func (a *Adapter) prompt(ctx context.Context, q *domain.Question, who domain.Person, cq *CallbackQuery, item int) reply {
	it := q.Questions[item]
	m := cq.Message
	ask := "reply to this message with your answer to: "
	placeholder := "Your answer"
	if approval.NoteAllowed(q) {
		ask, placeholder = "reply to this message with why you deny: ", "Why deny? The agent reads this."
	}
	text := `<a href="tg://user?id=` + who.ID + `">` + esc(domain.Shorten(who.Name, 64)) + "</a>, " + esc(ask) + "<b>" + esc(domain.Shorten(it.Question, 2000)) + "</b>"
	var sent Message
	err := a.send(ctx, sendMessage{ChatID: strconv.FormatInt(m.Chat.ID, 10), MessageThreadID: m.MessageThreadID, Text: text, ParseMode: "HTML",
		ReplyParameters: &ReplyParameters{MessageID: m.MessageID, AllowSendingWithoutReply: true},
		ReplyMarkup:     ForceReply{ForceReply: true, Selective: true, InputFieldPlaceholder: domain.Shorten(placeholder, maxPlaceholder)}}, &sent)
	if err != nil {
		a.log.Warn("sending the reply prompt failed", "question", q.ID, "err", err)
		return reply{words.Failed().Text, true}
	}
	ttl := min(max(q.ExpiresAt.Sub(a.now())+time.Minute, time.Minute), 24*time.Hour)
	link := map[string][]string{"q": {q.ProjectID, q.ID}, "item": {strconv.Itoa(item)}}
	if err := a.router.PutDraft(ctx, promptProject, promptKey(sent.Chat.ID, sent.MessageID), "", link, ttl); err != nil {
		return reply{words.Failed().Text, true}
	}
	return reply{text: "Reply to my message below with your answer."}
}

func promptKey(chat, msg int64) string {
	return strconv.FormatInt(chat, 10) + ":" + strconv.FormatInt(msg, 10)
}

// handleReply takes a reply to one of the bridge's prompts as the answer
// (or part of the draft) of the prompt's item. Replies to anything else
// are not the bridge's business.
func (a *Adapter) handleReply(ctx context.Context, m *Message) {
	to := m.ReplyToMessage
	if to.From == nil || !to.From.IsBot || strconv.FormatInt(to.From.ID, 10) != a.botID() {
		return
	}
	link, err := a.router.GetDraft(ctx, promptProject, promptKey(m.Chat.ID, to.MessageID), "")
	if err == nil && len(link["batch"]) > 0 {
		a.batchReply(ctx, m, link)
		return
	}
	if err != nil || len(link["q"]) != 2 || len(link["item"]) != 1 {
		return
	}
	text := strings.TrimSpace(m.Text)
	say := func(s string) { a.tell(ctx, *m.From, m, s) }
	if text == "" {
		say("The answer was empty; nothing was recorded. Reply with text.")
		return
	}
	project, id := link["q"][0], link["q"][1]
	item, _ := strconv.Atoi(link["item"][0])
	q, err := a.router.Question(ctx, project, id)
	if err != nil || item >= len(q.Questions) {
		say(words.Gone().Text)
		return
	}
	who, err := a.person(ctx, q, *m.From)
	if err != nil && domain.Permit(q, who) != nil {
		say(adminsUnread(q).text)
		return
	}
	it := q.Questions[item]
	if q.Kind == domain.KindApproval && !it.OpenEnded() {
		// The reply to "Deny with note…" denies with the note as the
		// reason, exactly as typed; it is never read as an answer.
		req, ok := approval.NoteRequest(q, m.Text)
		if !ok {
			say("This approval is decided with its buttons; a note cannot be added to it. " + domain.ChangedNothing)
			return
		}
		a.replied(ctx, m, a.respond(ctx, q, who, req))
		return
	}
	if !usesDrafts(q) {
		a.replied(ctx, m, a.respond(ctx, q, who, domain.RespondRequest{Answers: map[string]domain.StringList{it.Question: {text}}}))
		return
	}
	if r := a.gate(ctx, q, who); r != nil {
		say(r.text)
		return
	}
	d, err := a.editDraft(ctx, q, who, func(d map[string][]string) {
		var keep []string
		if it.MultiSelect {
			keep = optionLabels(it, d[it.Question])
		}
		d[it.Question] = append(keep, text)
	})
	if err != nil {
		say(words.Failed().Text)
		return
	}
	a.react(ctx, m)
	// The copy in this chat moves on to the person's next step.
	for _, t := range q.Targets {
		if t.Platform == Platform && copyChat(t) == strconv.FormatInt(m.Chat.ID, 10) {
			if id, err := strconv.ParseInt(t.MessageTS, 10, 64); err == nil {
				a.showMarks(ctx, q, who, &Message{MessageID: id, Chat: m.Chat}, d)
			}
			break
		}
	}
}

// react marks the person's reply as taken (👍), where everyone sees it.
func (a *Adapter) react(ctx context.Context, m *Message) {
	err := a.api.call(ctx, "setMessageReaction", map[string]any{"chat_id": strconv.FormatInt(m.Chat.ID, 10), "message_id": m.MessageID,
		"reaction": []map[string]string{{"type": "emoji", "emoji": "👍"}}}, nil)
	if err != nil {
		a.log.Info("reacting to a reply failed", "err", err)
	}
}

// replied tells the person a refusal of their reply, or marks it taken.
func (a *Adapter) replied(ctx context.Context, m *Message, r reply) {
	if r.alert {
		a.tell(ctx, *m.From, m, r.text)
		return
	}
	a.react(ctx, m)
}
