package slack

import (
	"testing"

	"github.com/askbridge/askbridge/core"
)

func newTestStore(t testing.TB) core.Store { return newMemStore() }
