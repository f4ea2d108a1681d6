package shape

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// MaxDepth bounds how deeply a document may nest arrays and objects. The
// deepest request askbridge takes (an ask with items, options and an
// action's input) nests about ten levels; a hostile body of a megabyte of
// "[[[[…" nests a million, and walking it would cost memory and time
// without limit.
const MaxDepth = 64

// ErrTooDeep reports a document nested deeper than MaxDepth.
var ErrTooDeep = fmt.Errorf("nests deeper than %d levels", MaxDepth)

// CheckDepth reports ErrTooDeep when data (JSON, or YAML in flow style)
// opens more than max arrays or objects inside each other, counting
// brackets outside quoted strings. It reads data once and allocates
// nothing, so it can run before any decoder.
func CheckDepth(data []byte, max int) error {
	depth := 0
	var quote byte
	escaped := false
	for _, c := range data {
		if quote != 0 {
			switch {
			case escaped:
				escaped = false
			case c == '\\' && quote == '"':
				escaped = true
			case c == quote:
				quote = 0
			}
			continue
		}
		switch c {
		case '"':
			quote = '"'
		case '[', '{':
			depth++
			if depth > max {
				return ErrTooDeep
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}

// YAMLTooDeep returns the line of the first node of n nested deeper than
// max (aliases not followed), or 0.
func YAMLTooDeep(n *yaml.Node, max int) int {
	type at struct {
		n     *yaml.Node
		depth int
	}
	stack := []at{{n, 0}}
	for len(stack) > 0 {
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if top.depth > max {
			return top.n.Line
		}
		for _, c := range top.n.Content {
			stack = append(stack, at{c, top.depth + 1})
		}
	}
	return 0
}
