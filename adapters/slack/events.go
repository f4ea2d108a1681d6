package slack

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/approval"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/shape"
	"github.com/slack-go/slack"
)

// eventDedupeTTL outlasts Slack's retries (now, 1 min, 5 min).
const eventDedupeTTL = time.Hour

type outerEvent struct {
	Type      string          `json:"type"`
	Challenge string          `json:"challenge"`
	EventID   string          `json:"event_id"`
	Event     json.RawMessage `json:"event"`
}

type messageEvent struct {
	Type     string `json:"type"`
	Subtype  string `json:"subtype"`
	User     string `json:"user"`
	BotID    string `json:"bot_id"`
	Text     string `json:"text"`
	TS       string `json:"ts"`
	ThreadTS string `json:"thread_ts"`
	Channel  string `json:"channel"`
}

// serveEvent is POST /slack/events (Events API).
func (a *Adapter) serveEvent(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readSigned(w, r)
	if !ok {
		return
	}
	var ev outerEvent
	if shape.CheckDepth(body, shape.MaxDepth) != nil {
		http.Error(w, "event nests too deeply", http.StatusBadRequest)
		return
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		http.Error(w, "malformed event", http.StatusBadRequest)
		return
	}
	if ev.Type == "url_verification" {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"challenge": ev.Challenge})
		return
	}
	a.event(ev)
	w.WriteHeader(http.StatusOK)
}

// event handles one Events API envelope in the background, once per
// event_id whatever the number of retries and replicas.
func (a *Adapter) event(ev outerEvent) {
	if ev.Type != "event_callback" || ev.EventID == "" {
		return
	}
	var m messageEvent
	if err := json.Unmarshal(ev.Event, &m); err != nil {
		return
	}
	if m.Type != "message" || (m.Subtype != "" && m.Subtype != "thread_broadcast") || m.BotID != "" ||
		m.User == "" || m.ThreadTS == "" || m.ThreadTS == m.TS {
		return // only people's replies in threads can answer
	}
	a.goBG(a.answerTimeout(), func(ctx context.Context) {
		first, err := a.router.Once(ctx, "slack:event:"+ev.EventID, eventDedupeTTL)
		if err != nil {
			a.log.Error("deduplicating a Slack event failed", "event_id", ev.EventID, "err", err)
			return
		}
		if first {
			a.threadReply(ctx, m)
		}
	})
}

// threadReply takes a reply in a question's thread as an answer.
func (a *Adapter) threadReply(ctx context.Context, m messageEvent) {
	project, q := a.threadQuestion(ctx, m.Channel, m.ThreadTS)
	if q == nil {
		return
	}
	w := place{channel: m.Channel, thread: m.ThreadTS, user: m.User}
	req, problem := parseReply(q, m.Text)
	who := a.person(ctx, q, m.User, "")
	if problem != "" && domain.Permit(q, who) != nil {
		return // chatter from someone who may not answer: not an attempt
	}
	if err := a.router.Check(ctx, q, who); err != nil {
		// It looked like an answer: it is recorded as refused, and the
		// person is told why it did not count.
		a.tell(ctx, w, a.explain(w.user, err, q))
		return
	}
	if problem != "" {
		a.tell(ctx, w, problem)
		return
	}
	if !a.record(ctx, w, project, q, who, req) {
		return
	}
	err := a.call(ctx, "reactions.add", m.Channel, callOpts{}, func(ctx context.Context) error {
		return a.api.AddReactionContext(ctx, "white_check_mark", slack.NewRefToMessage(m.Channel, m.TS))
	})
	if err != nil {
		_ = a.call(ctx, "chat.postMessage", m.Channel, callOpts{}, func(ctx context.Context) error {
			_, _, err := a.api.PostMessageContext(ctx, m.Channel, slack.MsgOptionTS(m.ThreadTS),
				slack.MsgOptionText("Got it: <@"+m.User+">'s answer was recorded.", false))
			return err
		})
	}
}

// threadQuestion finds the newest pending question posted in a thread, from
// the block ids of our messages in it (no index needed: any replica can).
func (a *Adapter) threadQuestion(ctx context.Context, channel, threadTS string) (string, *domain.Question) {
	var msgs []slack.Message
	err := a.call(ctx, "conversations.replies", channel, callOpts{}, func(ctx context.Context) error {
		var err error
		msgs, _, _, err = a.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
			ChannelID: channel, Timestamp: threadTS, Limit: 200})
		return err
	})
	if err != nil {
		return "", nil
	}
	var seen []string
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, b := range msgs[i].Blocks.BlockSet {
			qid, _, ok := parseBlockID(b.ID())
			if !ok || slices.Contains(seen, qid) {
				continue
			}
			project, q, err := a.load(ctx, qid)
			// Only the bridge's own copy counts: anyone can post a message
			// whose block_id looks like ours.
			if err != nil || !copyAt(q, channel, msgs[i].Timestamp) {
				continue
			}
			seen = append(seen, qid)
			if q.Status == domain.StatusPending {
				return project, q
			}
		}
	}
	return "", nil
}

var (
	mentionRE = regexp.MustCompile(`<[@!#][^>]*>`)
	numbersRE = regexp.MustCompile(`^\d+(\s*[,;\s]\s*\d+)*$`)
)

// parseReply reads a thread reply: free text for an open-ended item,
// "other: …" for a free answer, option numbers ("2", "1,3") or labels.
// problem explains a reply it cannot read.
func parseReply(q *domain.Question, text string) (domain.RespondRequest, string) {
	text = strings.TrimSpace(unescape(mentionRE.ReplaceAllString(text, "")))
	if len(q.Questions) != 1 {
		return domain.RespondRequest{}, "This question has several parts: answer it with the controls on the message and press Submit."
	}
	it := q.Questions[0]
	answer := func(xs ...string) (domain.RespondRequest, string) {
		return domain.RespondRequest{Answers: map[string]domain.StringList{it.Question: xs}}, ""
	}
	if text == "" {
		return domain.RespondRequest{}, "That reply is empty."
	}
	if it.OpenEnded() {
		return answer(text)
	}
	help := "I could not read that as an answer. Reply with an option number (1–" + strconv.Itoa(len(it.Options)) + ")"
	if it.MultiSelect {
		help += " or several (\"1,3\")"
	}
	help += ", an option's label, or `other: your answer`."
	if q.Kind == domain.KindApproval {
		// Free text never decides an approval; a denial with a note is
		// spelled out ("deny: use make clean instead").
		help = "I could not read that as a decision. Reply with an option number (1–" + strconv.Itoa(len(it.Options)) + ") or an option's label"
		if approval.NoteAllowed(q) {
			help += ", or `deny: your reason` to deny with a note"
		}
		help += "."
		if rest, ok := cutPrefixFold(text, "deny:"); ok && approval.NoteAllowed(q) {
			// What follows "deny:" is the reason, never read as an answer.
			if req, ok := approval.NoteRequest(q, strings.TrimLeft(rest, " ")); ok {
				return req, ""
			}
			return domain.RespondRequest{}, help
		}
	} else if rest, ok := cutPrefixFold(text, "other:"); ok {
		if rest = strings.TrimSpace(rest); rest == "" {
			return domain.RespondRequest{}, help
		}
		return answer(rest)
	}
	if numbersRE.MatchString(text) {
		var labels []string
		for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ';' || r == ' ' }) {
			n, _ := strconv.Atoi(f)
			if n < 1 || n > len(it.Options) {
				return domain.RespondRequest{}, "There is no option " + f + ". " + help
			}
			if l := it.Options[n-1].Label; !slices.Contains(labels, l) {
				labels = append(labels, l)
			}
		}
		if len(labels) > 1 && !it.MultiSelect {
			return domain.RespondRequest{}, "Pick one option only. " + help
		}
		return answer(labels...)
	}
	match := func(s string) (string, bool) {
		o, ok := domain.MatchOption(it, s)
		return o.Label, ok
	}
	if l, ok := match(text); ok {
		return answer(l)
	}
	if it.MultiSelect {
		var labels []string
		for _, part := range strings.Split(text, ",") {
			l, ok := match(part)
			if !ok {
				return domain.RespondRequest{}, help
			}
			labels = append(labels, l)
		}
		return answer(labels...)
	}
	return domain.RespondRequest{}, help
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}
