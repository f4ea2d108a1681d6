package tracing

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestOffByDefault: only an endpoint (configured or OTEL_*) or
// OTEL_TRACES_EXPORTER=otlp turns tracing on; OTEL_SDK_DISABLED and
// OTEL_TRACES_EXPORTER=none turn it off again.
func TestOffByDefault(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		env  map[string]string
		want bool
	}{
		{Config{}, nil, false},
		{Config{}, map[string]string{"OTEL_SERVICE_NAME": "x"}, false},
		{Config{Endpoint: "http://c:4318/v1/traces"}, nil, true},
		{Config{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, true},
		{Config{}, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, true},
		{Config{}, map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{Config{Endpoint: "http://c"}, map[string]string{"OTEL_SDK_DISABLED": "true"}, false},
		{Config{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_TRACES_EXPORTER": "none"}, false},
	} {
		assert.Equal(t, c.want, c.cfg.Enabled(env(c.env)), "%+v %v", c.cfg, c.env)
	}
	tp, stop, err := Setup(context.Background(), Config{}, env(nil))
	assert.NoError(t, err)
	_, span := tp.Tracer("x").Start(context.Background(), "s")
	assert.False(t, span.IsRecording(), "off: nothing is recorded")
	assert.NoError(t, stop(context.Background()))
}

// TestTraceContextTravelsThroughARecord: the carrier kept with a question
// makes a later span (another request, another replica) its child; a
// traceparent received while tracing is off is still passed on.
func TestTraceContextTravelsThroughARecord(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, ask := tp.Tracer("t").Start(context.Background(), "ask")
	tp1, ts := Carrier(ctx)
	ask.End()
	assert.True(t, Valid(tp1))
	_, later := tp.Tracer("t").Start(Remote(context.Background(), tp1, ts), "answer")
	later.End()
	assert.Equal(t, ask.SpanContext().SpanID(), rec.Ended()[1].Parent().SpanID())
	assert.Equal(t, ask.SpanContext().TraceID(), later.SpanContext().TraceID())

	h := http.Header{}
	h.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	off, _, _ := Setup(context.Background(), Config{}, env(nil))
	c, span := Tracer(off).Start(Extract(context.Background(), h), "ask")
	span.End()
	got, _ := Carrier(c)
	assert.Equal(t, h.Get("traceparent"), got, "tracing off: the agent's trace context is kept as it came")
	assert.Equal(t, trace.SpanContextFromContext(FromEnv(context.Background(), env(map[string]string{"TRACEPARENT": got}))).TraceID().String(),
		"4bf92f3577b34da6a3ce929d0e0e4736")

	for _, bad := range []string{"", "00-zz-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\nX-Evil: 1"} {
		assert.False(t, Valid(bad), "%q is not written into a response head", bad)
	}
	assert.NotEqual(t, Opaque("slack:U1"), Opaque("slack:U2"))
	assert.NotContains(t, Opaque("slack:U1"), "U1")
}
