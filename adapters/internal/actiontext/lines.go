package actiontext

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// HeadLines returns the first whole lines of text (split on "\n") whose
// runes, newlines included, stay within budget, the number of lines shown
// and the number there are. Lines are never cut in the middle: a caller
// says "N lines, M shown" and links to the rest.
func HeadLines(text string, budget int) (head string, shown, total int) {
	text = strings.TrimRight(text, "\n")
	lines := strings.Split(text, "\n")
	used := 0
	for i, l := range lines {
		n := utf8.RuneCountInString(l)
		if i > 0 {
			n++
		}
		if used+n > budget {
			return strings.Join(lines[:i], "\n"), i, len(lines)
		}
		used += n
	}
	return text, len(lines), len(lines)
}

// SplitCommand returns the shell command of a Bash action (its string
// "command") and the other arguments; ok is false for any other action.
func SplitCommand(tool string, input json.RawMessage) (cmd string, rest map[string]json.RawMessage, ok bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(input, &m) != nil {
		return "", nil, false
	}
	if tool != "Bash" || json.Unmarshal(m["command"], &cmd) != nil {
		return "", nil, false
	}
	delete(m, "command")
	return cmd, m, true
}

// diffKeys are the arguments a file edit's unified diff shows in full.
var diffKeys = []string{"old_string", "new_string", "old", "new", "edits"}

// WithoutDiffed returns the arguments of a file edit that its diff does
// not show (file_path, replace_all, …) as a JSON object. Write's content
// is in its diff; another tool's is not.
func WithoutDiffed(tool string, input json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(input, &m) != nil {
		return input
	}
	for _, k := range diffKeys {
		delete(m, k)
	}
	if tool == "Write" {
		delete(m, "content")
	}
	b, err := json.Marshal(m)
	if err != nil {
		return input
	}
	return b
}

// ReplaceCommand returns input with its "command" set to cmd, the other
// arguments kept.
func ReplaceCommand(input json.RawMessage, cmd string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(input, &m); err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	c, _ := json.Marshal(cmd)
	m["command"] = c
	return json.Marshal(m)
}
