package docs_test

import (
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/askbridge/askbridge/docs"
	"github.com/askbridge/askbridge/domain"
	"gopkg.in/yaml.v3"
)

// root is docs/openapi.yaml as YAML nodes, which keep each value's style
// and position.
func root(t *testing.T) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(docs.OpenAPI, &doc); err != nil {
		t.Fatalf("docs/openapi.yaml: %v", err)
	}
	return &doc
}

// walk calls f for every mapping entry, with the path of keys to it.
func walk(n *yaml.Node, path []string, f func(path []string, parent, key, value *yaml.Node)) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for i, c := range n.Content {
			p := path
			if n.Kind == yaml.SequenceNode {
				p = append(slices.Clone(path), "["+strconv.Itoa(i)+"]")
			}
			walk(c, p, f)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := append(slices.Clone(path), k.Value)
			f(p, n, k, v)
			walk(v, p, f)
		}
	}
}

// TestNoFlowMappingSplits: a flow mapping ({a: b, c: d}) ends a plain
// value at its first comma, so `{description: a sentence, naming the fix}`
// is read as a cut description and a key "naming the fix" without a
// value. Nothing in an OpenAPI document takes an empty value, so every key
// without one is such a split, or a slip of the same kind.
func TestNoFlowMappingSplits(t *testing.T) {
	walk(root(t), nil, func(path []string, parent, key, value *yaml.Node) {
		if value.Kind == yaml.ScalarNode && value.Tag == "!!null" {
			how := "has no value"
			if parent.Style&yaml.FlowStyle != 0 {
				how = "has no value: a comma in an unquoted value of this flow mapping split it; quote the value"
			}
			t.Errorf("docs/openapi.yaml:%d: %q (at %s) %s", key.Line, key.Value, strings.Join(path, "."), how)
		}
	})
}

// camelCase are the property names the API really uses that are not
// snake_case: the Claude Code form's multiSelect and the inbox
// notification's fields. TestPropertyNames checks them against the Go
// types, so the list cannot hold a name the API does not send.
var camelCase = []string{"multiSelect", "sourceType", "sourceID", "relatedResourceType", "relatedResourceID", "actionURL", "actionStatus"}

var snakeCase = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// TestPropertyNames: every property a schema names is an identifier of
// the API: snake_case, or one of the camelCase names the Go types send. A
// flow-mapping split yields a property named after half a sentence.
func TestPropertyNames(t *testing.T) {
	walk(root(t), nil, func(path []string, _, key, value *yaml.Node) {
		if key.Value != "properties" || value.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i < len(value.Content); i += 2 {
			name := value.Content[i]
			if !snakeCase.MatchString(name.Value) && !slices.Contains(camelCase, name.Value) {
				t.Errorf("docs/openapi.yaml:%d: property %q (in %s) is not a field name of the API", name.Line, name.Value, strings.Join(path, "."))
			}
		}
	})

	var sent []string
	for _, typ := range []reflect.Type{reflect.TypeFor[domain.Item](), reflect.TypeFor[domain.Notification]()} {
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if strings.ContainsFunc(name, unicode.IsUpper) {
				sent = append(sent, name)
			}
		}
	}
	slices.Sort(sent)
	want := slices.Sorted(slices.Values(camelCase))
	if !slices.Equal(sent, want) {
		t.Errorf("the camelCase names the Go types send are %v; the list allows %v", sent, want)
	}
}

// schemaKeywords are the JSON Schema keywords a schema in the document may
// use. A key that is none of them is a slip: a flow-mapping split makes
// one out of the end of a sentence.
var schemaKeywords = []string{"$ref", "type", "title", "description", "properties", "required", "additionalProperties",
	"unevaluatedProperties", "items", "enum", "const", "examples", "default", "format", "pattern", "minimum", "maximum",
	"minLength", "maxLength", "minItems", "maxItems", "allOf", "oneOf", "anyOf", "not", "contentMediaType", "contentSchema"}

// TestSchemaKeywords: every key of every schema is a JSON Schema keyword.
func TestSchemaKeywords(t *testing.T) {
	var check func(n *yaml.Node, at string)
	check = func(n *yaml.Node, at string) {
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if !slices.Contains(schemaKeywords, k.Value) {
				t.Errorf("docs/openapi.yaml:%d: %q in the schema %s is not a schema keyword", k.Line, k.Value, at)
			}
			switch k.Value {
			case "properties":
				for j := 0; j+1 < len(v.Content); j += 2 {
					check(v.Content[j+1], at+".properties."+v.Content[j].Value)
				}
			case "items", "additionalProperties", "unevaluatedProperties", "not", "contentSchema":
				check(v, at+"."+k.Value)
			case "allOf", "oneOf", "anyOf":
				for j, c := range v.Content {
					check(c, at+"."+k.Value+"["+strconv.Itoa(j)+"]")
				}
			}
		}
	}
	walk(root(t), nil, func(path []string, _, key, value *yaml.Node) {
		switch {
		case key.Value == "schema":
			check(value, strings.Join(path, "."))
		case len(path) == 3 && path[0] == "components" && path[1] == "schemas":
			check(value, strings.Join(path, "."))
		}
	})
}

// TestDescriptionsAreWhole: every description is text (not a number, a
// list or a mapping a stray colon made) and ends where its author ended
// it: a flow-mapping split leaves one that stops before its comma, with
// the rest as the next key (see TestNoFlowMappingSplits); a plain value
// in a flow mapping cannot hold a comma at all, so one holding no comma
// right before an empty key is the cut half.
func TestDescriptionsAreWhole(t *testing.T) {
	walk(root(t), nil, func(path []string, parent, key, value *yaml.Node) {
		if key.Value != "description" || parent.Kind != yaml.MappingNode {
			return
		}
		if len(path) >= 2 && path[len(path)-2] == "properties" {
			return // a property named description (Option.description, Tool.description)
		}
		if value.Kind != yaml.ScalarNode || value.Tag != "!!str" || strings.TrimSpace(value.Value) == "" {
			t.Errorf("docs/openapi.yaml:%d: the description at %s is not text", value.Line, strings.Join(path, "."))
			return
		}
		for i := 0; i+1 < len(parent.Content); i += 2 {
			if parent.Content[i] == key && i+3 < len(parent.Content) {
				next := parent.Content[i+3]
				if next.Kind == yaml.ScalarNode && next.Tag == "!!null" && value.Style == 0 {
					t.Errorf("docs/openapi.yaml:%d: the description at %s ends mid-sentence (%q, then %q): quote it",
						value.Line, strings.Join(path, "."), value.Value, parent.Content[i+2].Value)
				}
			}
		}
	})
}

// TestErrorResponses: every error status an operation lists says when it
// happens and carries the one error body, Error. The exceptions are not
// the API's errors: /readyz's 503 is the readiness report, /metrics's 500
// the Prometheus client's plain text.
func TestErrorResponses(t *testing.T) {
	var doc struct {
		Paths      map[string]map[string]any `yaml:"paths"`
		Components struct {
			Responses map[string]map[string]any `yaml:"responses"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(docs.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	for path, item := range doc.Paths {
		for method, v := range item {
			op, _ := v.(map[string]any)
			responses, _ := op["responses"].(map[string]any)
			for status, v := range responses {
				at := strings.ToUpper(method) + " " + path + " " + status
				if status == "default" {
					t.Errorf("%s: list each error status instead of a default", at)
					continue
				}
				if status < "4" || (path == "/readyz" && status == "503") || (path == "/metrics" && status == "500") {
					continue
				}
				r, _ := v.(map[string]any)
				desc, _ := r["description"].(string)
				if ref, ok := r["$ref"].(string); ok {
					name, found := strings.CutPrefix(ref, "#/components/responses/")
					r = doc.Components.Responses[name]
					if !found || r == nil {
						t.Errorf("%s: %s is no response of the document", at, ref)
						continue
					}
					if desc == "" {
						desc, _ = r["description"].(string)
					}
				}
				if strings.TrimSpace(desc) == "" {
					t.Errorf("%s: no description of when it happens", at)
				}
				content, _ := r["content"].(map[string]any)
				media, _ := content["application/json"].(map[string]any)
				schema, _ := media["schema"].(map[string]any)
				if len(content) != 1 || schema["$ref"] != "#/components/schemas/Error" {
					t.Errorf("%s: the body is not the shared Error (application/json, #/components/schemas/Error)", at)
				}
			}
		}
	}
}
