// Package tracing is the bridge's OpenTelemetry tracing: Setup builds the
// tracer provider (off unless the standard OTEL_* variables or the
// configuration ask for OTLP export), and the helpers carry a question's
// W3C trace context (traceparent, tracestate) from the agent's ask through
// the person's answer to the resume webhook, which may happen on another
// replica minutes later: the context travels in the question's record.
//
// Spans carry ids, platforms, outcomes and counts only: never question
// text, answers, labels, names or tokens.
package tracing

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Scope is the instrumentation scope of every askbridge span.
const Scope = "github.com/askbridge/askbridge"

// Config is the tracing part of the configuration file; the standard
// OTEL_* environment variables apply on top (OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS,
// OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER, …).
type Config struct {
	// Endpoint is the OTLP/HTTP traces URL (tracing.endpoint, e.g.
	// http://collector:4318/v1/traces); empty: the OTEL_* variables decide.
	Endpoint string
	// Version is the bridge's version (service.version).
	Version string
}

// Enabled reports whether tracing is on: an endpoint is configured, or the
// environment names an OTLP endpoint or OTEL_TRACES_EXPORTER=otlp, and
// neither OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none turns it off.
func (c Config) Enabled(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(getenv("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	return c.Endpoint != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" ||
		getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || strings.EqualFold(getenv("OTEL_TRACES_EXPORTER"), "otlp")
}

// Setup returns the tracer provider and what flushes and stops it. When
// tracing is off it is a no-op provider: nothing is recorded or sent, yet
// a traceparent received on an ask is still passed on to the resume
// webhook, so the agent's own trace continues.
func Setup(ctx context.Context, c Config, getenv func(string) string) (trace.TracerProvider, func(context.Context) error, error) {
	if !c.Enabled(getenv) {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, nil
	}
	var opts []otlptracehttp.Option
	if c.Endpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(c.Endpoint))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: the OTLP exporter: %w", err)
	}
	attrs := []resource.Option{resource.WithAttributes(semconv.ServiceVersion(c.Version)), resource.WithFromEnv(), resource.WithTelemetrySDK()}
	if getenv("OTEL_SERVICE_NAME") == "" {
		attrs = append(attrs, resource.WithAttributes(semconv.ServiceName("askbridge")))
	}
	res, err := resource.New(ctx, attrs...)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, nil, fmt.Errorf("tracing: OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	// NewTracerProvider reads OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG
	// (default: parentbased_always_on).
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}

// Tracer is tp's tracer for askbridge (tp nil: a no-op one).
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return tp.Tracer(Scope)
}

var w3c = propagation.TraceContext{}

// Extract returns ctx with the W3C trace context of h (traceparent,
// tracestate), when it carries a valid one.
func Extract(ctx context.Context, h http.Header) context.Context {
	return w3c.Extract(ctx, propagation.HeaderCarrier(h))
}

// Inject sets traceparent (and tracestate) on h from the span in ctx.
func Inject(ctx context.Context, h http.Header) { w3c.Inject(ctx, propagation.HeaderCarrier(h)) }

// FromEnv returns ctx with the trace context of the TRACEPARENT and
// TRACESTATE environment variables (how `askbridge mcp` and the hook learn
// the agent's trace).
func FromEnv(ctx context.Context, getenv func(string) string) context.Context {
	return Remote(ctx, getenv("TRACEPARENT"), getenv("TRACESTATE"))
}

// Carrier returns the W3C traceparent and tracestate of the span in ctx
// ("" when it has none) to keep with a record.
func Carrier(ctx context.Context) (traceparent, tracestate string) {
	h := http.Header{}
	Inject(ctx, h)
	return h.Get("traceparent"), h.Get("tracestate")
}

// Remote returns ctx whose parent is the span a kept traceparent names
// (ctx unchanged when traceparent is empty or not valid).
func Remote(ctx context.Context, traceparent, tracestate string) context.Context {
	if traceparent == "" {
		return ctx
	}
	h := http.Header{}
	h.Set("traceparent", traceparent)
	if tracestate != "" {
		h.Set("tracestate", tracestate)
	}
	return Extract(ctx, h)
}

// Valid reports whether traceparent is a well-formed W3C traceparent, safe
// to write into a response head.
func Valid(traceparent string) bool {
	return trace.SpanContextFromContext(Remote(context.Background(), traceparent, "")).IsValid()
}

// Opaque is a stable id for a person in span attributes: who answered can
// be told apart and correlated across traces without naming them.
func Opaque(key string) string {
	sum := sha256.Sum256([]byte("askbridge-person\x00" + key))
	return hex.EncodeToString(sum[:8])
}
