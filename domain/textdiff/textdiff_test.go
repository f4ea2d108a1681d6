package textdiff

import (
	"fmt"
	"strings"
	"testing"
)

func TestHunksSmallChange(t *testing.T) {
	old := "a\nb\nc\nd\ne\nf\ng\nh\n"
	new := "a\nb\nc\nD\ne\nf\ng\nh\n"
	got := Unified("a/x.txt", "b/x.txt", old, new)
	want := "--- a/x.txt\n+++ b/x.txt\n@@ -1,7 +1,7 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n"
	if got != want {
		t.Fatalf("diff:\n%s\nwant:\n%s", got, want)
	}
}

func TestNewFileAllAdded(t *testing.T) {
	got := Unified("/dev/null", "b/new.go", "", "package x\n\nfunc F() {}\n")
	want := "--- /dev/null\n+++ b/new.go\n@@ -0,0 +1,3 @@\n+package x\n+\n+func F() {}\n"
	if got != want {
		t.Fatalf("diff:\n%s\nwant:\n%s", got, want)
	}
}

func TestEqualTextsNoDiff(t *testing.T) {
	if got := Unified("a", "b", "x\n", "x\n"); got != "" {
		t.Fatalf("equal texts gave %q", got)
	}
}

// TestThreeHundredChangedLines: every one of 300 changed lines appears,
// removed and added, and the hunk ranges count them.
func TestThreeHundredChangedLines(t *testing.T) {
	var old, new strings.Builder
	for i := range 320 {
		if i >= 10 && i < 310 {
			fmt.Fprintf(&old, "value_%d = old(%d)\n", i, i)
			fmt.Fprintf(&new, "value_%d = new(%d)\n", i, i)
		} else {
			fmt.Fprintf(&old, "keep %d\n", i)
			fmt.Fprintf(&new, "keep %d\n", i)
		}
	}
	d := Unified("a/f", "b/f", old.String(), new.String())
	minus, plus := 0, 0
	for _, l := range strings.Split(d, "\n") {
		switch {
		case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"):
		case strings.HasPrefix(l, "-"):
			minus++
		case strings.HasPrefix(l, "+"):
			plus++
		}
	}
	if minus != 300 || plus != 300 {
		t.Fatalf("got %d removed and %d added lines, want 300 each", minus, plus)
	}
	if !strings.Contains(d, "@@ -8,306 +8,306 @@\n") {
		t.Fatalf("hunk header wrong:\n%s", d[:200])
	}
	if !strings.Contains(d, "-value_309 = old(309)\n") || !strings.Contains(d, "+value_10 = new(10)\n") {
		t.Fatal("a changed line is missing")
	}
}

func TestSeparateHunks(t *testing.T) {
	var old, new []string
	for i := range 30 {
		old = append(old, fmt.Sprint(i))
		new = append(new, fmt.Sprint(i))
	}
	new[2], new[25] = "two", "twenty-five"
	d := Hunks(strings.Join(old, "\n"), strings.Join(new, "\n"), 1, 1)
	if strings.Count(d, "@@ -") != 2 {
		t.Fatalf("want two hunks:\n%s", d)
	}
	if !strings.HasPrefix(d, "@@ -1,6 +1,6 @@\n") || !strings.Contains(d, "@@ -23,7 +23,7 @@\n") {
		t.Fatalf("hunk ranges:\n%s", d)
	}
}

func TestHugeInputFallsBack(t *testing.T) {
	var old, new strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&old, "o%d\n", i)
		fmt.Fprintf(&new, "n%d\n", i)
	}
	d := Hunks(old.String(), new.String(), 1, 1)
	if strings.Count(d, "\n-") != 5000 || strings.Count(d, "\n+") != 5000 {
		t.Fatal("fallback lost lines")
	}
}
