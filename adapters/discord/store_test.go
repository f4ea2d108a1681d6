package discord

import (
	"testing"

	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/storetest"
)

// newTestStore opens the embedded in-process store, the bridge's default.
func newTestStore(t testing.TB) *store.Store { return openStore(t, "") }

// redisReplicas starts a real redis-server for the test and opens n
// stores on it: n bridge replicas sharing one Redis.
func redisReplicas(t testing.TB, n int) []*store.Store {
	srv := storetest.Redis(t)
	out := make([]*store.Store, n)
	for i := range out {
		out[i] = openStore(t, srv.URL)
	}
	return out
}

// openStore opens a store on url ("" = embedded) for the test.
func openStore(t testing.TB, url string) *store.Store { return storetest.Open(t, url) }
