package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadmeAgreesWithGoModAndTimeoutLimits keeps the Go version and the
// timeout limits the docs state (README.md and docs/*.md) the ones the code
// enforces: the Go version and the ask's timeout are in the README, the
// `askbridge ask` flags in docs/agents.md.
func TestReadmeAgreesWithGoModAndTimeoutLimits(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	var readme []byte
	for _, f := range append([]string{"../../README.md"}, files...) {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		readme = append(append(readme, b...), '\n')
	}
	mod, err := os.ReadFile("../../go.mod")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	require.NotNil(t, m, "go.mod has a go line")
	assert.Contains(t, string(readme), fmt.Sprintf("Go %s or newer", m[1]))
	for _, v := range regexp.MustCompile(`Go (\S+) or newer`).FindAllSubmatch(readme, -1) {
		assert.Equal(t, string(m[1]), string(v[1]), "the docs name another Go version than go.mod")
	}

	limits := fmt.Sprintf("%d s to %d days", int(domain.MinTimeout.Seconds()), int(domain.MaxTimeout.Hours()/24))
	assert.Contains(t, string(readme), "`timeout` is how long the question stays open: from "+limits)
	assert.Contains(t, string(readme), "`--timeout` ("+limits)
}
