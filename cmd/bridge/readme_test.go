package main

import (
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadmeAgreesWithGoModAndTimeoutLimits keeps the README's Go version
// and its timeout limits the ones the code enforces.
func TestReadmeAgreesWithGoModAndTimeoutLimits(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	mod, err := os.ReadFile("../../go.mod")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	require.NotNil(t, m, "go.mod has a go line")
	assert.Contains(t, string(readme), fmt.Sprintf("Go %s or newer", m[1]))
	for _, v := range regexp.MustCompile(`Go (\S+) or newer`).FindAllSubmatch(readme, -1) {
		assert.Equal(t, string(m[1]), string(v[1]), "the README names another Go version than go.mod")
	}

	limits := fmt.Sprintf("%d s to %d days", int(domain.MinTimeout.Seconds()), int(domain.MaxTimeout.Hours()/24))
	assert.Contains(t, string(readme), "`timeout` is how long the question stays open: from "+limits)
	assert.Contains(t, string(readme), "`--timeout` ("+limits)
}
