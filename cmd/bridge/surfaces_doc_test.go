package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPagesNameEverySurface: where the docs, the packages' descriptions and
// the README say where a person answers, they name every surface, not the
// first three that were built.
func TestPagesNameEverySurface(t *testing.T) {
	surfaces := []string{"Slack", "Discord", "Telegram", "email", "web inbox", "PagerDuty"}
	for file, marker := range map[string]string{
		"../../README.md":                                "askbridge posts it where your team works",
		"../../docs/typescript.md":                       "**Who this is for:**",
		"../../docs/python.md":                           "**Who this is for:**",
		"../../clients/typescript/package.json":          `"description":`,
		"../../clients/typescript/src/index.ts":          "// askbridge: ask people",
		"../../clients/python/pyproject.toml":            "description =",
		"../../clients/python/src/askbridge/__init__.py": `"""askbridge: ask people`,
	} {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		text := string(b)
		i := strings.Index(text, marker)
		require.GreaterOrEqual(t, i, 0, "%s has no %q", file, marker)
		// The sentence or field that names them: up to its paragraph's end.
		part := text[i:]
		if end := strings.Index(part, "\n\n"); end >= 0 {
			part = part[:end]
		}
		if strings.HasSuffix(file, ".json") || strings.HasSuffix(file, ".toml") {
			part, _, _ = strings.Cut(part, "\n")
		}
		for _, s := range surfaces {
			assert.Contains(t, part, s, "%s: %q", file, part)
		}
	}
}
