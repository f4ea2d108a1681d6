//go:build !linux

package native

import bolt "go.etcd.io/bbolt"

// unmapLoaded does nothing here: see mapped_linux.go.
func unmapLoaded(*bolt.DB) {}
