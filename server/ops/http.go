package ops

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Inbound tells whether a route (a ServeMux pattern) receives a platform's
// requests (interactions, events, webhooks), and whose.
type Inbound func(pattern string) (platform string, ok bool)

// TraceInbound records a span for each request to an Inbound route
// (askbridge.inbound: the platform, the route, whether its signature was
// accepted, and the status), nil: none.
func (m *Metrics) TraceInbound(tp trace.TracerProvider) {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	m.inboundTracer = tp.Tracer("askbridge")
}

// Routes wraps h, whose routes are mux's: every request counts by its
// pattern and status class; a request to an Inbound route also observes
// the time until its status was written (the platform's acknowledgement)
// and counts a 401 (a missing or forged signature) as bad_signature, in a
// span of its own when TraceInbound was given a tracer.
func (m *Metrics) Routes(h http.Handler, mux *http.ServeMux, inbound Inbound) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := mux.Handler(r)
		route := pattern
		if route == "" {
			route = "unmatched"
		}
		platform, isInbound := "", false
		if inbound != nil && pattern != "" {
			platform, isInbound = inbound(pattern)
		}
		rec := &recorder{ResponseWriter: w, start: time.Now()}
		var span trace.Span
		if isInbound && m.inboundTracer != nil {
			// The platform's request: its signature is checked by the
			// surface before anything is read; a 401 is a bad signature.
			var ctx = r.Context()
			ctx, span = m.inboundTracer.Start(ctx, "askbridge.inbound", trace.WithSpanKind(trace.SpanKindServer),
				trace.WithAttributes(attribute.String("askbridge.platform", platform), attribute.String("http.route", pattern)))
			r = r.WithContext(ctx)
		}
		defer func() {
			code := "hijacked"
			if !rec.hijacked {
				status := rec.status
				if status == 0 {
					status = http.StatusOK
				}
				code = strconv.Itoa(status/100) + "xx"
			}
			m.requests.WithLabelValues(route, code).Inc()
			if isInbound {
				if rec.status == 0 {
					rec.took = time.Since(rec.start)
				}
				m.Acked(platform, rec.took)
				if rec.status == http.StatusUnauthorized {
					m.BadSignature(platform)
				}
				if span != nil {
					sig := "verified"
					if rec.status == http.StatusUnauthorized {
						sig = "bad"
						span.SetStatus(codes.Error, "bad_signature")
					}
					span.SetAttributes(attribute.String("askbridge.signature", sig), attribute.Int("http.response.status_code", rec.status))
					span.End()
				}
			}
		}()
		h.ServeHTTP(rec, r)
	})
}

// recorder keeps the status a handler wrote and when, and passes on what
// parked long-polls, streams and WebSockets need of the ResponseWriter.
type recorder struct {
	http.ResponseWriter
	start    time.Time
	took     time.Duration
	status   int
	hijacked bool
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 && code >= 200 {
		r.status, r.took = code, time.Since(r.start)
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status, r.took = http.StatusOK, time.Since(r.start)
	}
	return r.ResponseWriter.Write(b)
}

// Flush implements http.Flusher.
func (r *recorder) Flush() {
	if r.status == 0 {
		r.status, r.took = http.StatusOK, time.Since(r.start)
	}
	_ = http.NewResponseController(r.ResponseWriter).Flush()
}

// Hijack implements http.Hijacker.
func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(r.ResponseWriter).Hijack()
	if err == nil {
		r.hijacked = true
	} else if errors.Is(err, http.ErrNotSupported) {
		return nil, nil, err
	}
	return c, rw, err
}

// Unwrap lets http.ResponseController reach the server's writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
