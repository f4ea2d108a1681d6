package resume_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/webhook"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/server/resume"
	"github.com/askbridge/askbridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// resumeFailures lists the reasons of a project's resume.failed events.
func resumeFailures(t *testing.T, st lifecycle.Store, project string) []string {
	t.Helper()
	evs, err := st.Events(context.Background(), project, "", 1000)
	require.NoError(t, err)
	var out []string
	for _, e := range evs {
		if e.Type == domain.EventResumeFailed {
			var m map[string]string
			require.NoError(t, json.Unmarshal(e.Data, &m))
			out = append(out, m["reason"])
		}
	}
	return out
}

// TestASameSecondRetryResumesTheRun: the agent's receiver (the Go
// webhook.Receiver) fails its handler once, and the bridge's retry comes
// within the same second. Every attempt is signed anew — its body names
// the attempt — so the two signatures differ, and the retry is handled:
// the run resumes. (Before, the retry carried the very same signature,
// the receiver refused it as a replay with 401, and the bridge gave the
// delivery up for good.)
func TestASameSecondRetryResumesTheRun(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{})
	require.NoError(t, err)
	defer st.Close()
	// Every attempt happens within one second of this clock.
	clock := &fakeClock{now: time.Unix(1_800_000_000, 100e6).UTC()}
	secret := []byte("s3cret")

	var handled atomic.Int32
	rv := &webhook.Receiver{Secret: secret, Now: clock.Now, Handle: func(context.Context, webhook.Resume) error {
		if handled.Add(1) == 1 {
			return errors.New("the runtime is restarting")
		}
		return nil
	}}
	var mu sync.Mutex
	type attempt struct {
		signature string
		body      map[string]any
		status    int
	}
	var attempts []attempt
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(raw))
		rec := httptest.NewRecorder()
		rv.ServeHTTP(rec, r)
		var b map[string]any
		_ = json.Unmarshal(raw, &b)
		mu.Lock()
		attempts = append(attempts, attempt{r.Header.Get(webhook.HeaderSignature), b, rec.Code})
		mu.Unlock()
		w.WriteHeader(rec.Code)
	}))
	defer receiver.Close()

	router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st, Clock: clock, HasWebhookSecret: func(string) bool { return true }})
	answered(t, router, st, "crash", "run-1", receiver.URL)
	var delivered atomic.Int32
	d := resume.New(resume.Config{Store: st, Egress: localReceivers, Clock: clock, Secret: func(string) []byte { return secret },
		MinBackoff: 10 * time.Millisecond, Observe: func(o string) {
			if o == "delivered" {
				delivered.Add(1)
			}
		}})
	for range 20 {
		d.Once(ctx)
		clock.Add(20 * time.Millisecond)
	}
	require.Equal(t, time.Unix(1_800_000_000, 0).UTC(), clock.Now().Truncate(time.Second), "every attempt came within the same second")

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, attempts, 2, "one failed attempt, one retry")
	assert.Equal(t, http.StatusServiceUnavailable, attempts[0].status)
	assert.Equal(t, http.StatusOK, attempts[1].status, "the retry is handled, not refused as a replay")
	assert.NotEqual(t, attempts[0].signature, attempts[1].signature, "each attempt is signed anew")
	assert.EqualValues(t, 1, attempts[0].body["attempt"])
	assert.EqualValues(t, 2, attempts[1].body["attempt"])
	assert.EqualValues(t, 2, handled.Load())
	assert.EqualValues(t, 1, delivered.Load())
	assert.Empty(t, resumeFailures(t, st, "crash"), "nothing given up")
}

// TestNoWebhookSecretKeepsResumesQueued: the bridge restarted without
// BRIDGE_WEBHOOK_SECRET while resumes were queued. They are not given up
// at once: the deliverer warns, naming the agents, and keeps them queued;
// restarted with the secret, it delivers them. Only when their 24 h run
// out without a secret are they given up, saying why.
func TestNoWebhookSecretKeepsResumesQueued(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{})
	require.NoError(t, err)
	defer st.Close()
	clock := &fakeClock{now: time.Now().UTC()}
	recv, url := newArrivals(t, 0)
	router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st, Clock: clock, HasWebhookSecret: func(string) bool { return true }})
	for _, run := range []string{"run-1", "run-2"} {
		res, err := router.Ask(ctx, "held", &domain.AskRequest{RunID: run, AgentID: "hookbot", Question: "Continue " + run + "?",
			Resume: &domain.ResumeRequest{URL: url}}, "")
		require.NoError(t, err)
		_, err = st.PauseRun(ctx, "held", run, "hookbot", clock.Now())
		require.NoError(t, err)
		yes := "yes"
		_, err = router.Answer(ctx, "held", res.Question.ID, domain.RespondRequest{Response: &yes}, domain.Person{Platform: "api", ID: "u"})
		require.NoError(t, err)
	}

	var logs bytes.Buffer
	var lmu sync.Mutex
	noSecret := resume.New(resume.Config{Store: st, Egress: localReceivers, Clock: clock, Secret: func(string) []byte { return nil },
		Logger: slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &lmu}, nil))})
	for start := clock.Now(); clock.Now().Sub(start) < time.Hour; clock.Add(10 * time.Second) {
		noSecret.Once(ctx)
	}
	assert.Empty(t, resumeFailures(t, st, "held"), "nothing is given up for want of a secret")
	assert.Zero(t, recv.count(), "nothing unsigned is sent")
	lmu.Lock()
	out := logs.String()
	lmu.Unlock()
	t.Log(out)
	assert.Contains(t, out, "level=WARN")
	assert.Contains(t, out, "hookbot")
	assert.Contains(t, out, "BRIDGE_WEBHOOK_SECRET")
	assert.Equal(t, 1, bytes.Count(logs.Bytes(), []byte("BRIDGE_WEBHOOK_SECRET")), "one warning, not one per delivery and poll:\n%s", out)

	// Restarted with the secret: both arrive within a few minutes.
	withSecret := resume.New(resume.Config{Store: st, Egress: localReceivers, Clock: clock, Secret: func(string) []byte { return []byte("s") }})
	for start := clock.Now(); clock.Now().Sub(start) < 5*time.Minute && recv.count() < 2; clock.Add(10 * time.Second) {
		withSecret.Once(ctx)
	}
	assert.Equal(t, 2, recv.count(), "every queued resume is delivered once a secret exists")
	assert.Empty(t, resumeFailures(t, st, "held"))

	// Without a secret for the whole 24 h of a delivery: given up, saying why.
	answered(t, router, st, "held", "run-3", url)
	var failed atomic.Int32
	noSecret = resume.New(resume.Config{Store: st, Egress: localReceivers, Clock: clock, Secret: func(string) []byte { return nil },
		Observe: func(o string) {
			if o == "failed" {
				failed.Add(1)
			}
		}})
	for start := clock.Now(); clock.Now().Sub(start) < 23*time.Hour; clock.Add(5 * time.Minute) {
		noSecret.Once(ctx)
	}
	assert.Zero(t, failed.Load(), "still queued after 23 h")
	for start := clock.Now(); clock.Now().Sub(start) < 2*time.Hour; clock.Add(5 * time.Minute) {
		noSecret.Once(ctx)
	}
	assert.EqualValues(t, 1, failed.Load())
	fails := resumeFailures(t, st, "held")
	require.Len(t, fails, 1)
	assert.Contains(t, fails[0], "no webhook secret configured for agent bot")
}
