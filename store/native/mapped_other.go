//go:build !linux

package native

import (
	"time"

	bolt "go.etcd.io/bbolt"
)

// unmapLoaded does nothing here: see mapped_linux.go.
func unmapLoaded(*bolt.DB) {}

// handBack does nothing here: see mapped_linux.go.
func handBack(*bolt.DB, time.Duration, int64, <-chan struct{}) {}
