package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxProductionLines is the house limit on a production Go file: one that
// grows past it is split along the seams its package already uses.
const maxProductionLines = 600

// TestProductionFilesStayUnder600Lines keeps every non-test Go file of the
// repository (generated ones and third_party's patched copies aside) at
// most maxProductionLines long.
func TestProductionFilesStayUnder600Lines(t *testing.T) {
	var long []string
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != "../.." && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "testdata" || n == "vendor" || n == "third_party") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte("\n// Code generated ")) || bytes.HasPrefix(b, []byte("// Code generated ")) {
			return nil
		}
		if n := bytes.Count(b, []byte("\n")); n > maxProductionLines {
			rel, _ := filepath.Rel("../..", path)
			long = append(long, fmt.Sprintf("%s: %d lines", rel, n))
		}
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, long, "production Go files over %d lines: split each along the seams its package already uses (render, keyboard, routes, …)", maxProductionLines)
}
