package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// pattern is one --approve rule: a tool-name glob and, in parentheses, an
// optional glob over the tool's main argument (a Bash command, a file
// path, a URL), in the style of Claude Code's permission rules:
// "Bash(rm *)", "Bash(git push:*)", "Write(/etc/*)", "mcp__*__deploy".
type pattern struct {
	tool string
	arg  string
	has  bool // an argument glob was given
}

func parsePattern(s string) (pattern, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return pattern{}, errors.New("empty pattern")
	}
	open := strings.IndexByte(s, '(')
	if open < 0 {
		if strings.ContainsRune(s, ')') {
			return pattern{}, errors.New("unbalanced parentheses")
		}
		return pattern{tool: s}, nil
	}
	if !strings.HasSuffix(s, ")") || open == 0 {
		return pattern{}, errors.New(`want "Tool" or "Tool(argument glob)"`)
	}
	arg := s[open+1 : len(s)-1]
	// Claude Code's prefix form "npm run test:*" means "npm run test" or
	// "npm run test *" (a word boundary: "rm:*" is not "rmdir").
	if strings.HasSuffix(arg, ":*") {
		arg = strings.TrimSuffix(arg, ":*") + " *"
	}
	return pattern{tool: s[:open], arg: arg, has: true}, nil
}

func (p pattern) match(tool string, input json.RawMessage) bool {
	if !glob(p.tool, tool) {
		return false
	}
	if !p.has {
		return true
	}
	arg := mainArg(tool, input)
	if p.argMatch(arg) {
		return true
	}
	if tool == "Bash" {
		// Every command of the line counts, as in Claude Code's own rules:
		// "cd . && rm -rf build", "sudo rm …", "FOO=1 /bin/rm …".
		for _, cmd := range shellCommands(arg) {
			if p.argMatch(cmd) {
				return true
			}
		}
	}
	return false
}

// argMatch globs the argument; a single trailing " *" also matches the
// bare command ("rm *" matches "rm"), as Claude Code reads it.
func (p pattern) argMatch(s string) bool {
	if glob(p.arg, s) {
		return true
	}
	return strings.HasSuffix(p.arg, " *") && strings.Count(p.arg, "*") == 1 && s == strings.TrimSuffix(p.arg, " *")
}

// glob matches s against a pattern where * is any run of characters
// (slashes and underscores included) and ? is one character.
func glob(pat, s string) bool {
	p, r := []rune(pat), []rune(s)
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(r) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == r[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// mainArg is the argument a person judges a tool call by.
func mainArg(tool string, input json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(input, &m) != nil {
		return string(input)
	}
	for _, k := range []string{"command", "file_path", "notebook_path", "url", "path", "pattern", "query", "prompt"} {
		if v, ok := m[k].(string); ok && v != "" {
			return v
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// summarize is the short form of a tool call for the approval question.
func summarize(tool string, input json.RawMessage) string {
	a := mainArg(tool, input)
	if a == "{}" || a == "null" {
		return ""
	}
	return shorten(strings.Join(strings.Fields(a), " "), 200)
}

// toolDetails renders the full tool input as markdown for the question's
// context.
func toolDetails(tool string, input json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(input, &m) != nil || len(m) == 0 {
		return "Tool: `" + tool + "`"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Tool: `%s`", tool)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, ok := m[k].(string)
		if !ok {
			j, _ := json.Marshal(m[k])
			v = string(j)
		}
		fmt.Fprintf(&b, "\n- %s: ```%s```", k, shorten(v, 1000))
	}
	return shorten(b.String(), 6000)
}

func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
