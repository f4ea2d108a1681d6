package resume_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/server/resume"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// scriptedSender answers each delivery with the next result of its
// script (nil once the script is used up) and records what it was given.
type scriptedSender struct {
	name   string
	mu     sync.Mutex
	script map[string][]error // delivery id -> results in turn
	sent   []lifecycle.Delivery
	tries  map[string]int
}

func (s *scriptedSender) Name() string { return s.name }

func (s *scriptedSender) Send(_ context.Context, d lifecycle.Delivery) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tries == nil {
		s.tries = map[string]int{}
	}
	s.tries[d.ID]++
	if r := s.script[d.ID]; len(r) > 0 {
		s.script[d.ID] = r[1:]
		if r[0] != nil {
			return r[0]
		}
	}
	s.sent = append(s.sent, d)
	return nil
}

func (s *scriptedSender) triesOf(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tries[id]
}

// TestSendersGetTheQueueOfResumeWebhooks: deliveries queued by a surface or
// a pager go to the sender their event names, with their payload; a
// retryable failure is retried after the backoff, a 429's wait is honoured,
// a permanent failure is given up at once and written to the audit trail,
// a dropped one finishes quietly; every outcome is observed per sender.
func TestSendersGetTheQueueOfResumeWebhooks(t *testing.T) {
	ctx := context.Background()
	srv := storetest.Redis(t)
	st, err := store.Open(ctx, store.Options{URL: srv.URL})
	require.NoError(t, err)
	defer st.Close()
	clock := &fakeClock{now: time.Now().UTC()}

	p := "senders-" + uuid.NewString()[:6]
	q := &domain.Question{ID: uuid.NewString(), ProjectID: p, RunID: "r1", AgentID: "bot", Kind: domain.KindQuestion,
		Status: domain.StatusPending, Questions: []domain.Item{{Question: "Ship it?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}}},
		Targets: []domain.Target{}, CreatedAt: clock.Now(), UpdatedAt: clock.Now(), ExpiresAt: clock.Now().Add(time.Hour)}
	_, err = st.Create(ctx, q)
	require.NoError(t, err)

	pager := &scriptedSender{name: "pager", script: map[string][]error{
		"pager.trigger:flaky":   {errors.New("503 from the pager"), nil},
		"pager.trigger:limited": {resume.RetryAfter(errors.New("429 from the pager"), 3*time.Minute), nil},
		"pager.trigger:bad":     {resume.Permanent(errors.New("400: routing key invalid"))},
		"pager.trigger:gone":    {resume.ErrDrop},
	}}
	mail := &scriptedSender{name: "mail"}
	var mu sync.Mutex
	outcomes := map[string]int{}
	d := resume.New(resume.Config{Store: st, Clock: clock, Senders: []resume.Sender{pager, mail},
		MinBackoff: time.Second, MaxBackoff: time.Minute, HostMaxPause: time.Millisecond,
		ObserveSender: func(sender, outcome string) { mu.Lock(); outcomes[sender+" "+outcome]++; mu.Unlock() }})

	for _, id := range []string{"flaky", "limited", "bad", "gone"} {
		ok, err := st.EnqueueDelivery(ctx, lifecycle.Delivery{ID: "pager.trigger:" + id, ProjectID: p, QuestionID: q.ID,
			Event: "pager.trigger", Payload: []byte(`{"step":1}`), CreatedAt: clock.Now()})
		require.NoError(t, err)
		require.True(t, ok)
	}
	ok, err := st.EnqueueDelivery(ctx, lifecycle.Delivery{ID: "mail.send:ana", ProjectID: p, QuestionID: q.ID,
		Event: "mail.send", Payload: []byte(`{"to":"ana@example.com"}`), CreatedAt: clock.Now()})
	require.NoError(t, err)
	require.True(t, ok)

	d.Once(ctx)
	require.Len(t, mail.sent, 1, "the mail went to the mail sender")
	assert.JSONEq(t, `{"to":"ana@example.com"}`, string(mail.sent[0].Payload))
	require.NotNil(t, mail.sent[0].Question)
	assert.Equal(t, "Ship it?", mail.sent[0].Question.Questions[0].Question)
	assert.Equal(t, 1, pager.triesOf("pager.trigger:flaky"))

	clock.Add(2 * time.Second) // past the first backoff
	d.Once(ctx)
	assert.Equal(t, 2, pager.triesOf("pager.trigger:flaky"), "retried after the backoff")
	assert.Equal(t, 1, pager.triesOf("pager.trigger:limited"), "a 429 waits for its Retry-After, not the backoff")
	clock.Add(3 * time.Minute)
	d.Once(ctx)
	assert.Equal(t, 2, pager.triesOf("pager.trigger:limited"), "retried once its Retry-After passed")
	assert.Equal(t, 1, pager.triesOf("pager.trigger:bad"), "a permanent failure is not retried")
	assert.Equal(t, 1, pager.triesOf("pager.trigger:gone"))

	clock.Add(time.Hour)
	assert.Zero(t, d.Once(ctx), "nothing is left in the queue")

	audit, err := st.Audit(ctx, p, q.ID, 100)
	require.NoError(t, err)
	var failed, sent []string
	for _, e := range audit {
		switch e.Type {
		case "delivery.failed":
			failed = append(failed, e.Detail)
		case "delivery.sent":
			sent = append(sent, e.Detail)
		}
	}
	require.Len(t, failed, 1)
	assert.True(t, strings.Contains(failed[0], "400: routing key invalid"), failed[0])
	assert.Len(t, sent, 3, "flaky, limited and the mail")
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, map[string]int{"mail sent": 1, "pager sent": 2, "pager retried": 2, "pager failed": 1, "pager dropped": 1}, outcomes)
}

// TestASendersOutageDelaysNobodyElse: a pager that times out on every
// attempt has its own circuit; mails queued behind its deliveries still go
// out on the first pass.
func TestASendersOutageDelaysNobodyElse(t *testing.T) {
	ctx := context.Background()
	srv := storetest.Redis(t)
	st, err := store.Open(ctx, store.Options{URL: srv.URL})
	require.NoError(t, err)
	defer st.Close()
	clock := &fakeClock{now: time.Now().UTC()}
	p := "outage-" + uuid.NewString()[:6]
	q := &domain.Question{ID: uuid.NewString(), ProjectID: p, RunID: "r1", AgentID: "bot", Kind: domain.KindQuestion,
		Status: domain.StatusPending, Questions: []domain.Item{{Question: "Ship it?"}}, Targets: []domain.Target{},
		CreatedAt: clock.Now(), UpdatedAt: clock.Now(), ExpiresAt: clock.Now().Add(time.Hour)}
	_, err = st.Create(ctx, q)
	require.NoError(t, err)
	down := &blockingSender{name: "pager", release: make(chan struct{})}
	mail := &scriptedSender{name: "mail"}
	d := resume.New(resume.Config{Store: st, Clock: clock, Senders: []resume.Sender{down, mail}, PerHost: 3, Workers: 8})
	for i := range 6 {
		_, err := st.EnqueueDelivery(ctx, lifecycle.Delivery{ID: "pager.trigger:" + string(rune('a'+i)), ProjectID: p,
			QuestionID: q.ID, Event: "pager.trigger", CreatedAt: clock.Now()})
		require.NoError(t, err)
	}
	for i := range 3 {
		_, err := st.EnqueueDelivery(ctx, lifecycle.Delivery{ID: "mail.send:" + string(rune('a'+i)), ProjectID: p,
			QuestionID: q.ID, Event: "mail.send", CreatedAt: clock.Now()})
		require.NoError(t, err)
	}
	done := make(chan struct{})
	go func() { d.Once(ctx); close(done) }()
	require.Eventually(t, func() bool {
		mail.mu.Lock()
		defer mail.mu.Unlock()
		return len(mail.sent) == 3
	}, 5*time.Second, 10*time.Millisecond, "every mail went out while the pager hung")
	assert.LessOrEqual(t, down.inFlight.Load(), int32(3), "the pager never holds more than its share of workers")
	close(down.release)
	<-done
}

type blockingSender struct {
	name     string
	release  chan struct{}
	inFlight atomic.Int32
}

func (s *blockingSender) Name() string { return s.name }

func (s *blockingSender) Send(ctx context.Context, _ lifecycle.Delivery) error {
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	select {
	case <-s.release:
	case <-ctx.Done():
	}
	return errors.New("timed out")
}

// TestSenderAttemptsAreSpansOfTheAsk: every page or mail attempt is a span
// of the question's trace (child of the stored ask context) with the
// sender, the event, the attempt and the outcome, and never the address
// or the text it carries.
func TestSenderAttemptsAreSpansOfTheAsk(t *testing.T) {
	ctx := context.Background()
	srv := storetest.Redis(t)
	st, err := store.Open(ctx, store.Options{URL: srv.URL})
	require.NoError(t, err)
	defer st.Close()
	clock := &fakeClock{now: time.Now().UTC()}
	const askTrace, askSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"

	p := "spans-" + uuid.NewString()[:6]
	q := &domain.Question{ID: uuid.NewString(), ProjectID: p, RunID: "r1", AgentID: "bot", Kind: domain.KindQuestion,
		Status: domain.StatusPending, Questions: []domain.Item{{Question: "Ship it?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}}},
		Targets: []domain.Target{}, CreatedAt: clock.Now(), UpdatedAt: clock.Now(), ExpiresAt: clock.Now().Add(time.Hour),
		TraceParent: "00-" + askTrace + "-" + askSpan + "-01"}
	_, err = st.Create(ctx, q)
	require.NoError(t, err)

	rec := tracetest.NewSpanRecorder()
	pager := &scriptedSender{name: "pager", script: map[string][]error{
		"pager.trigger:1": {errors.New("503 from pager.example.com"), nil},
	}}
	mail := &scriptedSender{name: "email", script: map[string][]error{
		"email.send:ana": {resume.Permanent(errors.New("550 no such mailbox ana@example.com"))},
	}}
	d := resume.New(resume.Config{Store: st, Clock: clock, Senders: []resume.Sender{pager, mail},
		MinBackoff: time.Second, MaxBackoff: time.Minute, HostMaxPause: time.Millisecond,
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))})
	for _, dl := range []lifecycle.Delivery{
		{ID: "pager.trigger:1", Event: "pager.trigger", Payload: []byte(`{"step":1}`)},
		{ID: "email.send:ana", Event: "email.send", Payload: []byte(`{"to":"ana@example.com"}`)},
	} {
		dl.ProjectID, dl.QuestionID, dl.CreatedAt = p, q.ID, clock.Now()
		ok, err := st.EnqueueDelivery(ctx, dl)
		require.NoError(t, err)
		require.True(t, ok)
	}
	d.Once(ctx)
	clock.Add(2 * time.Second)
	d.Once(ctx)

	var got []string
	for _, s := range rec.Ended() {
		if s.Name() != "askbridge.delivery" {
			continue
		}
		assert.Equal(t, askTrace, s.SpanContext().TraceID().String(), "the attempt is in the ask's trace")
		assert.Equal(t, askSpan, s.Parent().SpanID().String(), "child of the stored ask context")
		a := map[string]string{}
		for _, kv := range s.Attributes() {
			a[string(kv.Key)] = kv.Value.String()
			assert.NotContains(t, kv.Value.String(), "example.com", "no address in a span")
			assert.NotContains(t, kv.Value.String(), "Ship it", "no text in a span")
		}
		assert.NotContains(t, s.Status().Description, "example.com")
		got = append(got, a["askbridge.sender"]+" "+a["askbridge.event"]+" #"+a["askbridge.attempt"]+" "+a["askbridge.outcome"]+" "+s.Status().Code.String())
	}
	assert.ElementsMatch(t, []string{
		"pager pager.trigger #1 retried Error", "pager pager.trigger #2 sent Unset", "email email.send #1 failed Error",
	}, got)
}
