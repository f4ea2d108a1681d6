package main

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the table of variables in docs/operations.md from serveEnv (go generate ./cmd/bridge)")

const (
	opsDoc        = "../../docs/operations.md"
	envTableStart = "<!-- The table below is serve --help's list of variables (serveEnv, cmd/bridge/servehelp.go), written by go generate ./cmd/bridge. -->\n"
	envTableEnd   = "<!-- End of the generated table. -->\n"
)

// serveEnvTable is serveEnv as the Markdown table of docs/operations.md.
func serveEnvTable() string {
	cell := strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;")
	link := regexp.MustCompile(`docs/([a-z-]+\.md(#[a-z0-9-]+)?)`)
	var b strings.Builder
	b.WriteString("| variable | meaning | default |\n|---|---|---|\n")
	for _, v := range serveEnv {
		name := "`" + v.name + "`"
		if v.file {
			name += " (`_FILE`)"
		}
		def := cell.Replace(v.def)
		if v.def != "" && !strings.Contains(v.def, " ") {
			def = "`" + v.def + "`" // a value, not words
		}
		meaning := link.ReplaceAllString(cell.Replace(v.meaning), "[$1]($1)")
		b.WriteString("| " + name + " | " + meaning + " | " + def + " |\n")
	}
	return b.String()
}

// TestOperationsDocListsEveryServeVariable: the table of variables in
// docs/operations.md is serve --help's list, every variable with its
// meaning and default, so the page cannot miss one the bridge reads.
// `go generate ./cmd/bridge` rewrites it.
func TestOperationsDocListsEveryServeVariable(t *testing.T) {
	b, err := os.ReadFile(opsDoc)
	require.NoError(t, err)
	doc := string(b)
	start, end := strings.Index(doc, envTableStart), strings.Index(doc, envTableEnd)
	require.True(t, start >= 0 && end > start, "docs/operations.md has no generated table between %q and %q", envTableStart, envTableEnd)
	want := serveEnvTable()
	got := doc[start+len(envTableStart) : end]
	if *updateDocs {
		require.NoError(t, os.WriteFile(opsDoc, []byte(doc[:start+len(envTableStart)]+want+doc[end:]), 0o644))
		return
	}
	assert.Equal(t, want, got, "docs/operations.md's table of variables is not serve --help's list: run go generate ./cmd/bridge")
	for _, v := range serveEnv {
		assert.Contains(t, got, "| `"+v.name+"`", "docs/operations.md misses %s", v.name)
	}
}
