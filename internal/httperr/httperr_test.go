package httperr

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/askbridge/askbridge/domain"
)

func TestEveryCodeHasItsDocumentedStatus(t *testing.T) {
	for code, want := range map[string]int{
		domain.EInvalid: 400, domain.EInvalidAnswer: 400, domain.ENotFound: 404, domain.EUnauthorized: 401,
		domain.EForbidden: 403, domain.ESubagentNotAllowed: 403, domain.EToolNotEnabled: 403, domain.ENotAllowed: 403,
		domain.EAlreadyAnswered: 409, domain.EQuestionCancelled: 409, domain.EQuestionExpired: 409,
		domain.ERunNotPaused: 409, domain.EConflict: 409, domain.EUnsupportedMediaType: 415, domain.ETooLarge: 413,
		domain.EMethodNotAllowed: 405, domain.ERateLimited: 429, domain.EUnavailable: 503, domain.EInternal: 500, "no_such_code": 500,
	} {
		assert.Equal(t, want, Status(code), code)
	}
}

func TestForeignErrorsSayNothingOfThemselves(t *testing.T) {
	e := Of(fmt.Errorf("dial tcp 10.0.0.7:6379: %w", errors.New("connection refused")))
	assert.Equal(t, domain.EInternal, e.Code)
	assert.Equal(t, "internal error", e.Message)

	ours := domain.Errorf(domain.ENotFound, "question q1 not found")
	assert.Same(t, ours, Of(fmt.Errorf("reading: %w", ours)))
}

func TestWriteSendsTheErrorDocument(t *testing.T) {
	rec := httptest.NewRecorder()
	Write(rec, &domain.Error{Code: domain.EInvalid, Message: "bad <ask>", Details: []domain.Detail{{Field: "timeout", Problem: "not a duration"}}})
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	assert.Contains(t, rec.Body.String(), "bad <ask>", "not HTML-escaped")
	var doc struct {
		Error domain.Error `json:"error"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &doc))
	assert.Equal(t, "timeout", doc.Error.Details[0].Field)
}
