package discord

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/adapters/internal/stormtest"
	"github.com/askbridge/askbridge/domain"
)

// discordWeather is how Discord misbehaves: rate limits per route and
// channel (or interaction token), announced the way Discord does (body
// retry_after in seconds with millisecond precision, the bucket headers).
var discordWeather = stormtest.Dialect{
	Scope: func(r *http.Request, _ []byte) string {
		parts := strings.Split(strings.Trim(strings.TrimPrefix(r.URL.Path, "/api/v10"), "/"), "/")
		switch {
		case len(parts) == 3 && parts[0] == "channels" && parts[2] == "messages" && r.Method == "POST":
			return "post " + parts[1]
		case len(parts) == 4 && parts[0] == "channels" && parts[2] == "messages" && r.Method == "PATCH":
			return "edit " + parts[1]
		case len(parts) == 2 && parts[0] == "channels":
			return "channel " + parts[1]
		case len(parts) == 5 && parts[0] == "channels" && parts[4] == "threads":
			return "thread " + parts[1]
		case len(parts) >= 3 && parts[0] == "webhooks":
			return r.Method + " webhook " + parts[2]
		}
		return r.Method + " " + r.URL.Path
	},
	RateLimited: func(w http.ResponseWriter, wait time.Duration) time.Duration {
		secs := math.Ceil(wait.Seconds()*1000) / 1000
		w.Header().Set("Retry-After", strconv.Itoa(stormtest.CeilSeconds(wait)))
		w.Header().Set("X-RateLimit-Limit", "5")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset-After", strconv.FormatFloat(secs, 'f', 3, 64))
		w.Header().Set("X-RateLimit-Bucket", "storm")
		w.Header().Set("X-RateLimit-Scope", "user")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprintf(w, `{"message":"You are being rate limited.","retry_after":%.3f,"global":false}`, secs)
		return time.Duration(secs * float64(time.Second))
	},
}

var stormPattern = []stormtest.Fault{stormtest.Unavailable, stormtest.Reset, stormtest.RateLimit(time.Second),
	stormtest.ServerError, stormtest.BadGateway, stormtest.Reset, stormtest.Timeout}

// lockedBuffer collects log lines written from many goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// stormEnv is one replica whose Discord calls cross a storm proxy, with
// the production retry budgets.
func stormEnv(t *testing.T) (*env, *stormtest.Proxy, *lockedBuffer) {
	t.Helper()
	f := fakediscord.New(t)
	f.AddChannel("1001", "900")
	f.AddChannel("1002", "900")
	px := stormtest.New(t, strings.TrimSuffix(f.APIURL(), "/api/v10"), discordWeather)
	logs := &lockedBuffer{}
	e := newEnv(t, f, newTestStore(t), func(rc *lifecycle.RouterConfig, c *Config) {
		c.APIURL = px.URL + "/api/v10"
		c.RetryBackoff = 0 // the default, 250 ms
		rc.PostTimeout = 0 // the default, 15 s
		rc.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	return e, px, logs
}

type asked struct {
	q   *domain.Question
	msg string
	err error
}

func askMany(e *env, n int, prefix string, channels ...string) []asked {
	out := make([]asked, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req := &domain.AskRequest{RunID: fmt.Sprintf("%s-%d", prefix, i), AgentID: "deploy-bot",
				Questions: []domain.Item{authItem()}}
			for _, c := range channels {
				req.Targets = append(req.Targets, domain.Target{Platform: "discord", Channel: c})
			}
			res, err := e.router.Ask(context.Background(), "ops", req, "")
			out[i] = asked{q: res.Question, msg: res.Message, err: err}
		})
	}
	wg.Wait()
	return out
}

func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s still waiting for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *env) record(q *domain.Question) *domain.Question {
	e.t.Helper()
	got, err := e.store.Get(context.Background(), "ops", q.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

func eventsByType(t *testing.T, st lifecycle.Store) map[string][]string {
	t.Helper()
	evs, err := st.Events(context.Background(), "ops", "", 10000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, ev := range evs {
		out[ev.Type] = append(out[ev.Type], ev.QuestionID)
	}
	return out
}

// carries reports whether a message on the fake is a copy of q.
func carries(m *fakediscord.Message, q *domain.Question) bool {
	for _, row := range m.Components {
		for _, c := range row.Components {
			if strings.Contains(c.CustomID, q.ID) {
				return true
			}
		}
	}
	return false
}

// While 30 questions fanned out to two channels are asked and answered,
// Discord answers 5xx, 429 with retry_after and connection resets for a
// while, then recovers: every question is posted exactly once per channel,
// every copy is finished once, and only later.
func TestStormDelaysButNeverDrops(t *testing.T) {
	e, px, logs := stormEnv(t)
	const n = 30
	const blow = 1500 * time.Millisecond
	start := time.Now()
	px.BlowFor(blow, stormPattern...)
	qs := askMany(e, n, "storm", "1000", "1001")
	asking := time.Since(start)
	posting := px.Faults()

	seen := map[string]bool{}
	for i, a := range qs {
		if a.err != nil {
			t.Fatalf("ask %d: %v", i, a.err)
		}
		got := e.record(a.q)
		if len(got.Targets) != 2 {
			t.Fatalf("question %d has %d targets", i, len(got.Targets))
		}
		for _, tg := range got.Targets {
			if tg.Error != "" || tg.MessageTS == "" {
				t.Errorf("question %d on %s not posted: %q", i, tg.Channel, tg.Error)
				continue
			}
			m := e.fake.Message(tg.MessageTS)
			if m.ChannelID != tg.Channel || !carries(m, a.q) || seen[m.ID] {
				t.Errorf("question %d on %s: the record names message %s of channel %s (seen before: %v)", i, tg.Channel, m.ID, m.ChannelID, seen[m.ID])
			}
			seen[m.ID] = true
		}
		if strings.Contains(a.msg, "failed") {
			t.Errorf("question %d: the agent was told %q", i, a.msg)
		}
	}
	if got := e.fake.Count("post"); got != 2*n {
		t.Errorf("the fake received %d posts, want %d: a duplicate or a stray message", got, 2*n)
	}
	if posting["429"] == 0 || posting["reset"] == 0 || posting["503"]+posting["500"]+posting["502"]+posting["504"] == 0 {
		t.Errorf("the storm did not blow every way: %v", posting)
	}
	if asking < blow {
		t.Errorf("asking took %s, less than the storm: it did not wait it out", asking)
	}

	// Answers arrive during a second storm: clicks on either copy, and
	// answers through the API.
	px.BlowFor(blow, stormPattern...)
	for i, a := range qs {
		got := e.record(a.q)
		switch i % 3 {
		case 0:
			e.fake.Click(alice, got.Targets[0].MessageTS, "OAuth 2.0")
		case 1:
			e.fake.Click(carol, got.Targets[1].MessageTS, "API key")
		default:
			resp := "oauth"
			if _, err := e.router.Answer(context.Background(), "ops", a.q.ID, domain.RespondRequest{Response: &resp},
				domain.Person{Platform: "api", ID: "dave", Name: "dave"}); err != nil {
				t.Fatalf("answer %d: %v", i, err)
			}
		}
	}
	for i, a := range qs {
		final, err := e.router.Wait(context.Background(), "ops", a.q.ID, 10*time.Second)
		if err != nil || final.Status != domain.StatusAnswered {
			t.Fatalf("question %d: %v %v", i, final.Status, err)
		}
	}
	waitFor(t, 15*time.Second, "every copy finished", func() bool {
		for _, a := range qs {
			for _, tg := range e.record(a.q).Targets {
				if e.fake.Message(tg.MessageTS).Edits == 0 {
					return false
				}
			}
		}
		return true
	})
	e.settle()
	for i, a := range qs {
		final := e.record(a.q)
		for _, tg := range final.Targets {
			if m := e.fake.Message(tg.MessageTS); m.Edits != 1 {
				t.Errorf("question %d on %s edited %d times, want once", i, tg.Channel, m.Edits)
			}
			e.assertFinished(tg.MessageTS, "Answered by "+final.RespondedBy.Name+": "+final.Answers["Which auth method?"])
		}
	}
	all := px.Faults()
	if all["429"]+all["reset"] <= posting["429"]+posting["reset"] {
		t.Errorf("the second storm did not hit the edits: %v", all)
	}
	if v := px.Violations(300 * time.Millisecond); len(v) > 0 {
		t.Errorf("Retry-After not honoured:\n%s", strings.Join(v, "\n"))
	}
	evs := eventsByType(t, e.store)
	if len(evs[domain.EventCreated]) != n || len(evs[domain.EventAnswered]) != n || len(evs[domain.EventPostFailed]) != 0 {
		t.Errorf("events: %d created, %d answered, %d post_failed", len(evs[domain.EventCreated]), len(evs[domain.EventAnswered]), len(evs[domain.EventPostFailed]))
	}
	if strings.Contains(logs.String(), "failed") {
		t.Errorf("something was given up on:\n%s", logs)
	}
	t.Logf("storm: asking took %s; faults answered %v", asking.Round(time.Millisecond), all)
}

// A storm that outlasts the retries on one channel, or a Retry-After
// longer than a call waits, fails those posts loudly (the record, the
// audit trail, the log, the agent's message, and the event when no copy is
// left) while the other channel carries on; nothing late reaches the
// failed channels.
func TestStormOutlastingRetriesFailsLoudly(t *testing.T) {
	e, px, logs := stormEnv(t)
	start := time.Now()
	px.BlowOn(func(scope string) bool { return scope == "post 1001" }, stormtest.Unavailable, stormtest.Reset, stormtest.BadGateway)
	var both, only []asked
	var wg sync.WaitGroup
	wg.Go(func() { both = askMany(e, 5, "both", "1000", "1001") })
	wg.Go(func() { only = askMany(e, 3, "only", "1001") })
	wg.Wait()
	// Four attempts back off 0.25 + 0.5 + 1 s (+ up to 50 % jitter).
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the failures were reported after %s", took)
	}

	// A Retry-After beyond what a call waits (30 s) fails at once.
	px.BlowOn(func(scope string) bool { return scope == "post 1002" }, stormtest.RateLimit(time.Minute))
	start = time.Now()
	limited := askMany(e, 1, "limited", "1000", "1002") // one only: see TestLongRetryAfterHoldsNoLaterCall
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("a 60 s Retry-After held the asks for %s", took)
	}
	px.Calm()
	calm := time.Now()

	check := func(a asked, failed string, why string) {
		t.Helper()
		if a.err != nil {
			t.Fatal(a.err)
		}
		got := e.record(a.q)
		for _, tg := range got.Targets {
			if tg.Channel != failed {
				if tg.Error != "" || tg.MessageTS == "" {
					t.Errorf("%s on %s: %q", a.q.ID, tg.Channel, tg.Error)
				}
				continue
			}
			if !strings.Contains(tg.Error, why) || tg.MessageTS != "" {
				t.Errorf("%s on %s: error %q, message %q; want the reason %q on the record", a.q.ID, tg.Channel, tg.Error, tg.MessageTS, why)
			}
		}
		if !strings.Contains(a.msg, "Posting to Discord channel "+failed+" failed") {
			t.Errorf("the agent was not told: %q", a.msg)
		}
		audit, err := e.store.Audit(context.Background(), "ops", a.q.ID, 100)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, en := range audit {
			if en.Type == "post_failed" && strings.HasPrefix(en.Detail, "Discord channel "+failed+": ") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d post_failed audit entries, want 1: %+v", a.q.ID, n, audit)
		}
		if !strings.Contains(logs.String(), "question="+a.q.ID) {
			t.Errorf("%s: no log line", a.q.ID)
		}
	}
	for _, a := range append(both, only...) {
		check(a, "1001", "posting the question to channel 1001")
	}
	for _, a := range limited {
		check(a, "1002", "HTTP 429")
	}
	if got := strings.Count(logs.String(), "posting question failed"); got != 9 {
		t.Errorf("%d log lines for 9 failed posts", got)
	}
	evs := eventsByType(t, e.store)
	want := map[string]bool{only[0].q.ID: true, only[1].q.ID: true, only[2].q.ID: true}
	if len(evs[domain.EventPostFailed]) != 3 {
		t.Errorf("question.post_failed for %v, want the 3 questions left without a copy", evs[domain.EventPostFailed])
	}
	for _, id := range evs[domain.EventPostFailed] {
		if !want[id] {
			t.Errorf("question.post_failed for %s, which has a copy", id)
		}
	}

	// The questions stay answerable: on channel 1000, or through the API
	// for those with no copy at all.
	for _, a := range append(both, limited...) {
		e.fake.Click(alice, e.record(a.q).Targets[0].MessageTS, "API key")
	}
	for _, a := range only {
		resp := "oauth"
		if _, err := e.router.Answer(context.Background(), "ops", a.q.ID, domain.RespondRequest{Response: &resp},
			domain.Person{Platform: "api", ID: "dave"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range append(both, limited...) {
		e.wait(a.q)
		e.settle()
		e.assertFinished(e.record(a.q).Targets[0].MessageTS, "Answered by alice: API key")
	}
	if got := e.fake.Count("post"); got != len(both)+len(limited) {
		t.Errorf("the fake received %d posts, want %d (channel 1000 only)", got, len(both)+len(limited))
	}
	for _, x := range px.Exchanges() {
		if (strings.HasSuffix(x.Scope, " 1001") || strings.HasSuffix(x.Scope, " 1002")) && !x.At.Before(calm) {
			t.Errorf("a late %s reached a failed channel", x.Scope)
		}
	}
	if v := px.Violations(300 * time.Millisecond); len(v) > 0 {
		t.Errorf("Retry-After not honoured:\n%s", strings.Join(v, "\n"))
	}
}

// A Retry-After longer than a call waits (MaxRetryAfter) must fail every
// call of that route at once, not only the one that got the 429.
//
// discordgo's bucket would take the 429's X-RateLimit-Remaining: 0 /
// X-RateLimit-Reset-After and make every later request of the bucket sleep
// until the reset, ignoring the context; limitTransport prevents that.
func TestLongRetryAfterHoldsNoLaterCall(t *testing.T) {
	e, px, _ := stormEnv(t)
	px.BlowOn(func(scope string) bool { return scope == "post 1002" }, stormtest.RateLimit(time.Minute))
	start := time.Now()
	qs := askMany(e, 2, "limited", "1002")
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("a 60 s Retry-After held the asks for %s", took)
	}
	for _, a := range qs {
		if err := e.record(a.q).Targets[0].Error; !strings.Contains(err, "HTTP 429") {
			t.Errorf("post failed with %q, want the rate limit", err)
		}
	}
}

// Discord created the message but its answer was lost (502): the retry
// carries the same enforced nonce, so Discord hands back that message
// instead of posting a second copy whose buttons nothing records.
func TestLostPostAnswersLeaveOneCopy(t *testing.T) {
	f := fakediscord.New(t)
	clock := &testClock{t: time.Now().UTC().Truncate(time.Second)}
	f.Now = clock.Now
	e := newEnv(t, f, newTestStore(t), withClock(clock), func(rc *lifecycle.RouterConfig, c *Config) {
		c.RetryBackoff = 10 * time.Millisecond
		rc.Routes = append(rc.Routes, domain.Route{Name: "gate", Timeout: time.Hour,
			Targets:    []domain.Target{{Platform: "discord", Channel: "1000"}},
			Escalation: []domain.EscalationStep{{After: domain.Duration(15 * time.Minute), Remind: true}}})
	})
	f.LoseResponses("post", 2)
	q := e.ask(&domain.AskRequest{RunID: "lost", Route: "gate", Questions: []domain.Item{authItem()}})
	msgs := f.Messages("1000")
	if len(msgs) != 1 {
		t.Fatalf("%d messages in the channel after lost answers, want the one copy", len(msgs))
	}
	if got := e.copyOf(q); got != msgs[0].ID {
		t.Errorf("the record names message %s, the channel holds %s", got, msgs[0].ID)
	}
	if f.Count("post") < 3 || f.Count("post-deduplicated") != 2 {
		t.Errorf("posts %d, deduplicated %d: want the two lost answers retried and matched by nonce",
			f.Count("post"), f.Count("post-deduplicated"))
	}
	// The same for a reminder.
	f.LoseResponses("post", 1)
	clock.Add(15 * time.Minute)
	if n, err := e.router.EscalateDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("EscalateDue ran %d steps (%v)", n, err)
	}
	if msgs := f.Messages("1000"); len(msgs) != 2 || msgs[1].ReplyTo != msgs[0].ID {
		t.Fatalf("after a lost reminder answer the channel holds %d messages, want the copy and one reminder replying to it", len(msgs))
	}
	// A new question of another run is a new message, not a deduplicated one.
	other := e.ask(&domain.AskRequest{RunID: "other", Route: "gate", Questions: []domain.Item{authItem()}})
	if e.copyOf(other) == e.copyOf(q) {
		t.Fatal("another question was matched to the first one's message")
	}
}
