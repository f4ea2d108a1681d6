// Package httperr turns askbridge's errors into HTTP: the one table from
// an error code (core.E…) to its status (docs/openapi.yaml), and the one
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

	"github.com/askbridge/askbridge/core"
)

var statuses = map[string]int{
	core.EInvalid:              http.StatusBadRequest,
	core.EInvalidAnswer:        http.StatusBadRequest,
	core.ENotFound:             http.StatusNotFound,
	core.EUnauthorized:         http.StatusUnauthorized,
	core.EForbidden:            http.StatusForbidden,
	core.ESubagentNotAllowed:   http.StatusForbidden,
	core.EToolNotEnabled:       http.StatusForbidden,
	core.ENotAllowed:           http.StatusForbidden,
	core.EAlreadyAnswered:      http.StatusConflict,
	core.EQuestionCancelled:    http.StatusConflict,
	core.EQuestionExpired:      http.StatusConflict,
	core.ERunNotPaused:         http.StatusConflict,
	core.EConflict:             http.StatusConflict,
	core.EUnsupportedMediaType: http.StatusUnsupportedMediaType,
	core.ETooLarge:             http.StatusRequestEntityTooLarge,
	core.EMethodNotAllowed:     http.StatusMethodNotAllowed,
	core.EUnavailable:          http.StatusServiceUnavailable,
	core.EInternal:             http.StatusInternalServerError,
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
func Of(err error) *core.Error {
	var e *core.Error
	if errors.As(err, &e) {
		return e
	}
	return &core.Error{Code: core.EInternal, Message: "internal error"}
}

// Response returns the status and the JSON error document of e.
func Response(e *core.Error) (int, []byte) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{"error": e})
	return Status(e.Code), buf.Bytes()
}

// Write answers the request with e.
func Write(w http.ResponseWriter, e *core.Error) {
	status, body := Response(e)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
