package faketelegram

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

// The fake checks every request against the Bot API's machine-readable
// description: the community-maintained api.json of
// PaulSonOfLars/telegram-bot-api-spec (MIT; testdata/LICENSE.telegram-bot-api-spec),
// cut to the methods and types askbridge sends (testdata/botapi.json).

//go:embed testdata/botapi.json
var specJSON []byte

type specField struct {
	Name     string   `json:"name"`
	Types    []string `json:"types"`
	Required bool     `json:"required"`
}

type specEntry struct {
	Name     string      `json:"name"`
	Fields   []specField `json:"fields"`
	Subtypes []string    `json:"subtypes"`
}

type spec struct {
	Version string               `json:"version"`
	Methods map[string]specEntry `json:"methods"`
	Types   map[string]specEntry `json:"types"`
}

func loadSpec() *spec {
	var s spec
	if err := json.Unmarshal(specJSON, &s); err != nil {
		panic("faketelegram: testdata/botapi.json: " + err.Error())
	}
	return &s
}

// checkMethod returns every way params break method's description: unknown
// fields, missing required ones, values of the wrong type.
func (s *spec) checkMethod(method string, params map[string]any) []string {
	m, ok := s.Methods[method]
	if !ok {
		return []string{fmt.Sprintf("%s: no such method in %s", method, s.Version)}
	}
	return s.checkFields(method, m.Fields, params)
}

func (s *spec) checkFields(where string, fields []specField, obj map[string]any) []string {
	var out []string
	known := map[string]specField{}
	for _, f := range fields {
		known[f.Name] = f
		if _, ok := obj[f.Name]; f.Required && !ok {
			out = append(out, fmt.Sprintf("%s: required field %s is missing", where, f.Name))
		}
	}
	for k, v := range obj {
		f, ok := known[k]
		if !ok {
			out = append(out, fmt.Sprintf("%s: unknown field %s", where, k))
			continue
		}
		if v == nil {
			out = append(out, fmt.Sprintf("%s.%s: null (omit the field instead)", where, k))
			continue
		}
		var errs []string
		matched := false
		for _, t := range f.Types {
			e := s.checkValue(where+"."+k, t, v)
			if len(e) == 0 {
				matched = true
				break
			}
			errs = append(errs, e...)
		}
		if !matched {
			out = append(out, fmt.Sprintf("%s.%s: not any of %s (%s)", where, k, strings.Join(f.Types, ", "), strings.Join(errs, "; ")))
		}
	}
	return out
}

func (s *spec) checkValue(where, typ string, v any) []string {
	if inner, ok := strings.CutPrefix(typ, "Array of "); ok {
		arr, ok := v.([]any)
		if !ok {
			return []string{where + ": want an array"}
		}
		var out []string
		for i, e := range arr {
			out = append(out, s.checkValue(fmt.Sprintf("%s[%d]", where, i), inner, e)...)
		}
		return out
	}
	switch typ {
	case "Integer":
		if f, ok := v.(float64); !ok || f != float64(int64(f)) {
			return []string{where + ": want an integer"}
		}
		return nil
	case "Float":
		if _, ok := v.(float64); !ok {
			return []string{where + ": want a number"}
		}
		return nil
	case "String":
		if _, ok := v.(string); !ok {
			return []string{where + ": want a string"}
		}
		return nil
	case "Boolean":
		if _, ok := v.(bool); !ok {
			return []string{where + ": want a boolean"}
		}
		return nil
	}
	t, ok := s.Types[typ]
	if !ok {
		return []string{where + ": type " + typ + " is not one askbridge sends"}
	}
	if len(t.Subtypes) > 0 {
		var out []string
		for _, st := range t.Subtypes {
			if _, ok := s.Types[st]; !ok {
				continue
			}
			e := s.checkValue(where, st, v)
			if len(e) == 0 {
				return nil
			}
			out = append(out, e...)
		}
		return append(out, where+": matches no subtype of "+typ)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return []string{where + ": want an object " + typ}
	}
	return s.checkFields(where+"("+typ+")", t.Fields, obj)
}
