package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRouteApprovalSettings: allow_edit and auto_allow reach the route;
// a malformed rule is named with its path.
func TestRouteApprovalSettings(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.yaml")
	require.NoError(t, os.WriteFile(p, []byte("routes:\n  - name: dev\n    allow_edit: false\n    auto_allow: [\"Bash(git status*)\", Read]\n"), 0o600))
	s, err := loadConfig(p, func(string) string { return "" })
	require.NoError(t, err)
	require.Len(t, s.Routes, 1)
	assert.True(t, s.Routes[0].NoEdit)
	assert.Equal(t, []string{"Bash(git status*)", "Read"}, s.Routes[0].AutoAllow)

	require.NoError(t, os.WriteFile(p, []byte("routes:\n  - name: dev\n    auto_allow: [\"Bash(\"]\n"), 0o600))
	_, err = loadConfig(p, func(string) string { return "" })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "routes[0].auto_allow[0]")
}
