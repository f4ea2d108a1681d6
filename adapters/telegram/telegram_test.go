package telegram

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/telegram/faketelegram"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

func opt(l string) domain.Option { return domain.Option{Label: l} }

func authAsk() domain.AskRequest {
	return domain.AskRequest{Questions: []domain.Item{{Question: "Which auth method?", Header: "Auth",
		Options: []domain.Option{opt("OAuth 2.0"), opt("API key")}}}}
}

// A webhook without the secret, or with a wrong one, is refused with 401
// before anything is read: the press changes nothing.
func TestWebhookSecret(t *testing.T) {
	e := newEnv(t)
	q := e.ask(authAsk())
	m := e.msg(q)
	for _, secret := range []string{"", "wrong", testSecret[:len(testSecret)-1], testSecret + "x"} {
		body := e.fake.Press(alice, m.Chat, m.ID, e.button(m, "API key"))
		if st := e.post(body, secret); st != http.StatusUnauthorized {
			t.Errorf("secret %q: %d, want 401", secret, st)
		}
	}
	got, _ := e.router.Question(context.Background(), "ops", q.ID)
	if got.Status != domain.StatusPending {
		t.Fatalf("an update without the right secret changed the question: %s", got.Status)
	}
	if n := len(e.fake.Toasts(alice.ID)); n != 0 {
		t.Errorf("an unauthenticated update was handled (%d toasts)", n)
	}
	// Telegram would retry the refused deliveries; these presses end here.
	e.fake.ForgetQueries()
	e.press(alice, m, e.button(m, "API key"))
	got, _ = e.router.Question(context.Background(), "ops", q.ID)
	if got.Status != domain.StatusAnswered || got.Response != "API key" || got.RespondedBy.Key() != "telegram:1001" {
		t.Fatalf("with the secret: %s %q by %v", got.Status, got.Response, got.RespondedBy)
	}
}

// Every button of every shape carries callback_data of at most 64 bytes
// that names no label; the fake checks each against the specification.
func TestCallbackDataIsShortAndOpaque(t *testing.T) {
	long := strings.Repeat("Ünïcödé label ", 20)
	items := []domain.Item{
		{Question: "First?", Header: "One", Options: []domain.Option{opt(long[:60] + "1"), opt(long[:60] + "2"), opt("c"), opt("d")}},
		{Question: "Second?", Header: "Two", MultiSelect: true, Options: []domain.Option{opt("x"), opt("y"), opt("z"), opt("w")}},
		{Question: "Third?", Header: "Three"},
		{Question: "Fourth?", Header: "Four", Options: []domain.Option{opt("p"), opt("q")}},
	}
	e := newEnv(t)
	for _, req := range []domain.AskRequest{authAsk(), {Questions: items}, {Questions: items[1:2]}, {Questions: items[2:3]},
		{Kind: domain.KindApproval, Question: "Deploy?", Options: []domain.Option{opt("Approve"), opt("Deny")}}} {
		req.RunID = "run-" + strconv.Itoa(len(req.Questions)) + req.Question
		q := e.ask(req)
		m := e.msg(q)
		n := 0
		for _, row := range m.Keyboard {
			for _, b := range row {
				n++
				if len(b.CallbackData) > maxCallbackData || b.CallbackData == "" {
					t.Errorf("callback_data %q: %d bytes", b.CallbackData, len(b.CallbackData))
				}
				for _, it := range q.Questions {
					for _, o := range it.Options {
						if len(o.Label) > 2 && strings.Contains(b.CallbackData, o.Label) {
							t.Errorf("callback_data %q carries the label %q", b.CallbackData, o.Label)
						}
					}
				}
			}
		}
		if n == 0 {
			t.Errorf("%v: no buttons", req.Questions)
		}
	}
}

// A button pressed on a message that is not the question's copy — an old
// message, another chat's, a forged callback — is refused privately and
// changes nothing.
func TestForeignOrOldButtonRefused(t *testing.T) {
	e := newEnv(t)
	q := e.ask(authAsk())
	m := e.msg(q)
	data := e.button(m, "API key")
	other := e.ask(domain.AskRequest{RunID: "run-2", Questions: []domain.Item{{Question: "Unrelated?", Options: []domain.Option{opt("a"), opt("b")}}}})
	om := e.msg(other)
	for name, press := range map[string][]byte{
		"another copy":            e.fake.Press(alice, om.Chat, om.ID, data),
		"a message too old":       e.fake.Press(alice, m.Chat, 99999, data),
		"garbage":                 e.fake.Press(alice, m.Chat, m.ID, "API key"),
		"an unknown question key": e.fake.Press(alice, m.Chat, m.ID, "AAAAAAAAAAAAAAAAAAAAAA:o0.1"),
	} {
		before := len(e.fake.Toasts(alice.ID))
		if st := e.deliver(press); st != 200 {
			t.Fatalf("%s: %d", name, st)
		}
		ts := e.fake.Toasts(alice.ID)
		if len(ts) != before+1 || !ts[len(ts)-1].Alert {
			t.Errorf("%s: not refused with an alert: %+v", name, ts)
			continue
		}
		if name != "an unknown question key" && !strings.Contains(ts[len(ts)-1].Text, "not on a message this bridge posted") {
			t.Errorf("%s: told %q", name, ts[len(ts)-1].Text)
		}
	}
	for _, qq := range []*domain.Question{q, other} {
		got, _ := e.router.Question(context.Background(), "ops", qq.ID)
		if got.Status != domain.StatusPending {
			t.Errorf("a foreign press changed question %s: %s", qq.ID, got.Status)
		}
	}
}

// "Other…" sends a ForceReply prompt; only a reply to that prompt answers,
// with the replier as who answered; replies to other messages are ignored.
func TestForceReplyMatching(t *testing.T) {
	e := newEnv(t)
	q := e.ask(authAsk())
	m := e.msg(q)
	e.press(alice, m, e.button(m, "Other…"))
	p := e.lastPrompt(m.Chat)
	if p == nil || !strings.Contains(p.Text, "Which auth method?") || p.ReplyTo != m.ID {
		t.Fatalf("no prompt replying to the copy: %+v", p)
	}
	// A reply to the question message itself, or to a person's message, is not an answer.
	e.deliver(e.fake.Reply(alice, m.Chat, m.ID, "not via the prompt"))
	e.deliver(e.fake.Reply(mallory, m.Chat, p.ID+1000, "noise"))
	if got, _ := e.router.Question(context.Background(), "ops", q.ID); got.Status != domain.StatusPending {
		t.Fatalf("a reply that is not to the prompt answered: %s %q", got.Status, got.Response)
	}
	reply := e.fake.Reply(alice, p.Chat, p.ID, "  Mutual <b>TLS</b> & more ")
	e.deliver(reply)
	e.settle()
	got, _ := e.router.Question(context.Background(), "ops", q.ID)
	if got.Status != domain.StatusAnswered || got.Response != "Mutual <b>TLS</b> & more" || got.RespondedBy.Key() != "telegram:1001" {
		t.Fatalf("the reply to the prompt: %s %q by %v", got.Status, got.Response, got.RespondedBy)
	}
	// The copy shows the text as text, never as markup.
	if c := e.msg(q); !strings.Contains(c.Text, "Mutual <b>TLS</b> & more") || live(c) {
		t.Errorf("the finished copy: %q (live %v)", c.Text, live(c))
	}
	// The same update delivered again (Telegram's retry) changes nothing.
	if st := e.deliver(reply); st != 200 {
		t.Fatal(st)
	}
}

// Agent text with HTML, entities and a fake link is shown as text: the fake
// parses the message as Telegram does and finds no markup from the agent.
func TestAgentTextIsEscaped(t *testing.T) {
	e := newEnv(t)
	evil := `<a href="https://evil.example">click</a> &amp; <b>bold</b> </pre>`
	q := e.ask(domain.AskRequest{Context: evil, Questions: []domain.Item{{Question: "Ship " + evil + "?", Header: "<i>x",
		Options: []domain.Option{opt("<b>yes</b>"), opt("no & never")}}}})
	m := e.msg(q)
	if !strings.Contains(m.Text, evil) {
		t.Errorf("the agent's text is not shown as written:\n%s", m.Text)
	}
	if strings.Contains(m.HTML, `<a href="https://evil.example">`) || strings.Contains(m.HTML, "<b>bold</b>") {
		t.Errorf("agent markup reached Telegram's parser:\n%s", m.HTML)
	}
}

// A storm of 429s delays posts and edits but never drops them: every
// question is posted once, and every copy ends finished.
func TestRateLimitStormDelaysNeverDrops(t *testing.T) {
	e := newEnv(t, func(_ *lifecycle.RouterConfig, c *Config) { c.MaxRetryAfter = 2 * time.Second })
	var qs []*domain.Question
	for i := range 3 {
		e.fake.RateLimit("sendMessage", 1)
		qs = append(qs, e.ask(domain.AskRequest{RunID: "run-" + strconv.Itoa(i), Questions: authAsk().Questions}))
	}
	if n := len(e.fake.Messages(faketelegram.Group)); n != 3 {
		t.Fatalf("%d messages after 3 posts through 429s, want 3", n)
	}
	for _, q := range qs {
		e.fake.RateLimit("editMessageText", 1)
		if _, err := e.router.CancelWithNote(context.Background(), "ops", q.ID, domain.CancelAgent, "done", nil); err != nil {
			t.Fatal(err)
		}
	}
	e.settle()
	for _, q := range qs {
		if m := e.msg(q); live(m) || !strings.Contains(m.Text, "done") {
			t.Errorf("copy not finished after a 429: %q", m.Text)
		}
	}
	// A retry_after longer than the adapter waits is returned as transient:
	// the Router retries it later, never drops it.
	q := qs[0]
	e.fake.RateLimit("editMessageText", 60)
	err := e.ad.Update(context.Background(), &domain.Question{ID: q.ID, Status: domain.StatusPending, Questions: q.Questions, ExpiresAt: time.Now().Add(time.Hour)}, q.Targets[0])
	if err == nil || lifecycle.IsPermanent(err) {
		t.Errorf("a long retry_after: %v; want a transient error", err)
	}
}

// The pacer keeps the adapter under Telegram's per-chat limit: a burst of
// posts to one chat meets no 429.
func TestPacingAvoidsRateLimits(t *testing.T) {
	e := newEnv(t, func(_ *lifecycle.RouterConfig, c *Config) { c.ChatInterval = 120 * time.Millisecond })
	e.fake.PerChat = 100 * time.Millisecond
	start := time.Now()
	for i := range 4 {
		e.ask(domain.AskRequest{RunID: "run-" + strconv.Itoa(i), Questions: authAsk().Questions})
	}
	if hits := e.fake.RateHits(); hits != 0 {
		t.Errorf("%d posts hit the per-chat limit", hits)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("4 posts took %s: not paced", took)
	}
}

// Editing a copy someone deleted is a permanent error (not retried); an
// edit that changes nothing is not an error.
func TestEditsOfDeletedAndUnchangedCopies(t *testing.T) {
	e := newEnv(t)
	q := e.ask(authAsk())
	if err := e.ad.Update(context.Background(), q, q.Targets[0]); err != nil {
		t.Errorf("an update that changes nothing: %v", err)
	}
	m := e.msg(q)
	e.fake.Delete(m.Chat, m.ID)
	q.Status = domain.StatusExpired
	err := e.ad.Finish(context.Background(), q, q.Targets[0])
	if err == nil || !lifecycle.IsPermanent(err) || !strings.Contains(err.Error(), "message to edit not found") {
		t.Errorf("finishing a deleted copy: %v; want a permanent error", err)
	}
}

// A forum topic target posts in the topic; an unknown topic is a permanent
// error naming it.
func TestForumTopics(t *testing.T) {
	e := newEnv(t)
	tg := group()
	tg.ThreadTS = strconv.FormatInt(faketelegram.Topic, 10)
	q := e.ask(domain.AskRequest{Questions: authAsk().Questions, Targets: []domain.Target{tg}})
	if m := e.msg(q); m.Thread != faketelegram.Topic {
		t.Errorf("posted in thread %d, want %d", m.Thread, faketelegram.Topic)
	}
	tg.ThreadTS = "7"
	_, err := e.ad.Post(context.Background(), q, tg)
	if err == nil || !lifecycle.IsPermanent(err) {
		t.Errorf("an unknown topic: %v", err)
	}
	tg.ThreadTS = "general"
	if _, err := e.ad.Post(context.Background(), q, tg); err == nil || !strings.Contains(err.Error(), "forum topic id") {
		t.Errorf("a thread that is no number: %v", err)
	}
}

// Multi-select: presses toggle ✓ on the keyboard and the person's choice;
// Submit answers with what is checked.
func TestMultiSelectToggles(t *testing.T) {
	e := newEnv(t)
	q := e.ask(domain.AskRequest{Questions: []domain.Item{{Question: "Which regions?", Header: "Regions", MultiSelect: true,
		Options: []domain.Option{opt("eu-west"), opt("us-east"), opt("ap-south")}}}})
	m := e.msg(q)
	e.press(alice, m, e.button(m, "eu-west"))
	e.press(alice, m, e.button(m, "us-east"))
	e.press(alice, m, e.button(m, "eu-west")) // off again
	now := e.msg(q)
	if b := e.button(now, "us-east"); b == "" || !strings.Contains(buttonText(now, b), "✓") || strings.Contains(buttonText(now, e.button(now, "eu-west")), "✓") {
		t.Errorf("the keyboard does not show the toggles: %+v", now.Keyboard)
	}
	e.press(alice, m, e.button(m, "Submit"))
	got, _ := e.router.Question(context.Background(), "ops", q.ID)
	if got.Status != domain.StatusAnswered || got.Answers["Which regions?"] != "us-east" {
		t.Fatalf("submitted: %s %v", got.Status, got.Answers)
	}
}

func buttonText(m *faketelegram.Msg, data string) string {
	for _, row := range m.Keyboard {
		for _, b := range row {
			if b.CallbackData == data {
				return b.Text
			}
		}
	}
	return ""
}

// An approval of a command shows it in a pre block and offers Allow, Deny,
// "Deny with note…" (a ForceReply whose text denies) and Dismiss.
func TestApprovalWithCommand(t *testing.T) {
	e := newEnv(t)
	input, _ := json.Marshal(map[string]string{"command": "rm -rf /var/tmp/<cache> && echo done"})
	q := e.ask(domain.AskRequest{Kind: domain.KindApproval, Question: "Run this command?",
		Options: []domain.Option{opt("Allow"), opt("Deny")}, Action: &domain.Action{Tool: "Bash", Input: input}})
	m := e.msg(q)
	if !strings.Contains(m.HTML, `<pre><code class="language-bash">rm -rf /var/tmp/&lt;cache&gt; &amp;&amp; echo done</code></pre>`) {
		t.Errorf("the command is not in a pre block:\n%s", m.HTML)
	}
	e.press(alice, m, e.button(m, denyNoteLabel))
	p := e.lastPrompt(m.Chat)
	if p == nil {
		t.Fatal("no prompt for the note")
	}
	e.deliver(e.fake.Reply(alice, p.Chat, p.ID, "not on Fridays"))
	e.settle()
	got, _ := e.router.Question(context.Background(), "ops", q.ID)
	if got.Status != domain.StatusAnswered || got.Decision == nil || got.Decision.Behavior == domain.BehaviorAllow {
		t.Fatalf("deny with note: %s %+v", got.Status, got.Decision)
	}
	if c := e.msg(q); !strings.Contains(c.Text, "not on Fridays") || live(c) {
		t.Errorf("the finished approval: %q", c.Text)
	}
}

// Reminders reply to the copy in its topic and mention Telegram responders
// by tg://user links.
func TestRemindMentions(t *testing.T) {
	e := newEnv(t)
	req := authAsk()
	req.Responders = &domain.Responders{Users: []string{"telegram:1001", "telegram:<b>", "slack:U1"}}
	q := e.ask(req)
	if err := e.ad.Remind(context.Background(), q, q.Targets[0]); err != nil {
		t.Fatal(err)
	}
	ms := e.fake.Messages(faketelegram.Group)
	r := ms[len(ms)-1]
	if r.ReplyTo != e.msg(q).ID || !strings.Contains(r.HTML, `<a href="tg://user?id=1001">`) || strings.Contains(r.HTML, "<b>") {
		t.Errorf("reminder: reply to %d, %q", r.ReplyTo, r.HTML)
	}
}

// setWebhook is called with the secret and only the updates the bridge
// handles; an http URL is refused before any call.
func TestSetWebhook(t *testing.T) {
	e := newEnv(t)
	if err := e.ad.SetWebhook(context.Background(), "http://bridge.example/telegram/webhook"); err == nil {
		t.Error("an http webhook URL was accepted")
	}
	if err := e.ad.SetWebhook(context.Background(), "https://bridge.example/telegram/webhook"); err != nil {
		t.Fatal(err)
	}
	url, secret := e.fake.Webhook()
	if url != "https://bridge.example/telegram/webhook" || secret != testSecret {
		t.Errorf("webhook %q with secret %q", url, secret)
	}
	for _, c := range e.fake.Calls() {
		if c.Method == "setWebhook" {
			if au, _ := json.Marshal(c.Params["allowed_updates"]); string(au) != `["message","callback_query"]` {
				t.Errorf("allowed_updates %s", au)
			}
			// Set, not left to Telegram's default: the bridge's bound on
			// requests in flight from one address must stay above it.
			if mc, ok := c.Params["max_connections"].(float64); !ok || int(mc) != WebhookMaxConnections {
				t.Errorf("max_connections %v, want %d", c.Params["max_connections"], WebhookMaxConnections)
			}
		}
	}
	if n := e.fake.MaxConnections(); n != WebhookMaxConnections {
		t.Errorf("Telegram delivers %d updates at once, want %d", n, WebhookMaxConnections)
	}
}

// A refusal longer than an alert holds (200 characters) is cut there and
// reaches the person whole: directly when they started the bot, else as a
// reply to them in the chat.
func TestLongRefusalReachesThePerson(t *testing.T) {
	e := newEnv(t)
	req := authAsk()
	var users []string
	for i := range 20 {
		users = append(users, "telegram:"+strconv.Itoa(5000+i))
	}
	req.Responders = &domain.Responders{Users: users}
	q := e.ask(req)
	m := e.msg(q)
	e.press(mallory, m, e.button(m, "API key"))
	ts := e.fake.Toasts(mallory.ID)
	if len(ts) != 1 || !ts[0].Alert || len([]rune(ts[0].Text)) > 200 {
		t.Fatalf("toasts: %+v", ts)
	}
	dm := e.fake.Messages(mallory.ID)
	if len(dm) != 1 || !strings.Contains(dm[0].Text, "telegram:5019") || !strings.Contains(dm[0].Text, domain.ChangedNothing) {
		t.Errorf("the whole refusal was not sent to mallory: %+v", dm)
	}
	before := len(e.fake.Messages(faketelegram.Group))
	e.press(bob, m, e.button(m, "API key"))
	ms := e.fake.Messages(faketelegram.Group)
	if len(ms) != before+1 || !strings.HasPrefix(ms[len(ms)-1].Text, "bob, Only ") || ms[len(ms)-1].ReplyTo != m.ID {
		t.Errorf("bob, who never started the bot, was not answered in the chat: %+v", ms[len(ms)-1])
	}
	if got, _ := e.router.Question(context.Background(), "ops", q.ID); got.Status != domain.StatusPending {
		t.Errorf("a refused press changed the question: %s", got.Status)
	}
}

// Without a webhook secret the bridge long-polls getUpdates: it removes any
// webhook first, and a press that arrives that way answers.
func TestLongPolling(t *testing.T) {
	e := newEnv(t, func(_ *lifecycle.RouterConfig, c *Config) { c.WebhookSecret = ""; c.PollTimeout = time.Second })
	q := e.ask(authAsk())
	m := e.msg(q)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.ad.Start(ctx) }()
	e.fake.Queue(e.fake.Press(alice, m.Chat, m.ID, e.button(m, "API key")))
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, _ := e.router.Question(context.Background(), "ops", q.ID)
		if got.Status == domain.StatusAnswered {
			if got.Response != "API key" || got.RespondedBy.Key() != "telegram:1001" {
				t.Errorf("answered %q by %v", got.Response, got.RespondedBy)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the polled press was not handled")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start: %v", err)
	}
	var methods []string
	for _, c := range e.fake.Calls() {
		methods = append(methods, c.Method)
	}
	del, poll := slices.Index(methods, "deleteWebhook"), slices.Index(methods, "getUpdates")
	if del < 0 || poll < del {
		t.Errorf("the webhook was not removed before polling: %v", methods)
	}
	rec := httptest.NewRecorder()
	mux := http.NewServeMux()
	e.ad.Register(mux)
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/telegram/webhook", strings.NewReader("{}")))
	if rec.Code != http.StatusNotFound {
		t.Errorf("a polling bridge serves the webhook: %d", rec.Code)
	}
}

// TestACallbackIDIsOnePress: Telegram gives every press its own
// callback_query.id. The same press sent again — under its update_id (a
// retry) or under a new update_id (a replay) — does nothing more: in
// particular the first press of Dismiss, sent again, never counts as the
// confirming second press. Two real presses still dismiss.
func TestACallbackIDIsOnePress(t *testing.T) {
	for _, c := range []struct {
		name      string
		again     func(e *env, m *faketelegram.Msg, first []byte) []byte
		dismissed bool
	}{
		{"the same update again", func(_ *env, _ *faketelegram.Msg, first []byte) []byte { return first }, false},
		{"the same press under a new update_id", func(e *env, _ *faketelegram.Msg, first []byte) []byte {
			return withUpdateID(e.t, first, 1<<40)
		}, false},
		{"a second press (a new callback id)", func(e *env, m *faketelegram.Msg, _ []byte) []byte {
			return e.fake.Press(alice, m.Chat, m.ID, e.button(m, "Dismiss"))
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			q := e.ask(authAsk())
			m := e.msg(q)
			first := e.fake.Press(alice, m.Chat, m.ID, e.button(m, "Dismiss"))
			if st := e.deliver(first); st != http.StatusOK {
				t.Fatalf("first press: %d", st)
			}
			if ts := e.fake.Toasts(alice.ID); len(ts) != 1 || !strings.Contains(ts[0].Text, "Press Dismiss again") {
				t.Fatalf("the first press does not ask: %+v", ts)
			}
			if st := e.deliver(c.again(e, m, first)); st != http.StatusOK {
				t.Fatalf("again: %d", st)
			}
			e.settle()
			got, _ := e.router.Question(context.Background(), "ops", q.ID)
			if dismissed := got.Status == domain.StatusCancelled; dismissed != c.dismissed {
				t.Fatalf("status %s, want dismissed=%v", got.Status, c.dismissed)
			}
		})
	}
}

// withUpdateID is update b with another update_id.
func withUpdateID(t testing.TB, b []byte, id int64) []byte {
	t.Helper()
	var u map[string]any
	if err := json.Unmarshal(b, &u); err != nil {
		t.Fatal(err)
	}
	u["update_id"] = id
	out, _ := json.Marshal(u)
	return out
}
