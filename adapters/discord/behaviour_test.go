package discord

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/domain"
	"github.com/bwmarrin/discordgo"
)

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func withClock(c *testClock) envOption {
	return func(rc *lifecycle.RouterConfig, _ *Config) { rc.Clock = c }
}

func TestRespondersByUserAndRole(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	q := e.ask(&domain.AskRequest{Questions: []domain.Item{authItem()},
		Responders: &domain.Responders{Users: []string{"discord:1234"}, Groups: map[string][]string{"discord_roles": {"667788"}}}})
	msg := e.copyOf(q)

	for _, label := range []string{"OAuth 2.0", "Dismiss", "Other…"} {
		resp := f.Click(bob, msg, label)
		if resp.Type != 4 || resp.Data.Flags&64 == 0 {
			t.Fatalf("outsider clicking %s got type %d, want an ephemeral message", label, resp.Type)
		}
		if got := fakediscord.Deref(resp.Data.Content); !strings.Contains(got, "discord:1234") || !strings.Contains(got, "Discord role 667788") {
			t.Errorf("outsider told %q; it should name who may answer", got)
		}
	}
	if e.pending(q) != domain.StatusPending || f.Message(msg).Edits != 0 {
		t.Fatal("an outsider's click changed something")
	}

	f.Click(carol, msg, "API key") // carol has role 667788
	final := e.wait(q)
	if final.RespondedBy.ID != carol.ID || final.Response != "API key" {
		t.Fatalf("answered by %+v: %q", final.RespondedBy, final.Response)
	}
	e.settle()
	late := f.ClickDisabledAnyway(alice, msg, "ab:o:"+q.ID+":0:0")
	if late.Type != 4 || fakediscord.Deref(late.Data.Content) != "This question was already answered by carol: API key. This changed nothing." {
		t.Errorf("late click: type %d %q", late.Type, fakediscord.Deref(late.Data.Content))
	}
}

func TestSignaturesAreCheckedBeforeAnything(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	q := e.ask(&domain.AskRequest{Questions: []domain.Item{authItem()}})
	msg := e.copyOf(q)
	m := f.Message(msg)
	in, _, _ := f.Interaction(alice, m, 3, map[string]any{"custom_id": m.Components[0].Components[0].CustomID, "component_type": 2})
	body, _ := json.Marshal(in)
	_, otherKey, _ := ed25519.GenerateKey(rand.Reader)

	post := func(body []byte, sig, stamp string) int {
		req, _ := http.NewRequest("POST", f.Target, bytes.NewReader(body))
		if sig != "" {
			req.Header.Set("X-Signature-Ed25519", sig)
		}
		if stamp != "" {
			req.Header.Set("X-Signature-Timestamp", stamp)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	now := time.Now()
	goodSig, goodStamp := f.Sign(body, now)
	staleSig, staleStamp := f.Sign(body, now.Add(-10*time.Minute))
	futureSig, futureStamp := f.Sign(body, now.Add(10*time.Minute))
	forgedStamp := strconv.FormatInt(now.Unix(), 10)
	forged := hex.EncodeToString(ed25519.Sign(otherKey, append([]byte(forgedStamp), body...)))
	tampered := bytes.Replace(body, []byte(`"alice"`), []byte(`"mallory"`), 1)

	for name, c := range map[string]struct {
		body       []byte
		sig, stamp string
	}{
		"unsigned":          {body, "", ""},
		"no timestamp":      {body, goodSig, ""},
		"forged":            {body, forged, forgedStamp},
		"stale":             {body, staleSig, staleStamp},
		"future":            {body, futureSig, futureStamp},
		"tampered body":     {tampered, goodSig, goodStamp},
		"other timestamp":   {body, goodSig, strconv.FormatInt(now.Unix()+1, 10)},
		"signature garbage": {body, "zz" + goodSig[2:], goodStamp},
	} {
		if code := post(c.body, c.sig, c.stamp); code != http.StatusUnauthorized {
			t.Errorf("%s interaction: HTTP %d, want 401", name, code)
		}
	}
	if e.pending(q) != domain.StatusPending || f.Message(msg).Edits != 0 {
		t.Fatal("a refused interaction changed something")
	}

	ping := []byte(`{"id":"1","application_id":"424242","type":1,"token":"t","version":1}`)
	sig, stamp := f.Sign(ping, time.Now())
	req, _ := http.NewRequest("POST", f.Target, bytes.NewReader(ping))
	req.Header.Set("X-Signature-Ed25519", sig)
	req.Header.Set("X-Signature-Timestamp", stamp)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || strings.TrimSpace(string(b)) != `{"type":1}` {
		t.Errorf("PING: HTTP %d %s, want 200 {\"type\":1}", res.StatusCode, b)
	}

	// The genuine click still works afterwards.
	if code := post(body, goodSig, goodStamp); code != 200 {
		t.Fatalf("genuine click: HTTP %d", code)
	}
	if e.wait(q).Status != domain.StatusAnswered {
		t.Fatal("genuine click did not answer")
	}
}

func TestThreadPerRunKeepsRunTogether(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	first := e.ask(&domain.AskRequest{RunID: "run-7", Route: "threads", Questions: []domain.Item{authItem()}})
	m1 := f.Message(e.copyOf(first))
	if m1.ChannelID != "1000" || m1.Thread == "" {
		t.Fatalf("first question of the run: channel %s thread %q; want it in the channel, starting a thread", m1.ChannelID, m1.Thread)
	}
	if first.Targets[0].Refs[refThread] != m1.Thread {
		t.Fatalf("thread id not stored on the copy: %v", first.Targets[0].Refs)
	}
	f.Click(alice, m1.ID, "OAuth 2.0")
	e.wait(first)

	second := e.ask(&domain.AskRequest{RunID: "run-7", Route: "threads", Questions: []domain.Item{featuresItem()}})
	m2 := f.Message(e.copyOf(second))
	if m2.ChannelID != m1.Thread {
		t.Fatalf("second question posted in %s, want the run's thread %s", m2.ChannelID, m1.Thread)
	}
	if want := "https://discord.com/channels/900/" + m1.Thread + "/" + m2.ID; second.Targets[0].URL != want {
		t.Errorf("jump link %q, want %q", second.Targets[0].URL, want)
	}
	other := e.ask(&domain.AskRequest{RunID: "run-8", Route: "threads", Questions: []domain.Item{featuresItem()}})
	if m3 := f.Message(e.copyOf(other)); m3.ChannelID != "1000" || m3.Thread == m1.Thread {
		t.Errorf("another run's question went into run-7's thread")
	}
	// Clicks in the thread answer as anywhere else.
	f.Choose(alice, m2.ID, 0, "Login")
	f.Click(alice, m2.ID, "Submit")
	if e.wait(second).Answers["Which features?"] != "Login" {
		t.Error("answer in the thread not recorded")
	}
	e.settle()
	e.assertFinished(m2.ID, "Answered by alice: Login")
}

func TestRetriesOn429And5xx(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	f.Fail("post", http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway, http.StatusTooManyRequests)
	q := e.ask(&domain.AskRequest{Questions: []domain.Item{authItem()}})
	e.copyOf(q)
	if n := f.Count("post"); n != 5 {
		t.Errorf("%d post attempts, want 5 (4 failures then success)", n)
	}
	f.Fail("edit", http.StatusServiceUnavailable, http.StatusTooManyRequests)
	q.Status = domain.StatusExpired
	if err := e.ad.Finish(context.Background(), q, q.Targets[0]); err != nil {
		t.Fatalf("finish after transient failures: %v", err)
	}
	e.assertFinished(q.Targets[0].MessageTS, "Expired")
}

func TestRateLimitDoesNotBlockOtherChannels(t *testing.T) {
	f := fakediscord.New(t)
	f.AddChannel("2000", "900")
	e := newEnv(t, f, newTestStore(t))
	f.RetryAfter = 1.0
	f.Fail("post:2000", http.StatusTooManyRequests)

	var wg sync.WaitGroup
	var slow, fast time.Duration
	var slowQ *domain.Question
	start := time.Now()
	wg.Add(2)
	go func() {
		defer wg.Done()
		slowQ = e.ask(&domain.AskRequest{RunID: "a", Questions: []domain.Item{authItem()}, Targets: []domain.Target{{Platform: "discord", Channel: "2000"}}})
		slow = time.Since(start)
	}()
	go func() {
		defer wg.Done()
		time.Sleep(50 * time.Millisecond) // let the rate-limited post go first
		e.ask(&domain.AskRequest{RunID: "b", Questions: []domain.Item{authItem()}})
		fast = time.Since(start)
	}()
	wg.Wait()
	if slow < time.Second {
		t.Errorf("rate-limited post finished after %s; Retry-After was 1 s", slow)
	}
	if fast > 500*time.Millisecond {
		t.Errorf("a post to another channel took %s while one channel was rate limited", fast)
	}
	e.copyOf(slowQ)
}

// TestPostFailureIsReported; that no secret is in the error is checked by
// channeltest (PostToMissingChannel).
func TestPostFailureIsReported(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	res, err := e.router.Ask(context.Background(), "ops", &domain.AskRequest{AgentID: "a", Questions: []domain.Item{authItem()},
		Targets: []domain.Target{{Platform: "discord", Channel: "31337"}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	tg := res.Question.Targets[0]
	if tg.Error == "" || !strings.Contains(tg.Error, "Unknown Channel") || !strings.Contains(res.Message, "Posting to Discord channel 31337 failed") {
		t.Errorf("failure not reported: target error %q, message %q", tg.Error, res.Message)
	}
	f.Fail("post", 500, 500, 500, 500, 500)
	res, _ = e.router.Ask(context.Background(), "ops", &domain.AskRequest{AgentID: "a", RunID: "r2", Questions: []domain.Item{authItem()},
		Targets: []domain.Target{{Platform: "discord", Channel: "1000"}}}, "")
	if e := res.Question.Targets[0].Error; !strings.Contains(e, "HTTP 500") {
		t.Errorf("persistent 5xx: target error %q", e)
	}
}

func TestNewNamesMissingSettingsWithoutSecrets(t *testing.T) {
	r := lifecycle.NewRouter(lifecycle.RouterConfig{Store: newTestStore(t)})
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{ApplicationID: "1"}, "DISCORD_BOT_TOKEN"},
		{Config{BotToken: "sekrit-token"}, "DISCORD_APPLICATION_ID"},
		{Config{BotToken: "sekrit-token", ApplicationID: "1", PublicKey: "sekrit-not-hex"}, "DISCORD_PUBLIC_KEY"},
		{Config{BotToken: "sekrit-token", ApplicationID: "1", APIURL: "::sekrit"}, "DISCORD_API_URL"},
	} {
		_, err := New(c.cfg, r, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "sekrit") {
			t.Errorf("New(%+v) = %v; want an error naming %s without the secret", c.cfg, err, c.want)
		}
	}
	if _, err := New(Config{BotToken: "t", ApplicationID: "1"}, r, nil); err != nil {
		t.Fatal(err)
	}
}

func TestFinishUsesInteractionTokenThenBotToken(t *testing.T) {
	clock := &testClock{t: time.Now().UTC()}
	f := fakediscord.New(t)
	f.Now = clock.Now
	for _, c := range []struct {
		name      string
		advance   time.Duration
		wantToken bool
	}{{"within 15 minutes", 5 * time.Minute, true}, {"after 15 minutes", 16 * time.Minute, false}} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, f, newTestStore(t), withClock(clock))
			q := e.ask(&domain.AskRequest{RunID: strings.ReplaceAll(c.name, " ", "-"), Questions: []domain.Item{featuresItem()}, Timeout: durationPtr(time.Hour)})
			msg := e.copyOf(q)
			f.Choose(alice, msg, 0, "Login") // leaves its token on the copy
			e.settle()
			stored, _ := e.store.Get(context.Background(), "ops", q.ID)
			if stored.Targets[0].Refs[refToken] == "" || stored.Targets[0].Refs[refAppID] != f.AppID {
				t.Fatalf("interaction token not stored on the copy: %v", stored.Targets[0].Refs)
			}
			clock.Add(c.advance)
			tokenEdits, botEdits := f.Count("token-edit"), f.Count("edit")
			if _, err := e.router.Cancel(context.Background(), "ops", q.ID, domain.CancelAgent, nil); err != nil {
				t.Fatal(err)
			}
			e.settle()
			usedToken := f.Count("token-edit") > tokenEdits
			usedBot := f.Count("edit") > botEdits
			if usedToken != c.wantToken || usedBot == c.wantToken {
				t.Errorf("token edits %v, bot edits %v; want token %v", usedToken, usedBot, c.wantToken)
			}
			e.assertFinished(msg, "Cancelled (withdrawn by the agent)")
		})
	}
}

func durationPtr(d time.Duration) *domain.Duration { v := domain.Duration(d); return &v }

func TestRunNotPausedRetriesThenAnswers(t *testing.T) {
	f := fakediscord.New(t)
	st := newTestStore(t)
	// The run pauses after the acknowledgement's budget: the click is
	// deferred, then the copy shows the answer.
	e := newEnv(t, f, st, func(_ *lifecycle.RouterConfig, c *Config) { c.AckAfter = 150 * time.Millisecond })
	q := e.ask(&domain.AskRequest{RunID: "run-w", Questions: []domain.Item{authItem()}, Resume: &domain.ResumeRequest{URL: "https://runtime.example/resume"}})
	msg := e.copyOf(q)
	go func() {
		time.Sleep(600 * time.Millisecond)
		_, _ = st.PauseRun(context.Background(), "ops", "run-w", "deploy-bot", time.Now())
	}()
	start := time.Now()
	resp := f.Click(alice, msg, "OAuth 2.0")
	if resp.Type != 6 {
		t.Fatalf("click on a running run got type %d, want a deferred update (6)", resp.Type)
	}
	if took := time.Since(start); took > 300*time.Millisecond {
		t.Errorf("deferred response took %s", took)
	}
	final := e.wait(q)
	if final.Status != domain.StatusAnswered || final.ResumedRunID == "" {
		t.Fatalf("answer after the run paused: %s resumed %q", final.Status, final.ResumedRunID)
	}
	e.settle()
	e.assertFinished(msg, "Answered by alice: OAuth 2.0")
}

func TestRunNotPausedGivesUpAndSaysSo(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t), func(rc *lifecycle.RouterConfig, c *Config) {
		// Longer than the acknowledgement's budget: the click is deferred,
		// and the refusal follows privately.
		rc.PauseWait = 1500 * time.Millisecond
		c.AckAfter = 300 * time.Millisecond
	})
	q := e.ask(&domain.AskRequest{RunID: "run-x", Questions: []domain.Item{authItem()}, Resume: &domain.ResumeRequest{URL: "https://runtime.example/resume"}})
	msg := e.copyOf(q)
	if resp := f.Click(alice, msg, "OAuth 2.0"); resp.Type != 6 {
		t.Fatalf("got type %d, want 6", resp.Type)
	}
	e.settle()
	got := f.Private(alice.ID)
	if len(got) != 1 || !strings.Contains(got[0], "has not paused yet") {
		t.Fatalf("private follow-ups %q; want one telling alice to retry", got)
	}
	if e.pending(q) != domain.StatusPending {
		t.Fatal("question changed although the run never paused")
	}
}

// slowStore delays reads, like an overloaded Redis.
type slowStore struct {
	lifecycle.Store
	delay time.Duration
}

func (s slowStore) Get(ctx context.Context, p, id string) (*domain.Question, error) {
	time.Sleep(s.delay)
	return s.Store.Get(ctx, p, id)
}

func TestSlowHandlingIsDeferredThenEdited(t *testing.T) {
	f := fakediscord.New(t)
	mem := newTestStore(t)
	e := newEnv(t, f, slowStore{Store: mem, delay: 150 * time.Millisecond}, func(_ *lifecycle.RouterConfig, c *Config) { c.AckAfter = 100 * time.Millisecond })
	q := e.ask(&domain.AskRequest{Questions: []domain.Item{authItem()}})
	msg := e.copyOf(q)
	start := time.Now()
	resp := f.Click(alice, msg, "API key")
	if resp.Type != 6 || time.Since(start) > 250*time.Millisecond {
		t.Fatalf("slow click answered with type %d after %s; want a deferred update at AckAfter", resp.Type, time.Since(start))
	}
	final := e.wait(q)
	if final.Response != "API key" {
		t.Fatalf("response %q", final.Response)
	}
	e.settle()
	if f.Count("token-edit") == 0 {
		t.Error("the clicked message was not edited through the interaction token after the deferred ack")
	}
	e.assertFinished(msg, "Answered by alice: API key")
	// A slow outsider still hears why nothing happened, as a follow-up.
	q2 := e.ask(&domain.AskRequest{RunID: "r2", Questions: []domain.Item{authItem()}, Responders: &domain.Responders{Users: []string{"discord:1"}}})
	f.Click(bob, e.copyOf(q2), "API key")
	e.settle()
	if got := f.Private(bob.ID); len(got) != 1 || !strings.Contains(got[0], "discord:1") {
		t.Errorf("bob's follow-ups: %q", got)
	}
}

func TestGatewayUsesTheSameHandlers(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t), func(_ *lifecycle.RouterConfig, c *Config) { c.PublicKey = "" })
	q := e.ask(&domain.AskRequest{Questions: []domain.Item{featuresItem()}})
	msg := e.copyOf(q)
	gateway := func(u fakediscord.User, typ int, data map[string]any) {
		in, _, _ := f.Interaction(u, f.Message(msg), typ, data)
		b, _ := json.Marshal(in)
		var i discordgo.Interaction
		if err := json.Unmarshal(b, &i); err != nil {
			t.Fatal(err)
		}
		e.ad.HandleGatewayInteraction(&i)
		e.ad.Close(context.Background())
	}
	m := f.Message(msg)
	gateway(alice, 3, map[string]any{"custom_id": m.Components[0].Components[0].CustomID, "component_type": 3, "values": []string{"0", "2"}})
	gateway(bob, 3, map[string]any{"custom_id": m.Components[1].Components[0].CustomID, "component_type": 2})
	gateway(alice, 3, map[string]any{"custom_id": m.Components[1].Components[0].CustomID, "component_type": 2})
	final := e.wait(q)
	if final.Answers["Which features?"] != "Login, Billing" || final.RespondedBy.Name != "alice" {
		t.Fatalf("gateway answer: %v by %+v", final.Answers, final.RespondedBy)
	}
	if n := f.Count("callback"); n != 3 {
		t.Errorf("%d interaction callbacks, want exactly one per interaction (3)", n)
	}
	if got := f.Private(bob.ID); len(got) != 1 || !strings.Contains(got[0], "Still to answer") {
		t.Errorf("bob's Submit without choices: %q", got)
	}
	e.settle()
	e.assertFinished(msg, "Answered by alice: Login, Billing")
}

func TestClicksDuringABurstAreAcknowledgedFirstThenEdited(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, slowStore{Store: newTestStore(t), delay: 200 * time.Millisecond})
	q1 := e.ask(&domain.AskRequest{RunID: "r1", Questions: []domain.Item{authItem()}})
	q2 := e.ask(&domain.AskRequest{RunID: "r2", Questions: []domain.Item{authItem()}})
	m1, m2 := e.copyOf(q1), e.copyOf(q2)

	// Alice's click is being handled (the store is slow) when carol's
	// arrives: carol's is acknowledged at once, not after alice's.
	first := make(chan *fakediscord.Response, 1)
	go func() { first <- f.Click(alice, m1, "OAuth 2.0") }()
	for deadline := time.Now().Add(2 * time.Second); e.ad.undecided.Load() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the first click was never handled")
		}
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	resp := f.Click(carol, m2, "API key")
	if took := time.Since(start); resp.Type != 6 || took > 150*time.Millisecond {
		t.Fatalf("click during a burst answered with type %d after %s; want a deferred update at once", resp.Type, took)
	}
	if r := <-first; r.Type != 7 {
		t.Errorf("a click with nothing else in flight got type %d, want the final state at once (7)", r.Type)
	}
	if final := e.wait(q2); final.Response != "API key" || final.RespondedBy.Name != "carol" {
		t.Fatalf("deferred click recorded %q by %+v", final.Response, final.RespondedBy)
	}
	e.settle()
	e.assertFinished(m1, "Answered by alice: OAuth 2.0")
	e.assertFinished(m2, "Answered by carol: API key")
	if n := f.Message(m2).Edits; n != 1 || f.Count("edit") != 0 {
		t.Errorf("carol's copy edited %d times, %d bot edits, %d token edits, alice copy %d edits; want one edit through her interaction token", n, f.Count("edit"), f.Count("token-edit"), f.Message(m1).Edits)
	}
}

// A burst is not over while acknowledged clicks are still being handled:
// a click arriving then is acknowledged at once too, rather than waiting
// for its outcome as a click that comes alone does.
func TestClicksBehindAcknowledgedOnesAreAcknowledgedAtOnce(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, slowStore{Store: newTestStore(t), delay: 200 * time.Millisecond},
		func(_ *lifecycle.RouterConfig, c *Config) { c.AckAfter = time.Second })
	var qs []*domain.Question
	for i := range 3 {
		qs = append(qs, e.ask(&domain.AskRequest{RunID: fmt.Sprintf("r%d", i), Questions: []domain.Item{authItem()}}))
	}
	first := make(chan *fakediscord.Response, 1)
	go func() { first <- f.Click(alice, e.copyOf(qs[0]), "OAuth 2.0") }()
	for deadline := time.Now().Add(2 * time.Second); e.ad.undecided.Load() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the first click was never handled")
		}
		time.Sleep(time.Millisecond)
	}
	if resp := f.Click(bob, e.copyOf(qs[1]), "OAuth 2.0"); resp.Type != 6 {
		t.Fatalf("second click got type %d, want a deferred update", resp.Type)
	}
	if r := <-first; r.Type != 7 {
		t.Fatalf("the first click got type %d, want the final state (7)", r.Type)
	}
	// Bob's click is still being handled (slow store) when carol's comes.
	start := time.Now()
	resp := f.Click(carol, e.copyOf(qs[2]), "API key")
	if took := time.Since(start); resp.Type != 6 || took > 100*time.Millisecond {
		t.Fatalf("click behind a queued one answered with type %d after %s; want a deferred update at once", resp.Type, took)
	}
	for i, want := range []string{"oauth", "oauth", "API key"} {
		if got := e.wait(qs[i]).Response; got != want {
			t.Errorf("question %d: response %q, want %q", i, got, want)
		}
	}
	e.settle()
	e.assertFinished(e.copyOf(qs[2]), "Answered by carol: API key")
	// And once all is handled, a click that comes alone gets its outcome at once again.
	q := e.ask(&domain.AskRequest{RunID: "alone", Questions: []domain.Item{authItem()}})
	if resp := f.Click(alice, e.copyOf(q), "OAuth 2.0"); resp.Type != 7 {
		t.Errorf("a click alone got type %d, want 7", resp.Type)
	}
}

func TestClicksWaitingForARunDoNotHoldUpOtherAnswers(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t)) // runs are waited for 2 s
	// More webhook-mode clicks than there are workers, on runs that never pause.
	var waiting []*domain.Question
	for i := range maxWorkers + 2 {
		q := e.ask(&domain.AskRequest{RunID: fmt.Sprintf("run-webhook-%d", i), Questions: []domain.Item{authItem()},
			Resume: &domain.ResumeRequest{URL: "https://runtime.example/resume"}})
		if resp := f.Click(alice, e.copyOf(q), "OAuth 2.0"); resp.Type != 6 {
			t.Fatalf("click on a running run got type %d, want a deferred update (6)", resp.Type)
		}
		waiting = append(waiting, q)
	}
	// Meanwhile a click on an ordinary question is answered at once.
	q := e.ask(&domain.AskRequest{RunID: "run-wait-mode", Questions: []domain.Item{authItem()}})
	start := time.Now()
	f.Click(carol, e.copyOf(q), "API key")
	if final := e.wait(q); final.Response != "API key" {
		t.Fatalf("response %q", final.Response)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("the answer took %s: it waited behind clicks retrying for their runs", took)
	}
	for _, w := range waiting {
		if e.pending(w) != domain.StatusPending {
			t.Errorf("question %s changed although its run never paused", w.ID)
		}
	}
}
