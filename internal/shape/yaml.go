package shape

import "gopkg.in/yaml.v3"

// yamlValue is a YAML node.
type yamlValue struct{ n *yaml.Node }

// YAML wraps a decoded YAML node (a document node is unwrapped).
func YAML(n *yaml.Node) Value {
	for n != nil && (n.Kind == yaml.DocumentNode || n.Kind == yaml.AliasNode) {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		} else if len(n.Content) > 0 {
			n = n.Content[0]
		} else {
			n = nil
		}
	}
	return yamlValue{n}
}

func (v yamlValue) Kind() Kind {
	if v.n == nil {
		return Null
	}
	switch v.n.Kind {
	case yaml.MappingNode:
		return Object
	case yaml.SequenceNode:
		return Array
	}
	switch v.n.ShortTag() {
	case "!!null":
		return Null
	case "!!bool":
		return Bool
	case "!!int", "!!float":
		return Number
	}
	return String
}

func (v yamlValue) Fields() []Field {
	var out []Field
	for i := 0; v.n != nil && i+1 < len(v.n.Content); i += 2 {
		k := v.n.Content[i]
		out = append(out, Field{Key: k.Value, Value: YAML(v.n.Content[i+1]), Line: k.Line})
	}
	return out
}

func (v yamlValue) Items() []Value {
	var out []Value
	if v.n != nil {
		for _, c := range v.n.Content {
			out = append(out, YAML(c))
		}
	}
	return out
}

func (v yamlValue) Text() string {
	if v.n == nil {
		return ""
	}
	return v.n.Value
}

func (v yamlValue) Line() int {
	if v.n == nil {
		return 0
	}
	return v.n.Line
}

func (v yamlValue) DecodeInto(ptr any) error {
	if v.n == nil {
		return nil
	}
	return v.n.Decode(ptr)
}
