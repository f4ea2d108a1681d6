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
func decodeConfig(b []byte, fc *fileConfig) error {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return errors.New(plainYAML(err))
	}
	// A document node, then a mapping: two levels more than the data.
	if line := shape.YAMLTooDeep(&doc, shape.MaxDepth+2); line > 0 {
		return fmt.Errorf("line %d: the file nests deeper than %d levels", line, shape.MaxDepth)
	}
	v := shape.YAML(&doc)
	if v.Kind() == shape.Null {
		return nil
	}
	if v.Kind() != shape.Object {
		return fmt.Errorf("line %d: the file must be a mapping of keys (defaults:, agents:, routes: ...)", v.Line())
	}
	if ps := configShape.Check(v, reflect.TypeFor[fileConfig]()); len(ps) > 0 {
		lines := make([]string, len(ps))
		for i, p := range ps {
			lines[i] = fmt.Sprintf("line %d: %s: %s", p.Line, p.Path, p.Problem)
		}
		return errors.New(strings.Join(lines, "\n  "))
	}
	if err := doc.Decode(fc); err != nil {
		return errors.New(plainYAML(err))
	}
	return nil
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
