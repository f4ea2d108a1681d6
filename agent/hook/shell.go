package hook

import (
	"path"
	"strings"
)

// shellCommands splits a Bash command line into the simple commands it
// runs, each as its words (quotes removed, joined by one space) with what
// does not change which program runs taken off the front: variable
// assignments (FOO=1), wrappers (sudo, env, command, exec, nohup, time,
// nice, timeout, xargs) and a path prefix (/bin/rm is rm). Commands inside
// subshells ( ), command substitutions $( ) and backquotes, and the
// string of `bash -c` count as commands of their own. It is a reader for
// permission rules, not a shell: on input it cannot follow it still
// returns every command it found.
func shellCommands(line string) []string {
	var out []string
	for _, words := range splitShell(line, 0) {
		out = append(out, normalizeCommand(words, 0)...)
	}
	return out
}

// maxShellDepth bounds nesting ($( $( … ) ), bash -c "bash -c …").
const maxShellDepth = 16

type shellLexer struct {
	s     []rune
	i     int
	depth int
	cmds  [][]string
	cur   []string
	word  strings.Builder
	inW   bool
	skip  bool // the next word is a redirection target
}

func splitShell(s string, depth int) [][]string {
	lx := &shellLexer{s: []rune(s), depth: depth}
	lx.run(0)
	lx.endCommand()
	return lx.cmds
}

func (lx *shellLexer) endWord() {
	if !lx.inW {
		return
	}
	if lx.skip {
		lx.skip = false
	} else {
		lx.cur = append(lx.cur, lx.word.String())
	}
	lx.word.Reset()
	lx.inW = false
}

func (lx *shellLexer) endCommand() {
	lx.endWord()
	lx.skip = false
	if len(lx.cur) > 0 {
		lx.cmds = append(lx.cmds, lx.cur)
	}
	lx.cur = nil
}

func (lx *shellLexer) add(r rune) { lx.word.WriteRune(r); lx.inW = true }

// run reads until the end, or until the unbalanced closer (')' or '`')
// when one is given, which it consumes.
func (lx *shellLexer) run(closer rune) {
	for lx.i < len(lx.s) {
		r := lx.s[lx.i]
		lx.i++
		switch {
		case closer != 0 && r == closer:
			return
		case r == '\\':
			if lx.i < len(lx.s) {
				if lx.s[lx.i] != '\n' {
					lx.add(lx.s[lx.i])
				}
				lx.i++
			}
		case r == '\'':
			lx.inW = true
			for lx.i < len(lx.s) && lx.s[lx.i] != '\'' {
				lx.add(lx.s[lx.i])
				lx.i++
			}
			lx.i++
		case r == '"':
			lx.doubleQuoted()
		case r == '$' && lx.peek() == '(':
			lx.i++
			lx.substitution(')')
		case r == '$' && lx.peek() == '\'':
			lx.i++
			lx.inW = true
			for lx.i < len(lx.s) && lx.s[lx.i] != '\'' {
				if lx.s[lx.i] == '\\' && lx.i+1 < len(lx.s) {
					lx.i++
				}
				lx.add(lx.s[lx.i])
				lx.i++
			}
			lx.i++
		case r == '`':
			lx.substitution('`')
		case r == '#' && !lx.inW:
			for lx.i < len(lx.s) && lx.s[lx.i] != '\n' {
				lx.i++
			}
		case r == ' ' || r == '\t':
			lx.endWord()
		case r == '\n' || r == ';' || r == '&' || r == '|' || r == '(' || r == ')':
			lx.endCommand()
		case r == '<' || r == '>':
			lx.endWord()
			for lx.i < len(lx.s) && (lx.s[lx.i] == '>' || lx.s[lx.i] == '&' || lx.s[lx.i] == '<') {
				lx.i++
			}
			lx.skip = true
		default:
			lx.add(r)
		}
	}
}

func (lx *shellLexer) peek() rune {
	if lx.i < len(lx.s) {
		return lx.s[lx.i]
	}
	return 0
}

func (lx *shellLexer) doubleQuoted() {
	lx.inW = true
	for lx.i < len(lx.s) {
		r := lx.s[lx.i]
		lx.i++
		switch {
		case r == '"':
			return
		case r == '\\' && lx.i < len(lx.s) && strings.ContainsRune("\"\\$`\n", lx.s[lx.i]):
			if lx.s[lx.i] != '\n' {
				lx.add(lx.s[lx.i])
			}
			lx.i++
		case r == '$' && lx.peek() == '(':
			lx.i++
			lx.substitution(')')
		case r == '`':
			lx.substitution('`')
		default:
			lx.add(r)
		}
	}
}

// substitution reads a command substitution up to its closer: its
// commands are commands of their own; in the word it stands for a
// placeholder.
func (lx *shellLexer) substitution(closer rune) {
	inner := &shellLexer{s: lx.s, i: lx.i, depth: lx.depth + 1}
	if inner.depth > maxShellDepth {
		lx.i = len(lx.s)
		return
	}
	inner.run(closer)
	inner.endCommand()
	lx.i = inner.i
	lx.cmds = append(lx.cmds, inner.cmds...)
	lx.add('…')
}

// Shell words that start a compound command or negate one.
var shellKeywords = map[string]bool{"!": true, "{": true, "}": true, "then": true, "do": true,
	"else": true, "elif": true, "if": true, "while": true, "until": true, "fi": true, "done": true}

// Wrappers that run the rest of the line as a command, with the options
// of each that take a separate argument.
var shellWrappers = map[string]string{
	"sudo":    "ugpChDrtUT",
	"doas":    "uC",
	"env":     "uCS",
	"command": "",
	"exec":    "a",
	"nohup":   "",
	"time":    "",
	"nice":    "n",
	"ionice":  "cnp",
	"timeout": "sk",
	"xargs":   "IEdnLPsaJ",
	"stdbuf":  "ioe",
}

func normalizeCommand(words []string, depth int) []string {
	for len(words) > 0 {
		w := words[0]
		switch {
		case shellKeywords[w] || isAssignment(w):
			words = words[1:]
			continue
		}
		name := w
		if strings.Contains(name, "/") {
			name = path.Base(name)
		}
		if argOpts, ok := shellWrappers[name]; ok {
			words = skipOptions(name, words[1:], argOpts)
			continue
		}
		if (name == "bash" || name == "sh" || name == "zsh" || name == "dash") && depth < maxShellDepth {
			if script, ok := shellScript(words[1:]); ok {
				var out []string
				for _, cmd := range splitShell(script, depth+1) {
					out = append(out, normalizeCommand(cmd, depth+1)...)
				}
				return append(out, name+" "+strings.Join(words[1:], " "))
			}
		}
		words[0] = name
		if cmd := strings.Join(words, " "); cmd != "" {
			return []string{cmd}
		}
		return nil
	}
	return nil
}

func isAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return false
	}
	for i, r := range w[:eq] {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// skipOptions drops a wrapper's options (and their arguments) and, for
// timeout, its duration.
func skipOptions(name string, words []string, argOpts string) []string {
	for len(words) > 0 {
		w := words[0]
		if w == "--" {
			words = words[1:]
			break
		}
		if name == "env" && (w == "-" || isAssignment(w)) {
			words = words[1:]
			continue
		}
		if len(w) < 2 || w[0] != '-' {
			break
		}
		words = words[1:]
		if !strings.HasPrefix(w, "--") && len(w) == 2 && strings.ContainsRune(argOpts, rune(w[1])) && len(words) > 0 {
			words = words[1:]
		}
	}
	if name == "timeout" && len(words) > 0 {
		words = words[1:]
	}
	return words
}

// shellScript returns the script of `sh -c script`.
func shellScript(args []string) (string, bool) {
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			return "", false
		}
		if strings.Contains(a, "c") && !strings.HasPrefix(a, "--") && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}
