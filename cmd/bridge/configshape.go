package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"

	"github.com/askbridge/askbridge/internal/shape"
	"gopkg.in/yaml.v3"
)

// configShape names the configuration's parts for people.
var configShape = &shape.Checker{
	Tag:           "yaml",
	Unmarshaler:   reflect.TypeFor[yaml.Unmarshaler](),
	ScalarsAsText: true,
	Member:        "key",
	Nouns: map[reflect.Type]string{
		reflect.TypeFor[agentConfig]():      "agent",
		reflect.TypeFor[operatorConfig]():   "operator",
		reflect.TypeFor[routeConfig]():      "route",
		reflect.TypeFor[targetConfig]():     "target",
		reflect.TypeFor[respondersConfig](): "responders object",
		reflect.TypeFor[duration]():         "duration",
	},
	Shapes: map[reflect.Type]string{
		reflect.TypeFor[duration](): "must be a duration such as 30s, 30m, 168h or 7d",
	},
}

// decodeConfig reads a YAML configuration into fc, listing every unknown key
// and every value of the wrong kind with its line and full path, one per
// line; an empty file is an empty configuration.
// It returns the line of every key and list item by its path (configLines),
// for the problems found later.
func decodeConfig(b []byte, fc *fileConfig) (map[string]int, error) {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, errors.New(plainYAML(err))
	}
	// A document node, then a mapping: two levels more than the data.
	if line := shape.YAMLTooDeep(&doc, shape.MaxDepth+2); line > 0 {
		return nil, fmt.Errorf("line %d: the file nests deeper than %d levels", line, shape.MaxDepth)
	}
	v := shape.YAML(&doc)
	if v.Kind() == shape.Null {
		return nil, nil
	}
	if v.Kind() != shape.Object {
		return nil, fmt.Errorf("line %d: the file must be a mapping of keys (defaults:, agents:, routes: ...)", v.Line())
	}
	if ps := configShape.Check(v, reflect.TypeFor[fileConfig]()); len(ps) > 0 {
		lines := make([]string, len(ps))
		for i, p := range ps {
			lines[i] = fmt.Sprintf("line %d: %s: %s", p.Line, p.Path, p.Problem)
		}
		return nil, errors.New(strings.Join(lines, "\n  "))
	}
	if err := doc.Decode(fc); err != nil {
		return nil, errors.New(plainYAML(err))
	}
	lines := map[string]int{}
	if len(doc.Content) == 1 {
		configLines(doc.Content[0], "", lines)
	}
	return lines, nil
}

// configLines records the line of every key ("routes[0].name") and list
// item ("routes[0]") under n, the way the problems name them.
func configLines(n *yaml.Node, path string, lines map[string]int) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := n.Content[i].Value
			if path != "" {
				p = path + "." + p
			}
			lines[p] = n.Content[i].Line
			configLines(n.Content[i+1], p, lines)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			lines[p] = c.Line
			configLines(c, p, lines)
		}
	}
}

// problemPath is the key a problem starts with ("routes[0].targets[1]").
var problemPath = regexp.MustCompile(`^[a-z_]+(?:\[\d+\])*(?:\.[a-z_]+(?:\[\d+\])*)*`)

// withLines puts "line N: " before each problem whose key is in the file:
// the line of the key, else of the nearest enclosing key or item that is
// (agents[0] for a missing agents[0].token).
func (p configProblems) withLines(lines map[string]int) configProblems {
	if len(lines) == 0 {
		return p
	}
	out := make(configProblems, len(p))
	for i, problem := range p {
		out[i] = problem
		for path := problemPath.FindString(problem); path != ""; path = parentPath(path) {
			if line, ok := lines[path]; ok {
				out[i] = fmt.Sprintf("line %d: %s", line, problem)
				break
			}
		}
	}
	return out
}

// parentPath drops the last key or index of path: "a[0].b" → "a[0]" → "a".
func parentPath(path string) string {
	if i := strings.LastIndexAny(path, ".["); i > 0 {
		return path[:i]
	}
	return ""
}

var yamlTypeName = regexp.MustCompile(`(?:\[\])?\*?(?:main|core|domain|lifecycle|time|struct \{[^}]*\})\S*|!!\w+`)

// plainYAML words a YAML syntax error without yaml.v3's Go type names.
func plainYAML(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if shape.Plain(msg) {
		return msg
	}
	msg = yamlTypeName.ReplaceAllString(msg, "value")
	if shape.Plain(msg) {
		return msg
	}
	return "the file is not valid YAML"
}
