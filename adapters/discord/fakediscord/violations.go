package fakediscord

import "slices"

// Violations returns the rules requests and applied responses broke so far
// (they are also reported when the test ends), for tests that check them
// as they go, such as fuzz targets.
func (f *Server) Violations() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.violations)
}
