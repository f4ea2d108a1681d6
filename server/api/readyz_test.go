package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/server/api"
	"github.com/askbridge/askbridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// failingPing is a store whose Ping fails as the embedded store's does
// when its disk is full.
type failingPing struct {
	lifecycle.Store
	err error
}

func (f failingPing) Ping(context.Context) error { return f.err }

type diskFull struct{}

func (diskFull) Error() string {
	return "the disk holding /var/lib/askbridge is full: free space there"
}
func (diskFull) Readiness() string { return "the disk holding the data directory is full" }

// TestReadyzSaysWhyTheStoreIsNotReady: /readyz is 503 while the store
// cannot write, and says why in an operator's words (without the data
// directory's path); /healthz stays 200, as the store recovers by itself.
func TestReadyzSaysWhyTheStoreIsNotReady(t *testing.T) {
	st, err := store.Open(context.Background(), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: failingPing{st, diskFull{}}})
	mux := http.NewServeMux()
	api.New(api.Config{Router: router}).Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := &bridge{t: t, srv: srv}

	r := b.do("GET", "/readyz", "", nil)
	assert.Equal(t, 503, r.status)
	assert.Equal(t, "not ready", r.body["status"])
	assert.Equal(t, map[string]any{"store": "unavailable: the disk holding the data directory is full"}, r.body["checks"])
	assert.Equal(t, 200, b.do("GET", "/healthz", "", nil).status)
}
