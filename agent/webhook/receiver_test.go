package webhook

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const body = `{"event":"question.answered","question":{"id":"q1","status":"answered","questions":[{"question":"Which?","multiSelect":false,"options":[]}],"answers":{"Which?":"A"}},"run":{"id":"run-2","resumed_from":"run-1","agent_id":"bot","project_id":"ops"},"user_message":"Previously you asked: \"Which?\"\nThe user responded: \"A\"\n\nContinue from where you left off."}`

func deliver(t *testing.T, h http.Handler, secret []byte, at time.Time, delivery, b string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/resume", strings.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderEvent, "question.answered")
	if delivery != "" {
		req.Header.Set(HeaderDelivery, delivery)
	}
	req.Header.Set(HeaderSignature, SignDelivery(secret, at, delivery, []byte(b)))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// send posts body with exactly the given delivery id and signature header,
// as someone who captured a delivery would.
func send(h http.Handler, delivery, signature, b string) int {
	req := httptest.NewRequest(http.MethodPost, "/resume", strings.NewReader(b))
	req.Header.Set(HeaderDelivery, delivery)
	req.Header.Set(HeaderSignature, signature)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// TestACapturedDeliveryCannotBeReplayed: within the signature's tolerance,
// a captured delivery sent again under a new delivery id runs nothing:
// v2 covers the id, and a signature is never accepted twice (which also
// holds for the v1-only signatures of older bridges).
func TestACapturedDeliveryCannotBeReplayed(t *testing.T) {
	secret := []byte("s3cret")
	var calls atomic.Int32
	rv := &Receiver{Secret: secret, Handle: func(context.Context, Resume) error { calls.Add(1); return nil }}
	now := time.Now()
	sig := SignDelivery(secret, now, "d-1", []byte(body))
	assert.Equal(t, http.StatusOK, send(rv, "d-1", sig, body))
	assert.Equal(t, http.StatusUnauthorized, send(rv, "d-2", sig, body), "v2 covers the delivery id")
	v1 := sig[:strings.Index(sig, ",v2=")]
	assert.Equal(t, http.StatusUnauthorized, send(rv, "d-3", v1, body), "v2 stripped: the v1 signature was used already")
	assert.Equal(t, http.StatusOK, send(rv, "d-1", sig, body), "the same delivery again is a duplicate, acknowledged")

	legacy := Sign(secret, now.Add(time.Second), []byte(body))
	assert.Equal(t, http.StatusOK, send(rv, "d-4", legacy, body), "an older bridge's v1-only delivery is accepted once")
	assert.Equal(t, http.StatusUnauthorized, send(rv, "d-5", legacy, body), "and never again")
	assert.Equal(t, int32(2), calls.Load(), "d-1 and d-4 ran, nothing else")
}

func TestReceiverHandlesOnceAndDropsDuplicates(t *testing.T) {
	secret := []byte("s3cret")
	var got []Resume
	var mu sync.Mutex
	rv := &Receiver{Secret: secret, Handle: func(_ context.Context, r Resume) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r)
		return nil
	}}
	now := time.Now()
	rec := deliver(t, rv, secret, now, "d-1", body)
	assert.Equal(t, http.StatusOK, rec.Code)
	rec = deliver(t, rv, secret, now.Add(time.Second), "d-1", body) // a retry of the same delivery
	assert.Equal(t, http.StatusOK, rec.Code, "a duplicate is acknowledged so the bridge stops retrying")
	assert.Contains(t, rec.Body.String(), "duplicate")
	require.Len(t, got, 1, "the handler runs once per delivery")
	r := got[0]
	assert.Equal(t, "d-1", r.DeliveryID)
	assert.Equal(t, "question.answered", r.Event)
	assert.Equal(t, "run-2", r.Run.ID)
	assert.Equal(t, "run-1", r.Run.ResumedFrom)
	assert.Equal(t, "A", r.Question.Answers["Which?"])
	assert.Contains(t, r.UserMessage, "The user responded")

	rec = deliver(t, rv, secret, now, "d-2", strings.Replace(body, `"id":"q1"`, `"id":"q2"`, 1)) // another question's
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Len(t, got, 2, "another delivery id is handled")
}

func TestReceiverRefusesBadSignatures(t *testing.T) {
	secret := []byte("s3cret")
	var calls atomic.Int32
	rv := &Receiver{Secret: secret, Handle: func(context.Context, Resume) error { calls.Add(1); return nil }}
	now := time.Now()
	assert.Equal(t, http.StatusUnauthorized, deliver(t, rv, []byte("other"), now, "d", body).Code)
	assert.Equal(t, http.StatusUnauthorized, deliver(t, rv, secret, now.Add(-10*time.Minute), "d", body).Code, "stale")
	assert.Equal(t, http.StatusUnauthorized, deliver(t, rv, secret, now.Add(10*time.Minute), "d", body).Code, "from the future")
	// Tampered body: signed one thing, sent another.
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(strings.Replace(body, `"A"`, `"B"`, 1)))
	req.Header.Set(HeaderDelivery, "d")
	req.Header.Set(HeaderSignature, SignDelivery(secret, now, "d", []byte(body)))
	rec := httptest.NewRecorder()
	rv.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
	assert.NotContains(t, rec.Body.String(), "s3cret")
	// A wider tolerance accepts the older timestamp.
	wide := &Receiver{Secret: secret, Tolerance: time.Hour, Handle: func(context.Context, Resume) error { calls.Add(1); return nil }}
	assert.Equal(t, http.StatusOK, deliver(t, wide, secret, now.Add(-10*time.Minute), "d", body).Code)
	// Signed but not a resume webhook, or no delivery id.
	assert.Equal(t, http.StatusBadRequest, deliver(t, rv, secret, now, "d", `{"hello":1}`).Code)
	assert.Equal(t, http.StatusBadRequest, deliver(t, rv, secret, now, "", body).Code)
	assert.Equal(t, int32(1), calls.Load(), "only the verified, well-formed delivery reached a handler")
}

func TestReceiverHandlerFailureIsRetried(t *testing.T) {
	secret := []byte("s3cret")
	var calls atomic.Int32
	rv := &Receiver{Secret: secret, Handle: func(context.Context, Resume) error {
		if calls.Add(1) == 1 {
			return errors.New("disk full")
		}
		return nil
	}}
	rec := deliver(t, rv, secret, time.Now(), "d-1", body)
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code, "5xx: the bridge retries")
	assert.Equal(t, "5", rec.Header().Get("Retry-After"))
	rec = deliver(t, rv, secret, time.Now().Add(time.Second), "d-1", body) // the bridge signs each retry anew
	assert.Equal(t, http.StatusOK, rec.Code, "the retry is handled, not dropped as a duplicate")
	assert.Equal(t, int32(2), calls.Load())
}

func TestReceiverConcurrentDuplicate(t *testing.T) {
	secret := []byte("s3cret")
	release := make(chan struct{})
	entered := make(chan struct{})
	rv := &Receiver{Secret: secret, Handle: func(context.Context, Resume) error {
		close(entered)
		<-release
		return nil
	}}
	done := make(chan int)
	go func() { done <- deliver(t, rv, secret, time.Now(), "d-1", body).Code }()
	<-entered
	rec := deliver(t, rv, secret, time.Now(), "d-1", body)
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code,
		"while the first copy is handled, a second gets a retryable answer, never a 200 that could lose the delivery")
	close(release)
	assert.Equal(t, http.StatusOK, <-done)
}

func TestMemoryDeduperForgets(t *testing.T) {
	d := NewMemoryDeduper(time.Hour)
	now := time.Now()
	d.now = func() time.Time { return now }
	ctx := context.Background()
	s, _ := d.Begin(ctx, "a")
	assert.Equal(t, DeliveryNew, s)
	require.NoError(t, d.Finish(ctx, "a", true))
	s, _ = d.Begin(ctx, "a")
	assert.Equal(t, DeliveryDone, s)
	now = now.Add(2 * time.Hour)
	s, _ = d.Begin(ctx, "a")
	assert.Equal(t, DeliveryNew, s, "forgotten after the ttl")
	assert.Len(t, d.seen, 1, "old entries are swept")
}

// TestReceiverRetryInTheSameSecondIsHandled: the handler fails, and the
// bridge's retry comes within the same second, with a byte-identical
// signature (an older bridge, or a body that did not change). The retry is
// handled: a signature counts as used only once its delivery was handled,
// never when the handler failed (a 401 would end the run for good).
func TestReceiverRetryInTheSameSecondIsHandled(t *testing.T) {
	secret := []byte("s3cret")
	now := time.Now()
	for _, c := range []struct {
		name string
		sign func(id string) string
	}{
		{"v1 and v2", func(id string) string { return SignDelivery(secret, now, id, []byte(body)) }},
		{"v1 only (older bridge)", func(string) string { return Sign(secret, now, []byte(body)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int32
			rv := &Receiver{Secret: secret, Handle: func(context.Context, Resume) error {
				if calls.Add(1) == 1 {
					return errors.New("the runtime is restarting")
				}
				return nil
			}}
			sig := c.sign("d-1")
			assert.Equal(t, http.StatusServiceUnavailable, send(rv, "d-1", sig, body), "the handler failed: the bridge retries")
			assert.Equal(t, http.StatusOK, send(rv, "d-1", sig, body), "the retry in the same second is handled")
			assert.Equal(t, int32(2), calls.Load())
			assert.Equal(t, http.StatusOK, send(rv, "d-1", sig, body), "then it is a duplicate")
			assert.Equal(t, int32(2), calls.Load(), "handled once successfully")
			assert.Equal(t, http.StatusUnauthorized, send(rv, "d-2", Sign(secret, now, []byte(body)), body),
				"the handled signature is never accepted again under another id")
		})
	}
}

// TestReceiverRefusesAnEmptySecret: anyone can sign with an empty secret,
// so a receiver without one handles nothing and says what to set.
func TestReceiverRefusesAnEmptySecret(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		name   string
		secret []byte
	}{
		{"nil", nil},
		{"empty", []byte{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int32
			rv := &Receiver{Secret: c.secret, Handle: func(context.Context, Resume) error { calls.Add(1); return nil }}
			rec := deliver(t, rv, nil, now, "d-1", body) // signed with the empty key
			assert.Equal(t, http.StatusInternalServerError, rec.Code, "never accepted; a 5xx, so the bridge retries until the receiver has its secret")
			assert.Zero(t, calls.Load(), "nothing handled")
			assert.Contains(t, rec.Body.String(), "BRIDGE_WEBHOOK_SECRET")

			_, err := VerifyDelivery(c.secret, SignDelivery(nil, now, "d-1", []byte(body)), "d-1", []byte(body), 0, now)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "BRIDGE_WEBHOOK_SECRET")
			require.Error(t, Verify(c.secret, Sign(nil, now, []byte(body)), []byte(body), 0, now))

			_, err = NewReceiver(c.secret, func(context.Context, Resume) error { return nil })
			require.Error(t, err, "refused when the receiver is built")
			assert.Contains(t, err.Error(), "BRIDGE_WEBHOOK_SECRET")
		})
	}
}
