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

	"github.com/askbridge/askbridge/core"
)

func TestEveryCodeHasItsDocumentedStatus(t *testing.T) {
	for code, want := range map[string]int{
		core.EInvalid: 400, core.EInvalidAnswer: 400, core.ENotFound: 404, core.EUnauthorized: 401,
		core.EForbidden: 403, core.ESubagentNotAllowed: 403, core.EToolNotEnabled: 403, core.ENotAllowed: 403,
		core.EAlreadyAnswered: 409, core.EQuestionCancelled: 409, core.EQuestionExpired: 409,
		core.ERunNotPaused: 409, core.EConflict: 409, core.EUnsupportedMediaType: 415, core.ETooLarge: 413,
		core.EMethodNotAllowed: 405, core.EUnavailable: 503, core.EInternal: 500, "no_such_code": 500,
	} {
		assert.Equal(t, want, Status(code), code)
	}
}

func TestForeignErrorsSayNothingOfThemselves(t *testing.T) {
	e := Of(fmt.Errorf("dial tcp 10.0.0.7:6379: %w", errors.New("connection refused")))
	assert.Equal(t, core.EInternal, e.Code)
	assert.Equal(t, "internal error", e.Message)

	ours := core.Errorf(core.ENotFound, "question q1 not found")
	assert.Same(t, ours, Of(fmt.Errorf("reading: %w", ours)))
}

func TestWriteSendsTheErrorDocument(t *testing.T) {
	rec := httptest.NewRecorder()
	Write(rec, &core.Error{Code: core.EInvalid, Message: "bad <ask>", Details: []core.Detail{{Field: "timeout", Problem: "not a duration"}}})
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	assert.Contains(t, rec.Body.String(), "bad <ask>", "not HTML-escaped")
	var doc struct {
		Error core.Error `json:"error"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &doc))
	assert.Equal(t, "timeout", doc.Error.Details[0].Field)
}
