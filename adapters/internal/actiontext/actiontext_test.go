package actiontext

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/askbridge/askbridge/domain"
)

func runes(s string) int { return utf8.RuneCountInString(s) }

// TestDescribeClaudeCodeSuggestions: the suggestions of the captured
// PermissionRequest read as the rules they add.
func TestDescribeClaudeCodeSuggestions(t *testing.T) {
	b, err := os.ReadFile("../../../agent/hook/testdata/claude-code/permissionrequest-bash.json")
	require.NoError(t, err)
	var f struct {
		Suggestions []json.RawMessage `json:"permission_suggestions"`
	}
	require.NoError(t, json.Unmarshal(b, &f))
	require.Len(t, f.Suggestions, 2)
	assert.Equal(t, "Allow, and don't ask again this session for files in /home/dev/proj/build", Describe(f.Suggestions[0]).Sentence())
	assert.Equal(t, "Allow, and don't ask again this session for file edits (acceptEdits mode)", Describe(f.Suggestions[1]).Sentence())
	assert.Equal(t, "Allow, and don't ask again in this project (your local settings) for Bash(npm test:*)",
		Describe(json.RawMessage(`{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm test:*"}],"behavior":"allow","destination":"localSettings"}`)).Sentence())
	assert.Contains(t, Describe(json.RawMessage(`{"type":"somethingNew","x":1}`)).What, `{"type":"somethingNew","x":1}`, "an unknown rule is shown whole")
}

// TestFitDiffSaysWhatIsLeftOut: a 300-line diff in a small budget keeps
// whole lines and says how many are not shown.
func TestFitDiffSaysWhatIsLeftOut(t *testing.T) {
	var b strings.Builder
	b.WriteString("--- a/x.go\n+++ b/x.go\n@@ -1,150 +1,150 @@\n")
	for i := range 150 {
		fmt.Fprintf(&b, "-old line %d\n+new line %d\n", i, i)
	}
	c := Fit(b.String(), 2000, runes)
	assert.False(t, c.Whole)
	assert.Equal(t, 303, c.Lines)
	assert.Less(t, c.ShownLines, 303)
	assert.LessOrEqual(t, runes(c.Text), 2000)
	assert.Equal(t, 150, c.Added)
	assert.Equal(t, 150, c.Removed)
	assert.Equal(t, fmt.Sprintf("diff: 303 lines, %d shown (%d more lines)", c.ShownLines, 303-c.ShownLines), More("diff", c))
	assert.True(t, strings.HasPrefix(b.String(), c.Text), "lines are kept from the start, whole")

	whole := Fit("ls -la\n", 100, runes)
	assert.True(t, whole.Whole)
	assert.Equal(t, "", More("command", whole))

	long := Fit(strings.Repeat("x", 5000), 1000, runes)
	assert.Equal(t, "command: 5,000 characters, 1,000 shown", More("command", long))
}

func TestPagesKeepEveryCharacter(t *testing.T) {
	text := strings.Repeat("line of text\n", 500) + strings.Repeat("y", 3000)
	pages := Pages(text, 1000, runes)
	for _, p := range pages {
		assert.LessOrEqual(t, runes(p), 1000)
	}
	assert.Equal(t, strings.ReplaceAll(text, "\n", ""), strings.ReplaceAll(strings.Join(pages, ""), "\n", ""))
}

func TestEditedInput(t *testing.T) {
	bash := &domain.Action{Tool: "Bash", Input: json.RawMessage(`{"command":"rm -rf build","description":"Remove"}`)}
	text, isBash := EditText(bash)
	assert.True(t, isBash)
	assert.Equal(t, "rm -rf build", text)
	in, err := EditedInput(bash, "rm -rf build/tmp\n", true)
	require.NoError(t, err)
	assert.JSONEq(t, `{"command":"rm -rf build/tmp","description":"Remove"}`, string(in))
	assert.Equal(t, []string{"command: `rm -rf build` → `rm -rf build/tmp`"}, Changes(bash.Tool, bash.Input, in))

	api := &domain.Action{Tool: "deploy.scale", Input: json.RawMessage(`{"replicas":3,"service":"api"}`)}
	text, isBash = EditText(api)
	assert.False(t, isBash)
	assert.Equal(t, "{\n  \"replicas\": 3,\n  \"service\": \"api\"\n}", text)
	_, err = EditedInput(api, "{\n  \"replicas\": 4,\n  \"service\": api\n}", false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not valid JSON (line 3")
	_, err = EditedInput(api, "[1]", false)
	assert.EqualError(t, err, "the arguments must be a JSON object, { … }")
	in, err = EditedInput(api, `{"replicas": 4, "service": "api"}`, false)
	require.NoError(t, err)
	assert.Equal(t, []string{"replicas: 3 → 4"}, Changes(api.Tool, api.Input, in))
}

func TestArgumentsOfAnEditLeaveTheDiffToTheDiff(t *testing.T) {
	a := &domain.Action{Tool: "Edit", Input: json.RawMessage(`{"file_path":"/x.go","new_string":"b","old_string":"a","replace_all":false}`), Diff: "--- a/x.go\n"}
	text, _ := Arguments(a)
	assert.Equal(t, "{\n  \"file_path\": \"/x.go\",\n  \"replace_all\": false\n}", text)
}

// TestCommandIsTheSameRuleOnEverySurface: a Bash call's command is shown
// and edited as a command; another tool that happens to take a "command"
// argument is shown as its arguments, on Slack as on Discord and the web.
func TestCommandIsTheSameRuleOnEverySurface(t *testing.T) {
	cmd, ok := Command(&domain.Action{Tool: "Bash", Input: json.RawMessage(`{"command":"ls"}`)})
	assert.True(t, ok)
	assert.Equal(t, "ls", cmd)
	_, ok = Command(&domain.Action{Tool: "deploy.run", Input: json.RawMessage(`{"command":"ls"}`)})
	_, _, split := SplitCommand("deploy.run", json.RawMessage(`{"command":"ls"}`))
	assert.False(t, ok)
	assert.Equal(t, split, ok)
}
