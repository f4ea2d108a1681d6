package telegram

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

var _ lifecycle.BatchChannel = (*Adapter)(nil)

// PostBatch implements lifecycle.BatchChannel: it sends the batch's
// message to the target's chat (in its forum topic, if any).
func (a *Adapter) PostBatch(ctx context.Context, b *domain.Batch, t domain.Target) (domain.Target, error) {
	return a.postMessage(ctx, t, a.renderBatch(b))
}

// UpdateBatch implements lifecycle.BatchChannel: it re-renders the batch's
// message with every call as it is now.
func (a *Adapter) UpdateBatch(ctx context.Context, b *domain.Batch, t domain.Target) error {
	if t.MessageTS == "" {
		return nil
	}
	return a.edit(ctx, t, a.renderBatch(b))
}

// shownCalls reads the batch of id and the calls the message m showed:
// the first shown calls whose copy it is.
func (a *Adapter) shownCalls(ctx context.Context, id string, shown int, m *Message) (*domain.Batch, []*domain.Question, error) {
	project, err := a.router.Locate(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	b, err := a.router.Batch(ctx, project, id)
	if err != nil {
		return nil, nil, err
	}
	var calls []*domain.Question
	for _, q := range b.Questions {
		if len(calls) < shown && postedOn(q, m) {
			calls = append(calls, q)
		}
	}
	return b, calls, nil
}

// batchCallback handles the batch's row: Allow all, Deny all, and Deny
// all with note… (a ForceReply prompt).
func (a *Adapter) batchCallback(ctx context.Context, cq *CallbackQuery, act action) reply {
	b, calls, err := a.shownCalls(ctx, act.QuestionID, act.Item, cq.Message)
	if err != nil {
		return reply{words.Refusal(err, nil, domain.Person{}).Text, true}
	}
	if len(calls) == 0 {
		return reply{words.NotOurs().Text, true}
	}
	if act.Op == opDenyAllNote {
		return a.batchPrompt(ctx, b, act.Item, cq)
	}
	decision := domain.DecideAllow
	if act.Op == opDenyAll {
		decision = domain.DecideDeny
	}
	return a.decideBatch(ctx, b, calls, cq.From, decision, nil)
}

// decideBatch decides calls (those of b the message showed) at once, as
// u: each call is checked and recorded as its own answer.
func (a *Adapter) decideBatch(ctx context.Context, b *domain.Batch, calls []*domain.Question, u User, decision string, reason *string) reply {
	who := personOf(u)
	for _, q := range calls {
		if q.Status != domain.StatusPending {
			continue
		}
		p, _ := a.person(ctx, q, u) // a chat's admins: the same for every call
		for _, g := range p.Groups {
			if !slices.Contains(who.Groups, g) {
				who.Groups = append(who.Groups, g)
			}
		}
	}
	ids := make([]string, len(calls))
	for i, q := range calls {
		ids[i] = q.ID
	}
	out, err := a.router.DecideBatch(ctx, b.ProjectID, b.ID, domain.BatchRespondRequest{Decision: decision, Reason: reason, Questions: ids}, who, true)
	if err != nil {
		return a.refuse(err, nil, who)
	}
	if len(out.Refused) > 0 {
		lines := []string{fmt.Sprintf("%d call(s) decided; %d left pending for someone else:", len(out.Decided)+len(out.Voted), len(out.Refused))}
		for _, r := range out.Refused {
			lines = append(lines, fmt.Sprintf("• call #%d: %s", slices.Index(ids, r.ID)+1, r.Message))
		}
		return reply{strings.Join(lines, "\n"), true}
	}
	return reply{text: fmt.Sprintf("Recorded for %d call(s).", len(out.Decided)+len(out.Voted))}
}

// batchPrompt asks the person for the note that denies every call the
// message showed, as a ForceReply, and keeps which batch it is for.
func (a *Adapter) batchPrompt(ctx context.Context, b *domain.Batch, shown int, cq *CallbackQuery) reply {
	m, who := cq.Message, personOf(cq.From)
	text := `<a href="tg://user?id=` + who.ID + `">` + esc(domain.Shorten(who.Name, 64)) + "</a>, " +
		esc(fmt.Sprintf("reply to this message with why you deny every waiting call of this batch (%d approvals).", len(b.Questions)))
	var sent Message
	err := a.send(ctx, sendMessage{ChatID: strconv.FormatInt(m.Chat.ID, 10), MessageThreadID: m.MessageThreadID, Text: text, ParseMode: "HTML",
		ReplyParameters: &ReplyParameters{MessageID: m.MessageID, AllowSendingWithoutReply: true},
		ReplyMarkup:     ForceReply{ForceReply: true, Selective: true, InputFieldPlaceholder: "Why deny them? The agent reads this."}}, &sent)
	if err != nil {
		a.log.Warn("sending the batch's note prompt failed", "batch", b.ID, "err", err)
		return reply{words.Failed().Text, true}
	}
	link := map[string][]string{"batch": {b.ProjectID, b.ID, strconv.Itoa(shown)},
		"msg": {strconv.FormatInt(m.Chat.ID, 10), strconv.FormatInt(m.MessageID, 10), m.Chat.Username}}
	if err := a.router.PutDraft(ctx, promptProject, promptKey(sent.Chat.ID, sent.MessageID), "", link, 24*time.Hour); err != nil {
		return reply{words.Failed().Text, true}
	}
	return reply{text: "Reply to my message below with why you deny them."}
}

// batchReply takes the reply to a batch's note prompt: every call the
// message showed is denied with the note as its reason, exactly as typed.
func (a *Adapter) batchReply(ctx context.Context, m *Message, link map[string][]string) {
	say := func(s string) { a.tell(ctx, *m.From, m, s) }
	if strings.TrimSpace(m.Text) == "" || len(link["batch"]) != 3 || len(link["msg"]) != 3 {
		say("The note was empty; nothing was recorded. Reply with text.")
		return
	}
	shown, _ := strconv.Atoi(link["batch"][2])
	chat, _ := strconv.ParseInt(link["msg"][0], 10, 64)
	id, _ := strconv.ParseInt(link["msg"][1], 10, 64)
	copyMsg := &Message{MessageID: id, Chat: Chat{ID: chat, Username: link["msg"][2]}}
	b, calls, err := a.shownCalls(ctx, link["batch"][1], shown, copyMsg)
	if err != nil || len(calls) == 0 {
		say(words.Gone().Text)
		return
	}
	note := m.Text
	a.replied(ctx, m, a.decideBatch(ctx, b, calls, *m.From, domain.DecideDeny, &note))
}
