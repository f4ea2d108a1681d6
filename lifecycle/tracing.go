package lifecycle

import (
	"context"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/tracing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Span attributes: ids, platforms, outcomes and codes only, never text a
// person or an agent wrote (internal/tracing).
var (
	attrQuestion  = attribute.Key("askbridge.question.id")
	attrProject   = attribute.Key("askbridge.project")
	attrPlatform  = attribute.Key("askbridge.platform")
	attrResult    = attribute.Key("askbridge.result")
	attrReason    = attribute.Key("askbridge.reason")
	attrOutcome   = attribute.Key("askbridge.outcome")
	attrResponder = attribute.Key("askbridge.responder.id")
	attrToAnswer  = attribute.Key("askbridge.time_to_answer_seconds")
)

// endSpan ends span, marking it failed with err's code (never its message,
// which may quote what an agent or a platform sent).
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.SetStatus(codes.Error, domain.ErrorCode(err))
	}
	span.End()
}

// questionTrace returns ctx whose parent span is q's ask, when q kept one.
func questionTrace(ctx context.Context, q *domain.Question) context.Context {
	if q == nil {
		return ctx
	}
	return tracing.Remote(ctx, q.TraceParent, q.TraceState)
}

// startInteraction starts the span of a person's answer, vote or click in
// q's trace; the span of the request that carried it (if any) is linked.
func (r *Router) startInteraction(ctx context.Context, q *domain.Question, who domain.Person) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{trace.WithAttributes(attrQuestion.String(q.ID), attrProject.String(q.ProjectID),
		attrPlatform.String(who.Platform))}
	if in := trace.SpanContextFromContext(ctx); in.IsValid() && q.TraceParent != "" {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: in}))
	}
	return r.tracer.Start(questionTrace(ctx, q), "askbridge.interaction", opts...)
}

// traceWait records the span of the whole wait, from the ask to the final
// state, once this replica made the transition.
func (r *Router) traceWait(q *domain.Question) {
	if q.TraceParent == "" {
		return
	}
	end := q.UpdatedAt
	if q.RespondedAt != nil {
		end = *q.RespondedAt
	}
	attrs := []attribute.KeyValue{attrQuestion.String(q.ID), attrProject.String(q.ProjectID), attrOutcome.String(string(q.Status))}
	if q.Status == domain.StatusAnswered && q.RespondedBy != nil {
		attrs = append(attrs, attrResponder.String(tracing.Opaque(q.RespondedBy.Key())),
			attrToAnswer.Float64(end.Sub(q.CreatedAt).Seconds()))
	}
	if q.Status == domain.StatusCancelled {
		attrs = append(attrs, attrReason.String(q.CancelReason))
	}
	_, span := r.tracer.Start(questionTrace(context.Background(), q), "askbridge.wait",
		trace.WithTimestamp(q.CreatedAt), trace.WithAttributes(attrs...))
	span.End(trace.WithTimestamp(end))
}
