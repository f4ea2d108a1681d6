package domain

import (
	"errors"
	"fmt"
	"strings"
)

// Error codes of the HTTP API (docs/openapi.yaml). internal/httperr maps
// each to its HTTP status; the core knows nothing of HTTP.
const (
	EInvalid            = "invalid"
	EInvalidAnswer      = "invalid_answer"
	ENotFound           = "not_found"
	EUnauthorized       = "unauthorized"
	EForbidden          = "forbidden"
	ESubagentNotAllowed = "subagent_not_allowed"
	EToolNotEnabled     = "tool_not_enabled"
	ENotAllowed         = "not_allowed"
	EAlreadyAnswered    = "already_answered"
	EQuestionCancelled  = "question_cancelled"
	EQuestionExpired    = "question_expired"
	ERunNotPaused       = "run_not_paused"
	EConflict           = "conflict"
	// EUnsupportedMediaType: a request body not sent as application/json.
	EUnsupportedMediaType = "unsupported_media_type"
	ETooLarge             = "too_large"
	EMethodNotAllowed     = "method_not_allowed"
	EUnavailable          = "unavailable"
	// ERateLimited: too many failed attempts from one address or at one
	// token; Error.RetryAfter says when to try again.
	ERateLimited = "rate_limited"
	EInternal    = "internal"
)

// MsgAnswerNotValid is the message of an EInvalidAnswer error whose
// details say what is wrong (Words.Invalid then names only them).
const MsgAnswerNotValid = "the answer is not valid"

// Detail names one problem with one field of a request.
type Detail struct {
	Field   string `json:"field"`
	Problem string `json:"problem"`
}

// Error is askbridge's error: a code, a message for people, and for
// validation errors every problem found.
type Error struct {
	Code    string   `json:"code"`
	Message string   `json:"message"`
	Details []Detail `json:"details,omitempty"`
	// RetryAfter, in seconds, goes out as the Retry-After header.
	RetryAfter int `json:"-"`
}

func (e *Error) Error() string {
	if len(e.Details) == 0 {
		return e.Message
	}
	parts := make([]string, len(e.Details))
	for i, d := range e.Details {
		parts[i] = d.Field + ": " + d.Problem
	}
	return e.Message + " (" + strings.Join(parts, "; ") + ")"
}

// Errorf returns an *Error with the code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err, EInternal for errors that are not ours.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// StatusError is the error for an operation on a question that is no longer
// pending.
func StatusError(q *Question) *Error {
	switch q.Status {
	case StatusAnswered:
		by := "someone"
		if q.RespondedBy != nil {
			by = q.RespondedBy.String()
		}
		return Errorf(EAlreadyAnswered, "question %s was already answered by %s", q.ID, by)
	case StatusCancelled:
		return Errorf(EQuestionCancelled, "question %s was cancelled (%s)", q.ID, q.CancelReason)
	case StatusExpired:
		return Errorf(EQuestionExpired, "question %s expired at %s", q.ID, q.ExpiresAt.Format("2006-01-02T15:04:05Z07:00"))
	}
	return Errorf(EConflict, "question %s is %s", q.ID, q.Status)
}

// problems collects validation details.
type problems []Detail

func (p *problems) add(field, format string, args ...any) {
	*p = append(*p, Detail{Field: field, Problem: fmt.Sprintf(format, args...)})
}

func (p problems) err(code, msg string) error {
	if len(p) == 0 {
		return nil
	}
	return &Error{Code: code, Message: msg, Details: p}
}
