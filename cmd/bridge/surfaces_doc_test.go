package main

import (
	"os"
	"regexp"
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

// TestSurfacePagesStartWithSetUp: each surface's page opens, after who it
// is for, with "Set up" and how long that takes, before any rationale or
// tour; on-call.md says how the bridge loads the configuration file its
// route lives in.
func TestSurfacePagesStartWithSetUp(t *testing.T) {
	heading := regexp.MustCompile(`(?m)^## .*$`)
	setUp := regexp.MustCompile(`^## Set up \(about \d+ minutes\)$`)
	for _, page := range []string{"slack", "discord", "telegram", "teams", "email", "pagerduty", "on-call"} {
		b, err := os.ReadFile("../../docs/" + page + ".md")
		require.NoError(t, err)
		doc := string(b)
		first := heading.FindStringIndex(doc)
		require.NotNil(t, first, "%s.md has no section", page)
		assert.Regexp(t, setUp, doc[first[0]:first[1]], "%s.md: the first section sets it up and says how long that takes", page)
		intro := strings.TrimSpace(doc[strings.Index(doc, "\n"):first[0]])
		assert.True(t, strings.HasPrefix(intro, "**Who this is for:**") && !strings.Contains(intro, "\n\n"),
			"%s.md: only who it is for comes before Set up, got:\n%s", page, intro)
		if page == "on-call" {
			section := doc[first[1]:]
			if next := heading.FindStringIndex(section); next != nil {
				section = section[:next[0]]
			}
			for _, want := range []string{"--config", "BRIDGE_CONFIG"} {
				assert.Contains(t, section, want, "on-call.md's Set up says how to load the configuration file")
			}
		}
	}
}
