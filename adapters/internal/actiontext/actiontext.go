// Package actiontext turns an approval's action (domain.Action: a tool call,
// its diff and its "always allow" suggestions) into plain words and text
// that chat surfaces show: the arguments as a person reads them, a diff cut
// to a budget with an honest count of what was left out, and each
// suggestion described as the rule it adds. It knows no platform: callers
// escape and frame the text for theirs.
package actiontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/askbridge/askbridge/domain"
)

// Command returns the shell command of a Bash action, and whether it is
// one (SplitCommand: the same rule on every surface).
func Command(a *domain.Action) (string, bool) {
	if a == nil {
		return "", false
	}
	cmd, _, ok := SplitCommand(a.Tool, a.Input)
	return cmd, ok
}

// Pretty is JSON indented by two spaces, object keys sorted, no HTML
// escaping; b unchanged when it is not valid JSON.
func Pretty(b json.RawMessage) string {
	// Decode and encode again: a stored input may carry Go's HTML escapes
	// (\u003c for <), which a person should read as the characters.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return string(b)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if enc.Encode(v) != nil {
		return string(b)
	}
	return strings.TrimRight(out.String(), "\n")
}

// diffFields are the arguments a file edit's diff already shows.
var diffFields = []string{"old_string", "new_string", "old", "new", "content", "edits"}

// Arguments is what to show of an action's input: for Bash the command;
// for a file edit (Diff set) the arguments the diff does not show, as
// pretty JSON ("" when there are none); otherwise the whole input as
// pretty JSON. bash reports the first case.
func Arguments(a *domain.Action) (text string, bash bool) {
	if cmd, ok := Command(a); ok {
		return cmd, true
	}
	if a.Diff == "" {
		return Pretty(a.Input), false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(a.Input, &m) != nil {
		return Pretty(a.Input), false
	}
	for _, f := range diffFields {
		delete(m, f)
	}
	if len(m) == 0 {
		return "", false
	}
	b, err := marshalNoEscape(m)
	if err != nil {
		return Pretty(a.Input), false
	}
	return Pretty(b), false
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// EditText is the text a person edits: the command of a Bash action, else
// the whole input as pretty JSON.
func EditText(a *domain.Action) (text string, bash bool) {
	if cmd, ok := Command(a); ok {
		return cmd, true
	}
	return Pretty(a.Input), false
}

// EditedInput turns the text a person edited (see EditText) back into the
// action's arguments: for Bash the original input with the command
// replaced, else the text itself, which must be a JSON object. The error
// reads as advice for the person.
func EditedInput(a *domain.Action, text string, bash bool) (json.RawMessage, error) {
	if bash {
		cmd := strings.TrimSpace(text)
		if cmd == "" {
			return nil, fmt.Errorf("the command is empty: write the command to run, or press Cancel")
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(a.Input, &m) != nil || m == nil {
			m = map[string]json.RawMessage{}
		}
		c, _ := marshalNoEscape(cmd)
		m["command"] = c
		b, err := marshalNoEscape(m)
		if err != nil {
			return nil, fmt.Errorf("the command could not be encoded")
		}
		return domain.CanonicalInput(b)
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, fmt.Errorf("the arguments are empty: write them as a JSON object, or press Cancel")
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(text, se.Offset)
			return nil, fmt.Errorf("not valid JSON (line %d, column %d): %s", line, col, se.Error())
		}
		return nil, fmt.Errorf("not valid JSON: %s", err.Error())
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("the arguments must be a JSON object, { … }")
	}
	in, err := domain.CanonicalInput(json.RawMessage(text))
	if err != nil {
		return nil, fmt.Errorf("the arguments %s", err.Error())
	}
	return in, nil
}

// position is the 1-based line and column of byte offset off in s.
func position(s string, off int64) (line, col int) {
	line, col = 1, 1
	for i, r := range s {
		if int64(i) >= off-1 {
			break
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}
