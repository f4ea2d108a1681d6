package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/server/api"
	"github.com/askbridge/askbridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGuessingTokensIsSlow: 60 wrong bearer tokens used to cost 0.05 s in
// all. Past its budget of failures an address is answered 429 with
// Retry-After before any token is checked, and guesses sharing a real
// token's prefix get 429 too; the rightful user, elsewhere, or presenting
// the right token, is never locked out by the flood.
func TestGuessingTokensIsSlow(t *testing.T) {
	st, err := store.Open(context.Background(), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st})
	mux := http.NewServeMux()
	const real = "tok-alice-0123456789"
	api.New(api.Config{Router: router, Auth: api.NewAuth(nil, []api.Operator{{ID: "alice", Projects: []string{"ops"}, Token: real}})}).Register(mux)
	get := func(addr, token string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/api/projects/ops/agent-questions", nil)
		req.RemoteAddr = addr + ":40000"
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec
	}

	// One address guessing: 401 while within its budget, then 429.
	codes := map[int]int{}
	for i := range 60 {
		rec := get("203.0.113.7", fmt.Sprintf("guess-%02d-xxxxxxxx", i))
		codes[rec.Code]++
		if rec.Code == http.StatusTooManyRequests {
			s, err := strconv.Atoi(rec.Header().Get("Retry-After"))
			require.NoError(t, err)
			assert.True(t, s >= 1 && s <= 60, "Retry-After %d", s)
			assert.Contains(t, rec.Body.String(), `"code":"rate_limited"`)
		}
	}
	assert.Equal(t, 9, codes[http.StatusUnauthorized], "the budget, then the address waits")
	assert.Equal(t, 51, codes[http.StatusTooManyRequests])
	assert.Equal(t, http.StatusTooManyRequests, get("203.0.113.7", real).Code, "the flooding address waits, whatever it sends")
	assert.Equal(t, http.StatusOK, get("198.51.100.20", real).Code, "the rightful user elsewhere is not locked out")

	// Many addresses guessing at the real token's prefix: the guesses are
	// throttled, the right token still works from anywhere.
	for i := range 30 {
		get(fmt.Sprintf("192.0.2.%d", i+1), fmt.Sprintf("tok-al-guess-%d", i))
	}
	rec := get("192.0.2.200", "tok-al-guess-x")
	assert.Equal(t, http.StatusTooManyRequests, rec.Code, "a guess at that prefix waits")
	assert.Equal(t, http.StatusOK, get("192.0.2.201", real).Code, "the right token is never throttled")
}
