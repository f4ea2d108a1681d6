package crosstest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/discord"
	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/server/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clock is the bridge's injectable clock: escalation and expiry tests move
// it and call the sweeper's steps themselves, never sleeping.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

const (
	aliceToken = "tok-alice-0123456789"
	bobToken   = "tok-bob-0123456789"
	oncallID   = "S0ONCALL" // the on-call Slack user group
	oncallRole = "667788"   // the on-call Discord role
)

// onCall is one replica with every surface on one HTTP server, as
// cmd/bridge wires them: Slack and Discord endpoints, the web inbox (with
// operator sign-in) and the JSON API.
type onCall struct {
	t       *testing.T
	store   lifecycle.Store
	router  *lifecycle.Router
	clock   *clock
	slack   *fakeslack.Server
	discord *fakediscord.Server
	srv     *httptest.Server
}

func newOnCall(t *testing.T, routes ...domain.Route) *onCall {
	t.Helper()
	c := &clock{now: time.Now().UTC().Truncate(time.Second)}

	fs := fakeslack.New("C1", "C2")
	t.Cleanup(fs.Close)
	fs.SetGroup(oncallID, "U2")
	fd := fakediscord.New(t)
	fd.Now = c.Now // Discord checks signatures and token lifetimes on the bridge's clock

	b := newApp(t, app.Settings{
		Routes: routes, Clock: c, PostTimeout: 5 * time.Second,
		Slack: slack.Config{BotToken: fs.BotToken, SigningSecret: slackSecret, APIURL: fs.APIURL()},
		Discord: discord.Config{BotToken: fd.BotToken, ApplicationID: fd.AppID,
			PublicKey: fd.PublicKey(), APIURL: fd.APIURL(), AckAfter: time.Second, RetryBackoff: 10 * time.Millisecond},
		Operators: []api.Operator{
			{ID: "alice", Projects: []string{"ops"}, Token: aliceToken},
			{ID: "bob", Projects: []string{"ops"}, Token: bobToken}},
	})
	fd.Target = b.srv.URL + "/discord/interactions"
	return &onCall{t: t, store: b.app.Store(), router: b.app.Router(), clock: c, slack: fs, discord: fd, srv: b.srv}
}

func (b *onCall) ask(req domain.AskRequest) *domain.Question {
	b.t.Helper()
	if req.AgentID == "" {
		req.AgentID, req.AgentName = "deploy-bot", "Deploy bot"
	}
	res, err := b.router.Ask(context.Background(), "ops", &req, "")
	require.NoError(b.t, err)
	for _, tg := range res.Question.Targets {
		require.Empty(b.t, tg.Error, "posting to %s %s", tg.Platform, tg.Channel)
	}
	return res.Question
}

func (b *onCall) get(q *domain.Question) *domain.Question {
	b.t.Helper()
	got, err := b.store.Get(context.Background(), "ops", q.ID)
	require.NoError(b.t, err)
	return got
}

// copyOn returns the message ts (Slack) or id (Discord) of q's copy.
func (b *onCall) copyOn(q *domain.Question, platform, channel string) string {
	b.t.Helper()
	for _, tg := range b.get(q).Targets {
		if tg.Platform == platform && tg.Channel == channel && tg.MessageTS != "" {
			return tg.MessageTS
		}
	}
	b.t.Fatalf("no %s copy on %s", platform, channel)
	return ""
}

func (b *onCall) final(q *domain.Question) *domain.Question {
	b.t.Helper()
	got, err := b.router.Wait(context.Background(), "ops", q.ID, 5*time.Second)
	require.NoError(b.t, err)
	require.True(b.t, got.Status.Final(), "question still %s", got.Status)
	return got
}

// settle waits until no transition or copy update is in flight.
func (b *onCall) settle() {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(b.t, b.router.Flush(ctx))
}

// audit reads the question's audit trail through the API, as an operator.
func (b *onCall) audit(q *domain.Question) []domain.AuditEntry {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.srv.URL+"/api/projects/ops/audit?question="+q.ID, nil)
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	res, err := http.DefaultClient.Do(req)
	require.NoError(b.t, err)
	defer res.Body.Close()
	require.Equal(b.t, http.StatusOK, res.StatusCode)
	var out struct {
		Entries []domain.AuditEntry `json:"entries"`
	}
	require.NoError(b.t, json.NewDecoder(res.Body).Decode(&out))
	return out.Entries
}

func refusedBy(trail []domain.AuditEntry, platform, id string) []domain.AuditEntry {
	var out []domain.AuditEntry
	for _, e := range trail {
		if e.Type == "refused" && e.By != nil && e.By.Platform == platform && e.By.ID == id {
			out = append(out, e)
		}
	}
	return out
}

func types(trail []domain.AuditEntry) []string {
	var out []string
	for _, e := range trail {
		out = append(out, e.Type)
	}
	return out
}

// --- Slack as a person uses it ---

func (b *onCall) slackSigned(path string, body []byte) {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.srv.URL+path, strings.NewReader(string(body)))
	if strings.HasSuffix(path, "interactions") {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req.Header.Set("Content-Type", "application/json")
	}
	stamp, sig := slack.Sign(slackSecret, time.Now(), body)
	req.Header.Set("X-Slack-Request-Timestamp", stamp)
	req.Header.Set("X-Slack-Signature", sig)
	res, err := http.DefaultClient.Do(req)
	require.NoError(b.t, err)
	res.Body.Close()
	require.Equal(b.t, http.StatusOK, res.StatusCode)
}

// slackClick presses the button labelled label on the copy in channel.
func (b *onCall) slackClick(userID, channel, ts, label string) {
	b.t.Helper()
	b.slackSigned("/slack/interactions", b.slackClickBody(userID, channel, ts, label))
}

// slackClickBody is what Slack sends for a click on the button labelled
// label as the copy shows it now (a client may send it later).
func (b *onCall) slackClickBody(userID, channel, ts, label string) []byte {
	b.t.Helper()
	m, ok := b.slack.Message(channel, ts)
	require.True(b.t, ok)
	var blocks []struct {
		BlockID  string           `json:"block_id"`
		Elements []map[string]any `json:"elements"`
	}
	require.NoError(b.t, json.Unmarshal(m.Blocks, &blocks))
	var action map[string]any
	for _, bl := range blocks {
		for _, el := range bl.Elements {
			if tx, ok := el["text"].(map[string]any); ok && tx["text"] == label {
				action = map[string]any{"action_id": el["action_id"], "block_id": bl.BlockID, "type": el["type"],
					"value": el["value"], "action_ts": "1.1"}
			}
		}
	}
	require.NotNil(b.t, action, "no button %q on the Slack copy", label)
	name := strings.ToLower(userID)
	payload, _ := json.Marshal(map[string]any{"type": "block_actions", "trigger_id": b.slack.Trigger(),
		"user":      map[string]any{"id": userID, "username": name, "name": name},
		"container": map[string]any{"type": "message", "channel_id": channel, "message_ts": ts},
		"channel":   map[string]any{"id": channel}, "actions": []any{action}})
	return []byte(url.Values{"payload": {string(payload)}}.Encode())
}

// slackModal submits the answer modal of question qid as userID. The
// private metadata is the one the adapter writes, so a submission works
// whether or not this person was the one who opened the modal.
func (b *onCall) slackModal(userID, qid, text string) {
	b.t.Helper()
	meta, _ := json.Marshal(map[string]any{"q": qid, "i": 0, "c": "C1"})
	payload, _ := json.Marshal(map[string]any{"type": "view_submission",
		"user": map[string]any{"id": userID, "username": strings.ToLower(userID), "name": strings.ToLower(userID)},
		"view": map[string]any{"id": "V1", "callback_id": "askbridge_answer", "private_metadata": string(meta),
			"state": map[string]any{"values": map[string]any{"ab_text": map[string]any{
				"text": map[string]any{"type": "plain_text_input", "value": text}}}}}})
	b.slackSigned("/slack/interactions", []byte(url.Values{"payload": {string(payload)}}.Encode()))
}

var eventSeq sync.Mutex
var eventN int

// slackReply posts text as userID in the thread of the copy ts on C1.
func (b *onCall) slackReply(userID, ts, text string) {
	b.t.Helper()
	eventSeq.Lock()
	eventN++
	id := fmt.Sprintf("Ev%d", eventN)
	eventSeq.Unlock()
	replyTS := b.slack.Seed("C1", ts, userID, text)
	body, _ := json.Marshal(map[string]any{"type": "event_callback", "event_id": id, "event": map[string]any{
		"type": "message", "user": userID, "text": text, "ts": replyTS, "thread_ts": ts, "channel": "C1"}})
	b.slackSigned("/slack/events", body)
}

// told waits for a new private message to userID and returns it.
func (b *onCall) told(userID string, before int) string {
	b.t.Helper()
	var msgs []fakeslack.Ephemeral
	require.Eventually(b.t, func() bool {
		msgs = b.slack.Ephemerals(userID)
		return len(msgs) > before
	}, 5*time.Second, 5*time.Millisecond, "%s was never told why nothing happened", userID)
	return msgs[len(msgs)-1].Text
}

// slackSays waits until the Slack copy's blocks contain every want.
func (b *onCall) slackSays(channel, ts string, want ...string) fakeslack.Message {
	b.t.Helper()
	var m fakeslack.Message
	ok := assert.Eventually(b.t, func() bool {
		m, _ = b.slack.Message(channel, ts)
		for _, w := range want {
			if !strings.Contains(m.Texts(), w) {
				return false
			}
		}
		return true
	}, 5*time.Second, 5*time.Millisecond)
	if !ok {
		b.t.Fatalf("the Slack copy on %s does not say %q:\n%s", channel, want, m.Texts())
	}
	return m
}

// --- Discord ---

var (
	dAlice = fakediscord.User{ID: "4455", Name: "alice"}
	dCarol = fakediscord.User{ID: "7777", Name: "carol", Roles: []string{oncallRole}}
	dBob   = fakediscord.User{ID: "9999", Name: "bob", Roles: []string{"111"}}
)

// discordSays waits until the Discord copy's content and embed contain
// every want.
func (b *onCall) discordSays(id string, want ...string) *fakediscord.Message {
	b.t.Helper()
	var m *fakediscord.Message
	text := func() string {
		var s strings.Builder
		s.WriteString(m.Content)
		for _, e := range m.Embeds {
			s.WriteString("\n" + e.Title + "\n" + e.Description)
			for _, f := range e.Fields {
				s.WriteString("\n" + f.Name + ": " + f.Value)
			}
			if e.Footer != nil {
				s.WriteString("\n" + e.Footer.Text)
			}
		}
		return s.String()
	}
	ok := assert.Eventually(b.t, func() bool {
		m = b.discord.Message(id)
		for _, w := range want {
			if !strings.Contains(text(), w) {
				return false
			}
		}
		return true
	}, 5*time.Second, 5*time.Millisecond)
	if !ok {
		b.t.Fatalf("the Discord copy does not say %q:\n%s", want, text())
	}
	return m
}

func liveControls(m *fakediscord.Message) int {
	n := 0
	for _, row := range m.Components {
		for _, c := range row.Components {
			if !c.Disabled {
				n++
			}
		}
	}
	return n
}

// --- the web inbox and the API ---

type browser struct {
	t    *testing.T
	base string
	hc   *http.Client
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signIn opens the web inbox as the operator with token.
func (b *onCall) signIn(token string) *browser {
	b.t.Helper()
	jar, _ := cookiejar.New(nil)
	br := &browser{t: b.t, base: b.srv.URL, hc: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	code, _ := br.post("/login", url.Values{"csrf": {br.csrf("/login")}, "token": {token}, "next": {"/"}})
	require.Equal(b.t, http.StatusSeeOther, code)
	return br
}

func (br *browser) get(path string) (int, string) {
	br.t.Helper()
	res, err := br.hc.Get(br.base + path)
	require.NoError(br.t, err)
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

func (br *browser) post(path string, form url.Values) (int, string) {
	br.t.Helper()
	res, err := br.hc.PostForm(br.base+path, form)
	require.NoError(br.t, err)
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

func (br *browser) csrf(path string) string {
	br.t.Helper()
	_, body := br.get(path)
	m := csrfRe.FindStringSubmatch(body)
	require.NotNil(br.t, m, "no form on %s", path)
	return m[1]
}

// answerOnWeb clicks the first option of the question's card.
func (br *browser) answerOnWeb(q *domain.Question) (int, string) {
	return br.post("/questions/"+q.ID+"/answer", url.Values{"csrf": {br.csrf("/questions/" + q.ID)},
		"return": {"question"}, "a0": {"o0"}})
}

// respondAPI answers through POST .../respond with an operator token.
func (b *onCall) respondAPI(token string, q *domain.Question, response string) (int, map[string]any) {
	b.t.Helper()
	body, _ := json.Marshal(map[string]any{"response": response})
	req, _ := http.NewRequest(http.MethodPost, b.srv.URL+"/api/projects/ops/agent-questions/"+q.ID+"/respond", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(b.t, err)
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// TestPolicyMatrixOnEverySurface: one responders policy — listed users,
// a Slack user group, a Discord role, exclude_requester — decides on every
// surface the same way. A refused attempt changes nothing (the question
// stays pending, no copy is edited), the person is told who may answer,
// and the refusal is in the audit trail.
func TestPolicyMatrixOnEverySurface(t *testing.T) {
	b := newOnCall(t)
	responders := &domain.Responders{
		Users:  []string{"slack:U1", "discord:4455", "web:alice", "api:alice"},
		Groups: map[string][]string{"slack_usergroups": {oncallID}, "discord_roles": {oncallRole}}, ExcludeRequester: true}
	const someoneElse = "slack:U0REQ"

	type person struct{ platform, id string }
	// An attempt acts as one person on one surface; a refused one also
	// checks what the person was told.
	type attempt func(t *testing.T, q *domain.Question, allowed bool)
	slackAs := func(user string, do func(q *domain.Question)) attempt {
		return func(t *testing.T, q *domain.Question, allowed bool) {
			before := len(b.slack.Ephemerals(user))
			do(q)
			if !allowed {
				msg := b.told(user, before) // refused: told why
				if strings.Contains(msg, "asked for this") {
					assert.Contains(t, msg, "You asked for this, so you may not answer it yourself")
				} else {
					assert.Contains(t, msg, "Only ")
				}
				assert.Contains(t, msg, "Slack user group "+oncallID, "the refusal names who may answer")
			}
		}
	}
	discordAs := func(u fakediscord.User, do func(q *domain.Question) *fakediscord.Response) attempt {
		return func(t *testing.T, q *domain.Question, allowed bool) {
			resp := do(q)
			if !allowed {
				require.Equal(t, 4, resp.Type, "a refusal is a private message")
				require.NotZero(t, resp.Data.Flags&64, "a refusal is a private message")
				assert.Contains(t, fakediscord.Deref(resp.Data.Content), "Discord role "+oncallRole)
			}
		}
	}
	slackClick := func(user string) attempt {
		return slackAs(user, func(q *domain.Question) { b.slackClick(user, "C1", b.copyOn(q, "slack", "C1"), "Approve") })
	}
	slackModal := func(user string) attempt {
		return slackAs(user, func(q *domain.Question) {
			before := len(b.slack.Views())
			b.slackClick(user, "C1", b.copyOn(q, "slack", "C1"), "Deny with note…")
			// Allowed people get the modal; the refused get a private
			// message instead, and a modal they still submit (opened
			// before they were refused, or forged) is refused too.
			deadline := time.Now().Add(5 * time.Second)
			for len(b.slack.Views()) == before && len(b.slack.Ephemerals(user)) == 0 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			b.slackModal(user, q.ID, "Not before the dashboards are green")
		})
	}
	slackThread := func(user string) attempt {
		return slackAs(user, func(q *domain.Question) { b.slackReply(user, b.copyOn(q, "slack", "C1"), "1") })
	}
	discordClick := func(u fakediscord.User) attempt {
		return discordAs(u, func(q *domain.Question) *fakediscord.Response {
			return b.discord.Click(u, b.copyOn(q, "discord", "1000"), "Approve")
		})
	}
	discordModal := func(u fakediscord.User) attempt {
		return discordAs(u, func(q *domain.Question) *fakediscord.Response {
			msg := b.copyOn(q, "discord", "1000")
			resp := b.discord.Click(u, msg, "Deny with note…")
			if resp.Type != 9 {
				// Refused at the click; a modal opened by someone else and
				// submitted by this person is refused as well.
				modal := b.discord.Click(dAlice, msg, "Deny with note…")
				require.Equal(t, 9, modal.Type)
				return b.discord.SubmitModal(u, msg, modal, "Not before the dashboards are green")
			}
			return b.discord.SubmitModal(u, msg, resp, "Not before the dashboards are green")
		})
	}
	webForm := func(token string) attempt {
		return func(t *testing.T, q *domain.Question, allowed bool) {
			code, body := b.signIn(token).answerOnWeb(q)
			if !allowed {
				require.Equal(t, http.StatusForbidden, code)
				assert.Contains(t, body, "You may not answer this question")
				assert.Contains(t, body, "Slack user group "+oncallID)
			} else {
				assert.Equal(t, http.StatusSeeOther, code, body)
			}
		}
	}
	apiRespond := func(token string) attempt {
		return func(t *testing.T, q *domain.Question, allowed bool) {
			code, out := b.respondAPI(token, q, "Approve")
			if !allowed {
				require.Equal(t, http.StatusForbidden, code)
				e, _ := out["error"].(map[string]any)
				assert.Equal(t, "not_allowed", e["code"])
				assert.Contains(t, e["message"], "who may answer:")
			} else {
				assert.Equal(t, http.StatusAccepted, code, out)
			}
		}
	}

	cases := []struct {
		surface, who string
		as           person
		requester    bool
		allowed      bool
		do           attempt
	}{
		{"slack click", "listed user", person{"slack", "U1"}, false, true, slackClick("U1")},
		{"slack click", "user group member", person{"slack", "U2"}, false, true, slackClick("U2")},
		{"slack click", "outsider", person{"slack", "U3"}, false, false, slackClick("U3")},
		{"slack click", "requester in the group", person{"slack", "U2"}, true, false, slackClick("U2")},
		{"slack modal", "listed user", person{"slack", "U1"}, false, true, slackModal("U1")},
		{"slack modal", "user group member", person{"slack", "U2"}, false, true, slackModal("U2")},
		{"slack modal", "outsider", person{"slack", "U3"}, false, false, slackModal("U3")},
		{"slack modal", "requester in the group", person{"slack", "U2"}, true, false, slackModal("U2")},
		{"slack thread reply", "listed user", person{"slack", "U1"}, false, true, slackThread("U1")},
		{"slack thread reply", "user group member", person{"slack", "U2"}, false, true, slackThread("U2")},
		{"slack thread reply", "outsider", person{"slack", "U3"}, false, false, slackThread("U3")},
		{"slack thread reply", "requester in the group", person{"slack", "U2"}, true, false, slackThread("U2")},
		{"discord click", "listed user", person{"discord", "4455"}, false, true, discordClick(dAlice)},
		{"discord click", "role member", person{"discord", "7777"}, false, true, discordClick(dCarol)},
		{"discord click", "outsider", person{"discord", "9999"}, false, false, discordClick(dBob)},
		{"discord click", "requester with the role", person{"discord", "7777"}, true, false, discordClick(dCarol)},
		{"discord modal", "listed user", person{"discord", "4455"}, false, true, discordModal(dAlice)},
		{"discord modal", "role member", person{"discord", "7777"}, false, true, discordModal(dCarol)},
		{"discord modal", "outsider", person{"discord", "9999"}, false, false, discordModal(dBob)},
		{"discord modal", "requester with the role", person{"discord", "7777"}, true, false, discordModal(dCarol)},
		{"web form", "listed operator", person{"web", "alice"}, false, true, webForm(aliceToken)},
		{"web form", "other operator", person{"web", "bob"}, false, false, webForm(bobToken)},
		{"web form", "requester", person{"web", "alice"}, true, false, webForm(aliceToken)},
		{"api respond", "listed operator", person{"api", "alice"}, false, true, apiRespond(aliceToken)},
		{"api respond", "other operator", person{"api", "bob"}, false, false, apiRespond(bobToken)},
		{"api respond", "requester", person{"api", "alice"}, true, false, apiRespond(aliceToken)},
	}
	for i, c := range cases {
		t.Run(c.surface+"/"+c.who, func(t *testing.T) {
			requestedBy := someoneElse
			if c.requester {
				requestedBy = c.as.platform + ":" + c.as.id
			}
			q := b.ask(domain.AskRequest{RunID: fmt.Sprint("run-", i), Kind: domain.KindApproval,
				Question: "Deploy api v2 to production?", Options: []domain.Option{{Label: "Approve"}, {Label: "Deny"}},
				Targets:    []domain.Target{{Platform: "slack", Channel: "C1"}, {Platform: "discord", Channel: "1000"}},
				Responders: responders, RequestedBy: requestedBy})
			c.do(t, q, c.allowed)
			if c.allowed {
				got := b.final(q)
				assert.Equal(t, domain.StatusAnswered, got.Status)
				assert.Equal(t, c.as.platform, got.RespondedBy.Platform)
				assert.Equal(t, c.as.id, got.RespondedBy.ID)
				assert.Empty(t, refusedBy(b.audit(q), c.as.platform, c.as.id))
				return
			}
			var trail []domain.AuditEntry
			want := 1
			if strings.HasSuffix(c.surface, "modal") {
				want = 2 // the click that would open the modal, and the submission
			}
			require.Eventually(t, func() bool {
				trail = b.audit(q)
				return len(refusedBy(trail, c.as.platform, c.as.id)) == want
			}, 5*time.Second, 5*time.Millisecond, "the refusals are not in the audit trail: %v", types(trail))
			refusal := refusedBy(trail, c.as.platform, c.as.id)[0]
			assert.Contains(t, refusal.Detail, "who may answer:")
			if c.requester {
				assert.Contains(t, refusal.Detail, "asked for this")
			}
			b.settle()
			got := b.get(q)
			assert.Equal(t, domain.StatusPending, got.Status, "a refused attempt changes nothing")
			assert.Nil(t, got.RespondedBy)
			assert.Empty(t, got.Votes)
			assert.NotContains(t, types(b.audit(q)), "answered")
			sm, _ := b.slack.Message("C1", b.copyOn(q, "slack", "C1"))
			assert.Zero(t, sm.Edits, "the Slack copy was edited")
			assert.Zero(t, b.discord.Message(b.copyOn(q, "discord", "1000")).Edits, "the Discord copy was edited")
		})
	}
}

// TestOnCallGateAcrossSlackAndDiscord is the deploy gate of docs/on-call.md: two
// approvals from the Slack on-call group, a reminder after 10 min, after
// 20 min a copy on Discord with the on-call role added, another reminder
// at 25 min on both copies. An outsider's click is refused; a vote on
// Discord and one on Slack decide it; every copy shows the tally, then
// the outcome; the audit trail tells the whole story in order.
func TestOnCallGateAcrossSlackAndDiscord(t *testing.T) {
	route := domain.Route{Name: "oncall", Timeout: 30 * time.Minute, ApprovalsRequired: 2,
		Targets:    []domain.Target{{Platform: "slack", Channel: "C1"}},
		Responders: domain.Responders{Users: []string{"slack:U1"}, Groups: map[string][]string{"slack_usergroups": {oncallID}}},
		OnTimeout:  &domain.OnTimeout{Answer: "Deny"},
		Escalation: []domain.EscalationStep{
			{After: domain.Duration(10 * time.Minute), Remind: true},
			{After: domain.Duration(20 * time.Minute), Targets: []domain.Target{{Platform: "discord", Channel: "1000"}},
				Responders: &domain.Responders{Groups: map[string][]string{"discord_roles": {oncallRole}}, Users: []string{"discord:4455"}}},
			{After: domain.Duration(25 * time.Minute), Remind: true},
		}}
	b := newOnCall(t, route)
	ctx := context.Background()
	q := b.ask(domain.AskRequest{RunID: "deploy-42", Kind: domain.KindApproval, Route: "oncall",
		Question: "Deploy api v2 to production? @everyone", Options: []domain.Option{{Label: "Approve"}, {Label: "Deny"}}})
	ts := b.copyOn(q, "slack", "C1")
	b.slackSays("C1", ts, "Needs 2 approvals", "no votes yet", "Who may answer: slack:U1, Slack user group "+oncallID)

	// An outsider's click is refused and recorded.
	b.slackClick("U3", "C1", ts, "Approve")
	b.told("U3", 0)

	// Nothing is due before 10 minutes.
	b.clock.add(9*time.Minute + 59*time.Second)
	n, err := b.router.EscalateDue(ctx)
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Len(t, b.slack.Messages("C1"), 1, "no reminder before 10 min")

	// At 10 min: a reminder in the copy's thread mentioning the responders.
	b.clock.add(time.Second)
	n, err = b.router.EscalateDue(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	msgs := b.slack.Messages("C1")
	require.Len(t, msgs, 2)
	reminder := msgs[1]
	assert.Equal(t, ts, reminder.ThreadTS, "the reminder is a reply in the copy's thread")
	assert.Equal(t, "<@U1> <!subteam^"+oncallID+"> Still waiting for an answer — expires in 20 min. Needs 2 approvals.", reminder.Text)
	n, _ = b.router.EscalateDue(ctx)
	assert.Zero(t, n, "a step runs once")
	assert.Empty(t, b.discord.Messages("1000"), "nothing on Discord before 20 min")

	// At 20 min: a copy on Discord; the on-call role may answer now.
	b.clock.add(10 * time.Minute)
	n, err = b.router.EscalateDue(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	b.settle()
	msg := b.copyOn(q, "discord", "1000")
	dm := b.discordSays(msg, "Needs 2 approvals", "No votes yet", "Discord role "+oncallRole, "expires in 10 min")
	assert.Equal(t, 3, liveControls(dm), "Approve, Deny, Dismiss: a vote takes no note")
	assert.Empty(t, dm.Pings, "the copy itself pings nobody")
	b.slackSays("C1", ts, "Discord role "+oncallRole) // the Slack copy names the added people too
	assert.Equal(t, "Slack C1, Discord channel 1000", b.get(q).Places())

	// At 25 min: a reminder on both copies.
	b.clock.add(5 * time.Minute)
	n, err = b.router.EscalateDue(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	dmsgs := b.discord.Messages("1000")
	require.Len(t, dmsgs, 2)
	dr := dmsgs[1]
	assert.Equal(t, msg, dr.ReplyTo, "the reminder replies to the copy")
	assert.Equal(t, "<@&"+oncallRole+"> <@4455> Still waiting for an answer — expires in 5 min. Needs 2 approvals.", dr.Content)
	assert.Equal(t, []string{oncallRole}, dr.AllowedRoles)
	assert.Equal(t, []string{"4455"}, dr.AllowedUsers)
	assert.Equal(t, []string{"role:" + oncallRole, "user:4455"}, dr.Pings, "exactly the responders are pinged")
	sr := b.slack.Messages("C1")[2]
	assert.Equal(t, ts, sr.ThreadTS)
	assert.Contains(t, sr.Text, "expires in 5 min")

	// carol (on-call role) approves on Discord: every copy shows the tally.
	resp := b.discord.Click(dCarol, msg, "Approve")
	assert.Equal(t, 7, resp.Type, "the clicked copy shows the tally at once")
	assert.Equal(t, domain.StatusPending, b.get(q).Status)
	b.slackSays("C1", ts, "Approve: 1 of 2 approvals — carol")
	dm = b.discordSays(msg, "Approve: 1 of 2 approvals — carol")
	assert.Equal(t, 3, liveControls(dm), "the controls stay live while votes are missing")

	// u2 (Slack on-call group) approves: decided; every copy shows it.
	b.slackClick("U2", "C1", ts, "Approve")
	got := b.final(q)
	assert.Equal(t, "Approve", got.Response)
	assert.Len(t, got.Votes, 2)
	sm := b.slackSays("C1", ts, "Approved by carol, u2: Approve")
	assert.NotContains(t, string(sm.Blocks), `"actions"`, "the Slack copy keeps no buttons")
	dm = b.discordSays(msg, "Approved by carol, u2: Approve")
	assert.Zero(t, liveControls(dm), "the Discord copy, voted on earlier, is finished too")

	b.settle()
	trail := types(b.audit(q))
	assert.Equal(t, []string{"asked", "posted", "refused", "escalated", "reminded", "escalated", "posted",
		"escalated", "reminded", "reminded", "voted", "voted", "answered"}, trail)
}

// TestDefaultOnTimeoutFinishesEveryCopy: with on_timeout, the deadline
// answers the question with the default; every copy says so and the
// waiter gets the record flagged defaulted, answered by system:timeout.
func TestDefaultOnTimeoutFinishesEveryCopy(t *testing.T) {
	b := newOnCall(t)
	ctx := context.Background()
	timeout := domain.Duration(15 * time.Minute)
	two := 2
	q := b.ask(domain.AskRequest{RunID: "deploy-43", Kind: domain.KindApproval, Timeout: &timeout,
		Question: "Deploy api v2 to production?", Options: []domain.Option{{Label: "Approve"}, {Label: "Deny"}},
		ApprovalsRequired: &two, OnTimeout: &domain.OnTimeout{Answer: "Deny"},
		Targets: []domain.Target{{Platform: "slack", Channel: "C1"}, {Platform: "slack", Channel: "C2"},
			{Platform: "discord", Channel: "1000"}}})
	waited := make(chan *domain.Question, 1)
	go func() {
		got, _ := b.router.Wait(ctx, "ops", q.ID, time.Minute)
		waited <- got
	}()
	late := b.slackClickBody("U2", "C1", b.copyOn(q, "slack", "C1"), "Approve") // U2's client still shows the buttons
	b.slackClick("U1", "C1", b.copyOn(q, "slack", "C1"), "Approve")             // one vote of two: not enough
	b.slackSays("C2", b.copyOn(q, "slack", "C2"), "Approve: 1 of 2 approvals — u1")

	b.clock.add(15*time.Minute - time.Second)
	n, err := b.router.ExpireDue(ctx)
	require.NoError(t, err)
	assert.Zero(t, n)
	b.clock.add(time.Second)
	n, err = b.router.ExpireDue(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n)

	var got *domain.Question
	select {
	case got = <-waited:
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter was not woken")
	}
	require.NotNil(t, got)
	assert.Equal(t, domain.StatusAnswered, got.Status)
	assert.True(t, got.Defaulted)
	assert.Equal(t, "Deny", got.Response)
	assert.Equal(t, domain.Person{Platform: "system", ID: "timeout", Name: "system:timeout"}, *got.RespondedBy)

	const line = "No answer in time; answered by default: Deny"
	for _, ch := range []string{"C1", "C2"} {
		m := b.slackSays(ch, b.copyOn(q, "slack", ch), line)
		assert.NotContains(t, string(m.Blocks), `"actions"`, "the Slack copy on %s keeps no buttons", ch)
	}
	dm := b.discordSays(b.copyOn(q, "discord", "1000"), line)
	assert.Zero(t, liveControls(dm))

	// A click after the default changes nothing and says what happened.
	before := len(b.slack.Ephemerals("U2"))
	b.slackSigned("/slack/interactions", late)
	assert.Contains(t, b.told("U2", before), "This question was already answered by default when its time ran out: Deny.")
	assert.Equal(t, "Deny", b.get(q).Response)
}
