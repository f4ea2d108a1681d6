// Package httperr turns askbridge's errors into HTTP: the one table from
// an error code (domain.E…) to its status (docs/openapi.yaml), and the one
// JSON error document, {"error": {"code", "message", "details"}}. The API,
// the parked long-polls, the WebSocket handshake and the web inbox all
// answer through it, so a code means the same status everywhere. The core
// names the codes and knows nothing of HTTP.
package httperr

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/askbridge/askbridge/domain"
)

var statuses = map[string]int{
	domain.EInvalid:              http.StatusBadRequest,
	domain.EInvalidAnswer:        http.StatusBadRequest,
	domain.ENotFound:             http.StatusNotFound,
	domain.EUnauthorized:         http.StatusUnauthorized,
	domain.EForbidden:            http.StatusForbidden,
	domain.ESubagentNotAllowed:   http.StatusForbidden,
	domain.EToolNotEnabled:       http.StatusForbidden,
	domain.ENotAllowed:           http.StatusForbidden,
	domain.EAlreadyAnswered:      http.StatusConflict,
	domain.EQuestionCancelled:    http.StatusConflict,
	domain.EQuestionExpired:      http.StatusConflict,
	domain.ERunNotPaused:         http.StatusConflict,
	domain.EConflict:             http.StatusConflict,
	domain.EUnsupportedMediaType: http.StatusUnsupportedMediaType,
	domain.ETooLarge:             http.StatusRequestEntityTooLarge,
	domain.EMethodNotAllowed:     http.StatusMethodNotAllowed,
	domain.EUnavailable:          http.StatusServiceUnavailable,
	domain.ERateLimited:          http.StatusTooManyRequests,
	domain.EInternal:             http.StatusInternalServerError,
}

// Status maps an error code to its HTTP status; an unknown code is a 500.
func Status(code string) int {
	if s, ok := statuses[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Of returns err as askbridge's error; an error that is not one becomes a
// plain "internal error", so nothing of its text (addresses, Go types)
// reaches the client.
func Of(err error) *domain.Error {
	var e *domain.Error
	if errors.As(err, &e) {
		return e
	}
	return &domain.Error{Code: domain.EInternal, Message: "internal error"}
}

// Response returns the status and the JSON error document of e.
func Response(e *domain.Error) (int, []byte) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{"error": e})
	return Status(e.Code), buf.Bytes()
}

// Write answers the request with e.
func Write(w http.ResponseWriter, e *domain.Error) {
	status, body := Response(e)
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
