// Package shape checks a decoded document (a JSON request body, a YAML
// configuration file) against the Go type it will be read into, and names
// every problem in plain words with the field's full path:
// `questions[1].options[0].icon: unknown field`, `responded_by: must be an
// object with platform and id`. encoding/json and yaml.v3 stop at the first
// problem and describe it with Go type names (`domain.Person`,
// `[]main.agentConfig`), which mean nothing to the person who sent it.
package shape

import (
	"encoding"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Kind is the kind of a document value.
type Kind int

// Value kinds.
const (
	Null Kind = iota
	Object
	Array
	String
	Number
	Bool
)

// Value is one value of a decoded document.
type Value interface {
	Kind() Kind
	// Fields are an object's members in document order.
	Fields() []Field
	// Items are an array's elements.
	Items() []Value
	// Text is a string's or number's text.
	Text() string
	// Line is the value's line in the document, 0 when unknown.
	Line() int
	// DecodeInto reads the value into ptr with the document format's own
	// decoder (for types that decode themselves).
	DecodeInto(ptr any) error
}

// Field is one member of an object.
type Field struct {
	Key   string
	Value Value
	Line  int
}

// Problem is one thing wrong with one field.
type Problem struct {
	Path    string
	Line    int
	Problem string
}

// Checker describes the types a document is read into.
type Checker struct {
	// Tag is the struct tag naming fields: "json" or "yaml".
	Tag string
	// Unmarshaler is the interface of types that decode themselves
	// (json.Unmarshaler, yaml.Unmarshaler); their own error, if plain,
	// is the problem.
	Unmarshaler reflect.Type
	// Nouns names types for people ("option" for domain.Option); the plural
	// adds an s. Unnamed struct types are "object".
	Nouns map[reflect.Type]string
	// Shapes overrides the whole problem for a value of the wrong kind
	// ("must be an object with platform and id").
	Shapes map[reflect.Type]string
	// FoldCase matches keys case-insensitively, as encoding/json does.
	FoldCase bool
	// ScalarsAsText lets a text field take any scalar (YAML reads
	// `channel: 1122` as the text "1122").
	ScalarsAsText bool
	// Member is what the document calls an object's member: "field"
	// (the default) or "key".
	Member string
}

// Check walks v against t and returns every problem found.
func (c *Checker) Check(v Value, t reflect.Type) []Problem {
	var ps []Problem
	c.walk(&ps, "", v, t)
	return ps
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

func (c *Checker) walk(ps *[]Problem, path string, v Value, t reflect.Type) {
	add := func(problem string) { *ps = append(*ps, Problem{Path: path, Line: v.Line(), Problem: problem}) }
	if v.Kind() == Null {
		return // null leaves the field at its zero value
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if c.Unmarshaler != nil && reflect.PointerTo(t).Implements(c.Unmarshaler) {
		if err := v.DecodeInto(reflect.New(t).Interface()); err != nil {
			add(c.ownProblem(t, err))
		}
		return
	}
	if _, ok := c.Shapes[t]; ok && !c.kindFits(v.Kind(), t) {
		add(c.Shapes[t])
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if v.Kind() != Object {
			add("must be " + c.article(t))
			return
		}
		fields := c.structFields(t)
		for _, f := range v.Fields() {
			sub := join(path, f.Key)
			ft, ok := fields[f.Key]
			if !ok && c.FoldCase {
				for name, typ := range fields {
					if strings.EqualFold(name, f.Key) {
						ft, ok = typ, true
						break
					}
				}
			}
			if !ok {
				*ps = append(*ps, Problem{Path: sub, Line: f.Line, Problem: c.unknown(f.Key, fields)})
				continue
			}
			c.walk(ps, sub, f.Value, ft)
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() != Array {
			add("must be a list of " + c.plural(t.Elem()))
			return
		}
		for i, it := range v.Items() {
			c.walk(ps, fmt.Sprintf("%s[%d]", path, i), it, t.Elem())
		}
	case reflect.Map:
		if v.Kind() != Object {
			add("must be an object whose values are " + c.plural(t.Elem()))
			return
		}
		for _, f := range v.Fields() {
			c.walk(ps, fmt.Sprintf("%s[%q]", path, f.Key), f.Value, t.Elem())
		}
	case reflect.String:
		scalar := v.Kind() == Number || v.Kind() == Bool
		if v.Kind() != String && !(c.ScalarsAsText && scalar) && !(reflect.PointerTo(t).Implements(textUnmarshaler) && v.Kind() == Number) {
			add("must be text (a string in quotes)")
		}
	case reflect.Bool:
		if v.Kind() != Bool {
			add("must be true or false")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if v.Kind() != Number {
			add("must be a whole number")
		} else if _, err := strconv.ParseInt(v.Text(), 10, 64); err != nil {
			add("must be a whole number")
		}
	case reflect.Float32, reflect.Float64:
		if v.Kind() != Number {
			add("must be a number")
		}
	}
}

func (c *Checker) kindFits(k Kind, t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return k == Object
	case reflect.Slice, reflect.Array:
		return k == Array
	case reflect.String:
		return k == String
	case reflect.Bool:
		return k == Bool
	}
	return k == Number
}

// ownProblem turns a self-decoding type's error into a problem, unless it
// speaks of Go internals.
func (c *Checker) ownProblem(t reflect.Type, err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 && strings.HasPrefix(msg, "line ") {
		msg = msg[i+2:] // yaml decoders prefix the line, which the problem carries anyway
	}
	if w, ok := strings.CutPrefix(msg, "want "); ok {
		msg = "must be " + w
	}
	if s, ok := c.Shapes[t]; ok && !Plain(msg) {
		return s
	}
	if !Plain(msg) {
		return "must be " + c.article(t)
	}
	return msg
}

// Plain reports whether msg is free of Go type names and internals.
func Plain(msg string) bool {
	for _, bad := range []string{"core.", "domain.", "lifecycle.", "main.", "[]", "map[", "struct {", "json:", "yaml:", "!!", "reflect", ".go:"} {
		if strings.Contains(msg, bad) {
			return false
		}
	}
	return true
}

func (c *Checker) structFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get(c.Tag)
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range c.structFields(ft) {
					if _, ok := out[k]; !ok {
						out[k] = v
					}
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
			if c.Tag == "yaml" {
				name = strings.ToLower(name)
			}
		}
		out[name] = f.Type
	}
	return out
}

// unknown describes an unknown key, suggesting a close known one.
func (c *Checker) unknown(key string, fields map[string]reflect.Type) string {
	member := c.Member
	if member == "" {
		member = "field"
	}
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	// The closest name, the first in order among equally close ones, so the
	// same mistake always gets the same suggestion.
	best, bestD := "", 3
	for _, name := range names {
		if d := distance(strings.ToLower(key), strings.ToLower(name)); d < bestD {
			best, bestD = name, d
		}
	}
	if best != "" {
		return fmt.Sprintf("unknown %s; did you mean %q?", member, best)
	}
	if len(names) <= 8 {
		return fmt.Sprintf("unknown %s; known %ss here: %s", member, member, strings.Join(names, ", "))
	}
	return fmt.Sprintf("unknown %s; remove it", member)
}

// distance is the Levenshtein distance of two short strings.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// noun names a value of type t for people.
func (c *Checker) noun(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n, ok := c.Nouns[t]; ok {
		return n
	}
	switch t.Kind() {
	case reflect.String:
		return "text"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "whole number"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "list of " + c.plural(t.Elem())
	}
	return "object"
}

func (c *Checker) plural(t reflect.Type) string {
	n := c.noun(t)
	switch {
	case n == "text", n == "true or false", strings.HasPrefix(n, "list of "):
		if n == "text" {
			return "strings"
		}
		return n
	case strings.HasSuffix(n, "s"):
		return n
	}
	return n + "s"
}

func (c *Checker) article(t reflect.Type) string {
	n := c.noun(t)
	if n == "object" {
		return "an object"
	}
	if strings.ContainsAny(n[:1], "aeiou") {
		return "an " + n + " (an object)"
	}
	return "a " + n + " (an object)"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
