package discord

import (
	"testing"

	"github.com/askbridge/askbridge/core"
)

// sharedStore returns the store of one replica.
// TODO(store): switch to store.Open on storetest.Redis(t) once store lands.
func sharedStore(t testing.TB) core.Store { return newMemStore() }

// sharedStoreAgain returns another replica's connection to the same data.
func sharedStoreAgain(t testing.TB, st core.Store) core.Store { return st }
