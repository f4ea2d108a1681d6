package actiontext

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRuleWordsOfClaudeCodeSuggestions: each kind of Claude Code
// permission suggestion reads as what stops being asked.
func TestRuleWordsOfClaudeCodeSuggestions(t *testing.T) {
	for in, want := range map[string]string{
		`{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"git status:*"}],"behavior":"allow","destination":"session"}`: "Allow, and don't ask again this session for Bash(git status:*)",
		`{"type":"addRules","rules":[{"toolName":"Read"}],"destination":"projectSettings"}`:                                         "Allow, and don't ask again in this project (shared settings) for Read",
		`{"type":"addDirectories","directories":["/home/dev/proj/build"],"destination":"session"}`:                                  "Allow, and don't ask again this session for files in /home/dev/proj/build",
		`{"type":"setMode","mode":"acceptEdits","destination":"session"}`:                                                           "Allow, and don't ask again this session for file edits (acceptEdits mode)",
		`{"type":"somethingNew"}`: `Allow, and don't ask again this session for the rule {"type":"somethingNew"}`,
		// What Claude Code 2.1.330 sends for `npm run build-docs`.
		`{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm run *"}],"behavior":"allow","destination":"localSettings"}`: "Allow, and don't ask again in this project (your local settings) for Bash(npm run *)",
	} {
		if got := AlwaysAllowLabel(json.RawMessage(in)); got != want {
			t.Errorf("%s\n got %q\nwant %q", in, got, want)
		}
	}
}

// TestHeadLinesCutsWholeLinesAndCounts: a long text is cut between lines,
// never inside one, and the counts say how much is shown.
func TestHeadLinesCutsWholeLinesAndCounts(t *testing.T) {
	text := strings.Repeat("0123456789\n", 10)
	head, shown, total := HeadLines(text, 35)
	if head != "0123456789\n0123456789\n0123456789" || shown != 3 || total != 10 {
		t.Errorf("got %q %d/%d", head, shown, total)
	}
	if head, shown, total = HeadLines("short", 100); head != "short" || shown != 1 || total != 1 {
		t.Errorf("got %q %d/%d", head, shown, total)
	}
}

// TestChangesSaysWhatAnEditChanged: an edit reads as per-argument changes.
func TestChangesSaysWhatAnEditChanged(t *testing.T) {
	got := Changes("deploy", json.RawMessage(`{"replicas":3,"service":"api","dry":true}`), json.RawMessage(`{"replicas":5,"service":"api","region":"eu"}`))
	want := []string{"dry: removed", "region: added \"eu\"", "replicas: 3 → 5"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
	got = Changes("Bash", json.RawMessage(`{"command":"rm -rf build"}`), json.RawMessage(`{"command":"rm -rf build/tmp"}`))
	if len(got) != 1 || got[0] != "command: `rm -rf build` → `rm -rf build/tmp`" {
		t.Errorf("got %q", got)
	}
}

// TestCutDiffShowsBothSidesOfAReplacement: a replaced block too long for
// the budget shows the start of its removed and of its added lines, each
// cut marked, within the budget.
func TestCutDiffShowsBothSidesOfAReplacement(t *testing.T) {
	var b strings.Builder
	b.WriteString("--- a/f\n+++ b/f\n@@ -1,100 +1,100 @@\n")
	for i := range 100 {
		b.WriteString("-old line " + strings.Repeat("x", i%7) + "\n")
	}
	for i := range 100 {
		b.WriteString("+new line " + strings.Repeat("y", i%7) + "\n")
	}
	text, shown, total := CutDiff(b.String(), 500)
	if n := len([]rune(text)); n > 500 {
		t.Fatalf("%d runes, budget 500", n)
	}
	if total != 203 || shown < 20 || shown >= total {
		t.Errorf("shown %d of %d", shown, total)
	}
	for _, want := range []string{"@@ -1,100 +1,100 @@\n-old line \n", "\n+new line \n", "more removed lines\n+new", "more added lines"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
	if full, s, n := CutDiff("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n", 500); s != n || strings.Contains(full, "⋯") {
		t.Errorf("a diff that fits was cut: %q", full)
	}
}
