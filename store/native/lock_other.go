//go:build !unix

package native

import (
	"errors"
	"time"
)

var errLocked = errors.New("locked")

// readLocked runs fn (no shared lock on this system).
func readLocked(_ string, _ time.Duration, fn func() error) error { return fn() }
