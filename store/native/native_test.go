package native_test

import (
	"testing"

	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store/native"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/stretchr/testify/require"
)

func open(t testing.TB, opts native.Options) *native.Store {
	t.Helper()
	s, err := native.Open(opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// replicas opens the store once per test and hands out further handles
// on it, as replicas on one Redis.
func replicas(dir func(t *testing.T) string) storetest.Replicas {
	return func(t *testing.T) func() lifecycle.Store {
		var first *native.Store
		return func() lifecycle.Store {
			if first == nil {
				first = open(t, native.Options{Dir: dir(t)})
				return first
			}
			return first.Replica()
		}
	}
}

func TestConformanceInMemory(t *testing.T) {
	storetest.Run(t, replicas(func(*testing.T) string { return "" }))
}

func TestConformanceDurable(t *testing.T) {
	storetest.Run(t, replicas(func(t *testing.T) string { return t.TempDir() }))
}

func TestBacklogInMemory(t *testing.T) {
	storetest.Backlog(t, open(t, native.Options{}))
}
