package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/internal/stormtest"
	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slackWeather is how Slack's edge misbehaves: rate limits per method and
// channel, Retry-After in whole seconds.
var slackWeather = stormtest.Dialect{
	Scope: func(r *http.Request, body []byte) string {
		method := strings.TrimPrefix(r.URL.Path, "/api/")
		channel := ""
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			var p struct {
				Channel string `json:"channel"`
			}
			_ = json.Unmarshal(body, &p)
			channel = p.Channel
		} else if vals, err := url.ParseQuery(string(body)); err == nil {
			channel = vals.Get("channel")
		}
		return method + " " + channel
	},
	RateLimited: func(w http.ResponseWriter, wait time.Duration) time.Duration {
		secs := stormtest.CeilSeconds(wait)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"ok":false,"error":"ratelimited"}`)
		return time.Duration(secs) * time.Second
	},
}

// stormPattern mixes every failure Slack's edge produces.
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

// stormEnv is one replica whose Slack calls cross a storm proxy.
func stormEnv(t *testing.T) (*env, *stormtest.Proxy, *lockedBuffer) {
	t.Helper()
	fake := fakeslack.New("C1", "C2")
	t.Cleanup(fake.Close)
	px := stormtest.New(t, fake.URL, slackWeather)
	logs := &lockedBuffer{}
	e := newReplica(t, fake, func(c *Config, rc *lifecycle.RouterConfig) {
		c.APIURL = px.URL + "/api/"
		rc.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	return e, px, logs
}

type asked struct {
	q   *domain.Question
	msg string
	err error
}

// askMany asks n questions at once, each from its own run, on targets.
func askMany(e *env, n int, prefix string, targets ...domain.Target) []asked {
	out := make([]asked, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req := authQuestion()
			req.RunID = fmt.Sprintf("%s-%d", prefix, i)
			req.Targets = targets
			res, err := e.router.Ask(context.Background(), "ops", &req, "")
			out[i] = asked{q: res.Question, msg: res.Message, err: err}
		})
	}
	wg.Wait()
	return out
}

// waitFor polls cond until it holds or limit passes.
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

// copiesOf returns, per channel, the fake's messages that carry q's id.
func copiesOf(fake *fakeslack.Server, q *domain.Question) map[string][]fakeslack.Message {
	out := map[string][]fakeslack.Message{}
	for _, m := range fake.Messages("") {
		if strings.Contains(string(m.Blocks), blockID(q.ID, "")) {
			out[m.Channel] = append(out[m.Channel], m)
		}
	}
	return out
}

func eventTypes(t *testing.T, st lifecycle.Store) map[string][]string {
	t.Helper()
	evs, err := st.Events(context.Background(), "ops", "", 10000)
	require.NoError(t, err)
	out := map[string][]string{}
	for _, ev := range evs {
		out[ev.Type] = append(out[ev.Type], ev.QuestionID)
	}
	return out
}

// While 30 questions fanned out to two channels are asked and answered,
// Slack answers 5xx, 429 with Retry-After and connection resets for a
// while, then recovers: every question is posted exactly once per channel
// and every copy finished once, only later.
func TestStormDelaysButNeverDrops(t *testing.T) {
	e, px, logs := stormEnv(t)
	const n = 30
	targets := []domain.Target{{Platform: "slack", Channel: "C1"}, {Platform: "slack", Channel: "C2"}}

	const blow = 1500 * time.Millisecond
	start := time.Now()
	px.BlowFor(blow, stormPattern...)
	qs := askMany(e, n, "storm", targets...)
	asking := time.Since(start)
	posting := px.Faults()

	for i, a := range qs {
		require.NoError(t, a.err, "ask %d", i)
		got := e.get(a.q)
		require.Len(t, got.Targets, 2)
		copies := copiesOf(e.fake, a.q)
		for _, tg := range got.Targets {
			assert.Empty(t, tg.Error, "question %d on %s", i, tg.Channel)
			if assert.Len(t, copies[tg.Channel], 1, "question %d: copies on %s", i, tg.Channel) {
				assert.Equal(t, copies[tg.Channel][0].TS, tg.MessageTS, "the record names the posted copy")
			}
		}
		assert.NotContains(t, a.msg, "failed", "the agent is told nothing failed")
	}
	assert.Len(t, e.fake.Messages(""), 2*n, "no duplicate, no stray message")
	assert.Positive(t, posting["429"], "the storm rate limited posts: %v", posting)
	assert.Positive(t, posting["reset"], "the storm reset connections: %v", posting)
	assert.Positive(t, posting["503"]+posting["500"]+posting["502"]+posting["504"], "the storm answered 5xx: %v", posting)
	assert.Greater(t, asking, blow, "posting waited out the storm")

	// Answers arrive during a second storm: clicks on either copy, and
	// answers through the API.
	px.BlowFor(blow, stormPattern...)
	for i, a := range qs {
		switch i % 3 {
		case 0:
			e.click(alice, "C1", e.copyOn(a.q, "C1").MessageTS, "OAuth 2.0", nil)
		case 1:
			e.click(bob, "C2", e.copyOn(a.q, "C2").MessageTS, "API key", nil)
		default:
			resp := "oauth"
			_, err := e.router.Answer(context.Background(), "ops", a.q.ID, domain.RespondRequest{Response: &resp},
				domain.Person{Platform: "api", ID: "carol", Name: "carol"})
			require.NoError(t, err)
		}
	}
	for i, a := range qs {
		final, err := e.router.Wait(context.Background(), "ops", a.q.ID, 10*time.Second)
		require.NoError(t, err)
		require.Equal(t, domain.StatusAnswered, final.Status, "question %d", i)
	}
	waitFor(t, 15*time.Second, "every copy finished", func() bool {
		for _, a := range qs {
			for _, ms := range copiesOf(e.fake, a.q) {
				if ms[0].Edits == 0 {
					return false
				}
			}
		}
		return true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, e.router.Flush(ctx))

	for i, a := range qs {
		final := e.get(a.q)
		for ch, ms := range copiesOf(e.fake, a.q) {
			m := ms[0]
			assert.Equal(t, 1, m.Edits, "question %d on %s edited once", i, ch)
			assert.Contains(t, m.Text, "Answered by", "question %d on %s", i, ch)
			assert.Contains(t, m.Text, final.Answers["Which auth method?"], "question %d on %s shows the answer", i, ch)
			assert.NotContains(t, string(m.Blocks), `"type":"actions"`, "question %d on %s has no live control", i, ch)
		}
	}
	all := px.Faults()
	assert.Greater(t, all["429"]+all["reset"], posting["429"]+posting["reset"], "the second storm hit the edits: %v", all)
	assert.Empty(t, px.Violations(300*time.Millisecond), "Retry-After honoured")

	evs := eventTypes(t, e.store)
	assert.Len(t, evs[domain.EventCreated], n)
	assert.Len(t, evs[domain.EventAnswered], n)
	assert.Empty(t, evs[domain.EventPostFailed])
	assert.NotContains(t, logs.String(), "failed", "nothing was given up on")
	t.Logf("storm: asking took %s; faults answered %v", asking.Round(time.Millisecond), all)
}

// A storm that outlasts the retries on one channel fails those posts
// loudly (the record, the audit trail, the log, the agent's message, and
// the event when no copy is left) while the other channel carries on; no
// late post or edit reaches the failed channel.
func TestStormOutlastingRetriesFailsLoudly(t *testing.T) {
	e, px, logs := stormEnv(t)
	start := time.Now()
	px.BlowOn(func(scope string) bool { return scope == "chat.postMessage C2" },
		stormtest.Unavailable, stormtest.Reset, stormtest.BadGateway)
	var both, only []asked
	var wg sync.WaitGroup
	wg.Go(func() {
		both = askMany(e, 5, "both", domain.Target{Platform: "slack", Channel: "C1"}, domain.Target{Platform: "slack", Channel: "C2"})
	})
	wg.Go(func() { only = askMany(e, 3, "only", domain.Target{Platform: "slack", Channel: "C2"}) })
	wg.Wait()
	px.Calm()
	calm := time.Now()
	// Five attempts back off 0.2 + 0.4 + 0.8 + 1.6 s (+ up to 50 % jitter);
	// a failure is reported when the last attempt fails, not a backoff later.
	assert.Less(t, calm.Sub(start), 6*time.Second, "the failures were reported once the retries were over")

	assert.Empty(t, e.fake.Messages("C2"), "nothing reached C2")
	for i, a := range append(both, only...) {
		require.NoError(t, a.err)
		got := e.get(a.q)
		for _, tg := range got.Targets {
			if tg.Channel == "C2" {
				assert.Contains(t, tg.Error, "chat.postMessage: gave up after 5 attempts", "question %d: the record says why", i)
				assert.Empty(t, tg.MessageTS)
				assert.Contains(t, a.msg, "Posting to Slack C2 failed", "question %d: the agent is told", i)
			} else {
				assert.Empty(t, tg.Error)
				assert.NotEmpty(t, tg.MessageTS)
			}
		}
		audit, err := e.store.Audit(context.Background(), "ops", a.q.ID, 100)
		require.NoError(t, err)
		var failed []string
		for _, en := range audit {
			if en.Type == "post_failed" {
				failed = append(failed, en.Detail)
			}
		}
		if assert.Len(t, failed, 1, "question %d: audit", i) {
			assert.True(t, strings.HasPrefix(failed[0], "Slack C2: "), failed[0])
		}
		assert.Contains(t, logs.String(), "question="+a.q.ID, "question %d: logged", i)
	}
	assert.Equal(t, 8, strings.Count(logs.String(), "posting question failed"), "one log line per failed post")
	evs := eventTypes(t, e.store)
	assert.ElementsMatch(t, []string{only[0].q.ID, only[1].q.ID, only[2].q.ID}, evs[domain.EventPostFailed],
		"question.post_failed for each question left without any copy")
	assert.Equal(t, 3, strings.Count(logs.String(), "could not be posted to any target"))

	// The questions stay answerable: on C1, or through the API for those
	// with no copy at all.
	for _, a := range both {
		e.click(alice, "C1", e.copyOn(a.q, "C1").MessageTS, "API key", nil)
	}
	for _, a := range only {
		resp := "oauth"
		_, err := e.router.Answer(context.Background(), "ops", a.q.ID, domain.RespondRequest{Response: &resp},
			domain.Person{Platform: "api", ID: "carol"})
		require.NoError(t, err)
	}
	for _, a := range both {
		e.final(a.q)
	}
	waitFor(t, 10*time.Second, "the C1 copies finished", func() bool {
		for _, m := range e.fake.Messages("C1") {
			if m.Edits == 0 {
				return false
			}
		}
		return true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, e.router.Flush(ctx))
	for _, x := range px.Exchanges() {
		if strings.HasSuffix(x.Scope, " C2") {
			assert.True(t, x.At.Before(calm), "a late %s reached C2", x.Scope)
		}
	}
	assert.Empty(t, e.fake.Messages("C2"))
	assert.Empty(t, px.Violations(300*time.Millisecond), "Retry-After honoured")
}

// A rate-limit storm longer than the five attempts of a call (429 with
// Retry-After 1 s for 5 s) only delays the posts: a 429 is not a failure.
func TestLongRateLimitStormOnlyDelays(t *testing.T) {
	e, px, logs := stormEnv(t)
	const blow = 5 * time.Second
	start := time.Now()
	px.BlowFor(blow, stormtest.RateLimit(time.Second))
	qs := askMany(e, 10, "limited", domain.Target{Platform: "slack", Channel: "C1"}, domain.Target{Platform: "slack", Channel: "C2"})
	assert.GreaterOrEqual(t, time.Since(start), blow, "the posts waited for the storm to end")
	for i, a := range qs {
		require.NoError(t, a.err)
		copies := copiesOf(e.fake, a.q)
		for _, tg := range e.get(a.q).Targets {
			assert.Empty(t, tg.Error, "question %d on %s", i, tg.Channel)
			if assert.Len(t, copies[tg.Channel], 1, "question %d on %s", i, tg.Channel) {
				assert.Equal(t, copies[tg.Channel][0].TS, tg.MessageTS)
			}
		}
	}
	assert.Len(t, e.fake.Messages(""), 20)
	assert.GreaterOrEqual(t, px.Faults()["429"], 2*5, "every scope was refused for the whole storm")
	assert.Empty(t, px.Violations(300*time.Millisecond), "Retry-After honoured")
	assert.NotContains(t, logs.String(), "failed")
}
