package app_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/tracing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP traces endpoint: it decodes the protobuf
// export requests the bridge sends, as a collector would.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	srv   *httptest.Server
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	o := &otlpReceiver{}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "not an OTLP/HTTP protobuf traces export", http.StatusBadRequest)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		o.mu.Lock()
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				o.spans = append(o.spans, ss.GetSpans()...)
			}
		}
		o.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(o.srv.Close)
	return o
}

// named returns the spans called name.
func named(spans []*tracepb.Span, name string) []*tracepb.Span {
	var out []*tracepb.Span
	for _, s := range spans {
		if s.GetName() == name {
			out = append(out, s)
		}
	}
	return out
}

func one(t *testing.T, spans []*tracepb.Span, name string) *tracepb.Span {
	t.Helper()
	got := named(spans, name)
	require.Len(t, got, 1, "one %s span", name)
	return got[0]
}

// TestOneTraceFromTheAgentThroughThePersonToTheResume: an agent's span
// asks with traceparent; the question is posted, answered on Slack and
// resumed by webhook; the bridge exports OTLP/HTTP to a receiver in the
// test, which finds one trace: agent → ask → post, ask → interaction →
// answer, ask → resume webhook (whose traceparent reaches the receiver)
// and ask → wait. The long-poll answer carries the traceparent too.
func TestOneTraceFromTheAgentThroughThePersonToTheResume(t *testing.T) {
	recv := newOTLPReceiver(t)
	env := map[string]string{"OTEL_SERVICE_NAME": "askbridge-test"}
	tp, shutdown, err := tracing.Setup(context.Background(), tracing.Config{Endpoint: recv.srv.URL + "/v1/traces"},
		func(k string) string { return env[k] })
	require.NoError(t, err)
	b := newOpsBridge(t, func(s *app.Settings) { s.TracerProvider = tp })
	var webhookTP string
	b.webhook = func(r *http.Request, _ []byte) { webhookTP = r.Header.Get("traceparent") }

	agentCtx, agent := tp.Tracer("agent").Start(context.Background(), "agent.run")
	h := http.Header{}
	propagation.TraceContext{}.Inject(agentCtx, propagation.HeaderCarrier(h))
	q := b.askWebhook(h)
	require.Equal(t, http.StatusOK, b.click("U1", slackTS(t, q), "Ship it", slackSecret, nil))
	require.Eventually(t, func() bool { return b.received.Load() == 1 }, 10*time.Second, 10*time.Millisecond)

	res, err := http.Get(b.url + "/api/projects/ops/agent-questions/" + q.ID + "/wait?timeout=5s")
	require.NoError(t, err)
	res.Body.Close()
	pollTP := res.Header.Get("traceparent")
	agent.End()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, b.app.Close(ctx), "the bridge stops: every span has ended")
	require.NoError(t, shutdown(ctx), "the last spans are exported")

	recv.mu.Lock()
	spans := recv.spans
	recv.mu.Unlock()
	root := one(t, spans, "agent.run")
	byID := map[string]string{}
	for _, s := range spans {
		byID[hex.EncodeToString(s.GetSpanId())] = s.GetName()
	}
	for _, s := range spans { // the tree, for the record: go test -v -run TestOneTrace ./app
		t.Logf("trace %x  %-26s parent %s", s.GetTraceId(), s.GetName(), byID[hex.EncodeToString(s.GetParentSpanId())])
	}
	for _, s := range spans {
		if s.GetName() == "askbridge.inbound" {
			// The platform's request (its signature check) is a trace of its
			// own: Slack sends no trace context. What it leads to, the
			// interaction, joins the agent's trace through the question.
			continue
		}
		assert.Equal(t, root.GetTraceId(), s.GetTraceId(), "%s is in the agent's trace", s.GetName())
	}
	ask := one(t, spans, "askbridge.ask")
	assert.Equal(t, root.GetSpanId(), ask.GetParentSpanId(), "ask is the agent span's child")
	posts := named(spans, "askbridge.post")
	require.Len(t, posts, 2, "a post span per target (Slack, Discord)")
	for _, p := range posts {
		assert.Equal(t, ask.GetSpanId(), p.GetParentSpanId(), "post is the ask's child")
	}
	interaction := one(t, spans, "askbridge.interaction")
	assert.Equal(t, ask.GetSpanId(), interaction.GetParentSpanId(), "the person's click joins the ask's trace")
	answer := one(t, spans, "askbridge.answer")
	assert.Equal(t, interaction.GetSpanId(), answer.GetParentSpanId())
	webhook := one(t, spans, "askbridge.resume_webhook")
	assert.Equal(t, ask.GetSpanId(), webhook.GetParentSpanId())
	assert.GreaterOrEqual(t, webhook.GetStartTimeUnixNano(), answer.GetEndTimeUnixNano(), "the resume follows the answer")
	wait := one(t, spans, "askbridge.wait")
	assert.Equal(t, ask.GetSpanId(), wait.GetParentSpanId())
	attrs := map[string]string{}
	for _, kv := range wait.GetAttributes() {
		attrs[kv.GetKey()] = kv.GetValue().GetStringValue()
	}
	assert.Equal(t, "answered", attrs["askbridge.outcome"])
	assert.Equal(t, tracing.Opaque("slack:U1"), attrs["askbridge.responder.id"], "who answered, as an opaque id")

	traceID := hex.EncodeToString(root.GetTraceId())
	assert.Equal(t, "00-"+traceID+"-"+hex.EncodeToString(webhook.GetSpanId())+"-01", webhookTP,
		"the resume webhook carries its span's traceparent: the continuation run joins the trace")
	assert.Contains(t, pollTP, traceID, "the long-poll answer carries the question's traceparent")
	assertNoSecretsInSpans(t, spans, q, b)
}

// assertNoSecretsInSpans: no question text, answer, label, name or token
// in span names, attributes, events or status messages.
func assertNoSecretsInSpans(t *testing.T, spans []*tracepb.Span, q *domain.Question, b *opsBridge) {
	t.Helper()
	var all bytes.Buffer
	for _, s := range spans {
		all.WriteString(s.GetName() + "\n" + s.GetStatus().GetMessage() + "\n")
		for _, kv := range s.GetAttributes() {
			all.WriteString(kv.GetKey() + "=" + kv.GetValue().String() + "\n")
		}
		for _, e := range s.GetEvents() {
			all.WriteString(e.GetName() + "\n")
			for _, kv := range e.GetAttributes() {
				all.WriteString(kv.GetKey() + "=" + kv.GetValue().String() + "\n")
			}
		}
	}
	text := all.String()
	require.NotEmpty(t, text)
	for _, leak := range []string{"secret-plan", "Ship it", "Hold", "alice", "U1", b.slack.BotToken, slackSecret,
		"ops-test-webhook-secret", b.recv.URL} {
		assert.False(t, strings.Contains(text, leak), "spans must not carry %q:\n%s", leak, text)
	}
}

// TestSpansWithAnInMemoryRecorder: the same ask recorded in memory (the
// unit-test form): a forged click records only its inbound span (bad
// signature), a refused
// person is an interaction span with the refusal's code, and a question
// asked without a traceparent starts its own trace.
func TestSpansWithAnInMemoryRecorder(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	b := newOpsBridge(t, func(s *app.Settings) { s.TracerProvider = tp })
	q := b.askWebhook(nil, map[string]any{"responders": map[string]any{"users": []string{"slack:U2"}}})
	ts := slackTS(t, q)
	require.Equal(t, http.StatusUnauthorized, b.click("U1", ts, "Ship it", "forged", nil))
	b.click("U1", ts, "Ship it", slackSecret, nil) // U1 is not among the responders
	require.Eventually(t, func() bool {
		for _, s := range rec.Ended() {
			if s.Name() == "askbridge.interaction" {
				return true
			}
		}
		return false
	}, 5*time.Second, 10*time.Millisecond)
	var askTrace string
	for _, s := range rec.Ended() {
		if s.Name() == "askbridge.ask" {
			assert.False(t, s.Parent().IsValid(), "no traceparent: the ask starts the trace")
			askTrace = s.SpanContext().TraceID().String()
		}
	}
	require.NotEmpty(t, askTrace)
	for _, s := range rec.Ended() {
		if s.Name() != "askbridge.interaction" {
			continue
		}
		assert.Equal(t, askTrace, s.SpanContext().TraceID().String())
		got := map[string]string{}
		for _, kv := range s.Attributes() {
			got[string(kv.Key)] = kv.Value.AsString()
		}
		assert.Equal(t, "refused", got["askbridge.result"])
		assert.Equal(t, "not_allowed", got["askbridge.reason"])
		assert.Equal(t, "slack", got["askbridge.platform"])
		assert.Equal(t, "not_allowed", s.Status().Description)
	}
	// Each platform request has its span, with its signature's verdict: the
	// forged click's is bad (and nothing else of it is recorded), the real
	// one's verified.
	sigs := map[string]int{}
	for _, s := range rec.Ended() {
		if s.Name() != "askbridge.inbound" {
			continue
		}
		got := map[string]string{}
		for _, kv := range s.Attributes() {
			got[string(kv.Key)] = kv.Value.String()
		}
		assert.Equal(t, "slack", got["askbridge.platform"])
		sigs[got["askbridge.signature"]]++
		if got["askbridge.signature"] == "bad" {
			assert.Equal(t, "401", got["http.response.status_code"])
			assert.Equal(t, "bad_signature", s.Status().Description)
		}
	}
	assert.Equal(t, map[string]int{"bad": 1, "verified": 1}, sigs)
}
