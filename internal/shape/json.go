package shape

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// jsonValue is a JSON value with its members in document order.
type jsonValue struct {
	kind   Kind
	text   string
	bool   bool
	fields []Field
	items  []Value
}

func (v *jsonValue) Kind() Kind      { return v.kind }
func (v *jsonValue) Fields() []Field { return v.fields }
func (v *jsonValue) Items() []Value  { return v.items }
func (v *jsonValue) Text() string    { return v.text }
func (v *jsonValue) Line() int       { return 0 }

func (v *jsonValue) DecodeInto(ptr any) error {
	var b bytes.Buffer
	v.write(&b)
	return json.Unmarshal(b.Bytes(), ptr)
}

func (v *jsonValue) write(b *bytes.Buffer) {
	switch v.kind {
	case Null:
		b.WriteString("null")
	case Bool:
		fmt.Fprint(b, v.bool)
	case Number:
		b.WriteString(v.text)
	case String:
		s, _ := json.Marshal(v.text)
		b.Write(s)
	case Array:
		b.WriteByte('[')
		for i, it := range v.items {
			if i > 0 {
				b.WriteByte(',')
			}
			it.(*jsonValue).write(b)
		}
		b.WriteByte(']')
	case Object:
		b.WriteByte('{')
		for i, f := range v.fields {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(f.Key)
			b.Write(k)
			b.WriteByte(':')
			f.Value.(*jsonValue).write(b)
		}
		b.WriteByte('}')
	}
}

// ErrTrailing reports data after the document's one JSON value.
var ErrTrailing = errors.New("data after the JSON value")

// ParseJSON reads exactly one JSON value from data. A syntax error is a
// *json.SyntaxError; anything after the value is ErrTrailing; no value at
// all is io.EOF.
func ParseJSON(data []byte) (Value, error) {
	if err := CheckDepth(data, MaxDepth); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parse(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, ErrTrailing
	}
	return v, nil
}

func parse(dec *json.Decoder) (*jsonValue, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &jsonValue{kind: Null}, nil
	case bool:
		return &jsonValue{kind: Bool, bool: t}, nil
	case json.Number:
		return &jsonValue{kind: Number, text: t.String()}, nil
	case string:
		return &jsonValue{kind: String, text: t}, nil
	case json.Delim:
		if t == '[' {
			v := &jsonValue{kind: Array, items: []Value{}}
			for dec.More() {
				it, err := parse(dec)
				if err != nil {
					return nil, err
				}
				v.items = append(v.items, it)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return v, nil
		}
		v := &jsonValue{kind: Object}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			val, err := parse(dec)
			if err != nil {
				return nil, err
			}
			v.fields = append(v.fields, Field{Key: kt.(string), Value: val})
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return v, nil
	}
	return nil, fmt.Errorf("unexpected JSON token")
}
