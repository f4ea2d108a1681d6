package api

import (
	"encoding"
	"encoding/json"
	"io"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/domain"
)

// cancelBody is the body cancel decodes (an unnamed struct there).
type cancelBody struct {
	Reason string `json:"reason"`
	Note   string `json:"note"`
}

// decodedTypes are the types decode reads request bodies into.
var decodedTypes = []reflect.Type{
	reflect.TypeFor[domain.AskRequest](),
	reflect.TypeFor[domain.RespondRequest](),
	reflect.TypeFor[cancelBody](),
}

// selfDecoding are the request types with their own UnmarshalJSON. The
// shape check hands them the value re-encoded, the decoder the bytes as
// sent; these read both alike (they decode what they get with
// encoding/json). A new one needs that looked at before it joins the list.
var selfDecoding = map[reflect.Type]bool{
	reflect.TypeFor[domain.StringList](): true,
	reflect.TypeFor[domain.PersonRef]():  true,
	reflect.TypeFor[domain.Duration]():   true,
	reflect.TypeFor[json.RawMessage]():   true,
	// Responders decodes with encoding/json field by field (users,
	// exclude_requester, one list of ids per kind of group) and takes the
	// same bytes alike either way.
	reflect.TypeFor[domain.Responders](): true,
	// ThreadID (a Telegram target's thread) reads a JSON string with
	// encoding/json or a whole number as its digits: the same bytes alike
	// either way.
	reflect.TypeFor[domain.ThreadID](): true,
}

// decodeWellFormed skips the shape check only because, for the request
// types, the check passes whenever encoding/json (unknown fields
// disallowed) takes the body. That holds as long as they use none of what
// encoding/json accepts and the check does not: unsigned integers (the
// check parses whole numbers as int64), []byte (base64 text to
// encoding/json, a list to the check), json.Number, the ",string" option,
// a field named "-", non-string types read from text (TextUnmarshaler), or
// a self-decoding type not reviewed above.
func TestDecodedTypesKeepToWhatTheShapeCheckAccepts(t *testing.T) {
	jsonUnmarshaler := reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler := reflect.TypeFor[encoding.TextUnmarshaler]()
	seen := map[reflect.Type]bool{}
	var walk func(path string, ty reflect.Type)
	walk = func(path string, ty reflect.Type) {
		for ty.Kind() == reflect.Pointer {
			ty = ty.Elem()
		}
		if seen[ty] {
			return
		}
		seen[ty] = true
		if reflect.PointerTo(ty).Implements(jsonUnmarshaler) {
			if !selfDecoding[ty] {
				t.Errorf("%s: %s decodes itself and is not among the reviewed types", path, ty)
			}
			return
		}
		if ty.Kind() != reflect.String && reflect.PointerTo(ty).Implements(textUnmarshaler) {
			t.Errorf("%s: %s is read from text by encoding/json but must be a %s to the shape check", path, ty, ty.Kind())
		}
		if ty == reflect.TypeFor[json.Number]() {
			t.Errorf("%s: json.Number takes numbers as text", path)
		}
		switch ty.Kind() {
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			t.Errorf("%s: unsigned %s", path, ty)
		case reflect.Complex64, reflect.Complex128, reflect.Chan, reflect.Func, reflect.UnsafePointer:
			t.Errorf("%s: %s cannot be read from JSON", path, ty)
		case reflect.Slice, reflect.Array:
			if ty.Elem().Kind() == reflect.Uint8 {
				t.Errorf("%s: %s is base64 text to encoding/json", path, ty)
			}
			walk(path+"[]", ty.Elem())
		case reflect.Map:
			if ty.Key().Kind() != reflect.String {
				t.Errorf("%s: map keys %s", path, ty.Key())
			}
			walk(path+"{}", ty.Elem())
		case reflect.Struct:
			for i := range ty.NumField() {
				f := ty.Field(i)
				tag := f.Tag.Get("json")
				name, opts, _ := strings.Cut(tag, ",")
				if name == "-" && opts == "" {
					continue
				}
				if name == "-" || strings.Contains(","+opts+",", ",string,") {
					t.Errorf("%s.%s: json tag %q", path, f.Name, tag)
				}
				if f.IsExported() || f.Anonymous {
					walk(path+"."+f.Name, f.Type)
				}
			}
		}
	}
	for _, typ := range decodedTypes {
		walk(typ.Name(), typ)
	}
}

// decodeBodies are bodies for the decoders to agree on: well formed and
// not, and the corners where encoding/json and the shape check could part.
var decodeBodies = []string{
	`{"run_id":"r1","questions":[{"question":"Which auth method?","header":"Auth","options":[{"label":"OAuth 2.0","value":"oauth"},{"label":"API key"}]}]}`,
	`{"run_id":"w1-2","question":"Deploy build 2?","options":[{"label":"Yes","description":"ship it"},{"label":"No","description":"hold"}],"targets":[{"platform":"slack","channel":"C001"}]}`,
	`{"question":"Features?","multiSelect":true,"options":[{"label":"Login"},{"label":"Dashboard"}]}`,
	`{"question":"Anything else?","timeout":"10s"}`, `{"question":"Q","timeout":30}`, `{"question":"Q","timeout":"30"}`, `{"question":"Q","timeout":null}`,
	`{"question":"Go?","resume":{"url":"http://127.0.0.1:1/resume"}}`,
	`{"question":"Q","route":"nope","timeout":-5}`, `{"question":"Q","timeout":true}`, `{"question":"Q","timeout":{}}`,
	`{"questions":[{"question":"A"},{"question":"B"}],"idempotency_key":"k"}`,
	`{"question":"Q","approvals_required":2}`, `{"question":"Q","approvals_required":2.5}`, `{"question":"Q","approvals_required":1e2}`,
	`{"question":"Q","approvals_required":99999999999999999999}`, `{"question":"Q","approvals_required":"2"}`, `{"question":"Q","approvals_required":-0}`,
	`{"question":"Q","responders":{"users":["slack:U1"],"exclude_requester":true}}`, `{"question":"Q","responders":"U1"}`,
	`{"question":"Q","on_timeout":{"answer":"No"}}`, `{"question":"Q","on_timeout":"No"}`,
	`{"question":"Q","action":{"tool":"Bash","input":{"command":"ls"},"suggestions":[{"type":"addRules"}]}}`,
	`{"question":"Q","action":{"tool":"Bash","input":"ls"}}`, `{"question":"Q","action":[]}`,
	`{"QUESTION":"case folded","Run_ID":"r"}`, `{"question":"dup","question":"dup2"}`, `{"question":"a","QUESTION":1}`,
	`{"question":"Q","icon":"x"}`, `{"questions":[{"question":"A","options":[{"label":"x","icon":1}]}]}`,
	`{"question":1}`, `{"question":null,"options":null,"targets":[null]}`, `{"questions":null}`, `{"questions":{}}`,
	`{"question":"\u00e9\ud83d\ude80 <b>&amp;</b>","context":"line\nbreak \u2028"}`, "{\"question\":\"\xff\xfe\"}",
	`{"response":"oauth"}`, `{"answers":{"Features?":["Login","Dashboard"]}}`, `{"response":1}`, `{"answers":{"A":"x","B":["y","z"]},"responded_by":{"platform":"slack","id":"U1"}}`,
	`{"responded_by":"slack:U1"}`, `{"responded_by":"  "}`, `{"responded_by":{"platform":"slack"}}`, `{"responded_by":7}`,
	`{"edited_input":{"command":"ls -la"},"rule":0,"digest":"sha256:00","reason":"no"}`, `{"rule":"0"}`, `{"rule":-1}`, `{"answers":{"A":[1]}}`,
	`{"reason":"user","note":"n"}`, `{"reason":3}`,
	`{}`, ` {} `, "\t{}\r\n", `{}{}`, `{} {}`, `{}x`, `{} null`, `{"question":"Q"} []`, "\v{}", "{}\v", "\ufeff{}",
	`null`, `[]`, `"x"`, `1`, `{`, `{"question":}`, `{"question":"Q",}`, `[{}]`, `{"questions":[` + strings.Repeat("[", 20000) + `]}`,
}

// decode takes the well-formed way only where the checked way would have
// read the body the same: the same value, no error; everywhere else it
// gives the checked way's error.
func TestDecodeAgreesWithTheCheckedPath(t *testing.T) {
	for _, typ := range decodedTypes {
		for _, body := range decodeBodies {
			decodeAgrees(t, typ, []byte(body))
		}
	}
}

func FuzzDecodeAgreesWithTheCheckedPath(f *testing.F) {
	for _, body := range decodeBodies {
		for i := range decodedTypes {
			f.Add(uint8(i), []byte(body))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		decodeAgrees(t, decodedTypes[int(which)%len(decodedTypes)], body)
	})
}

func decodeAgrees(t *testing.T, typ reflect.Type, body []byte) {
	t.Helper()
	if strings.TrimSpace(string(body)) == "" {
		return // refused before either way is taken
	}
	got := reflect.New(typ)
	err := decode(httptest.NewRequest("POST", "/", strings.NewReader(string(body))), got.Interface())
	want := reflect.New(typ)
	wantErr := decodeChecked(body, want.Interface())
	if !reflect.DeepEqual(err, wantErr) {
		t.Fatalf("%s %q: error %v, the checked path's %v", typ.Name(), body, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got.Interface(), want.Interface()) {
		t.Fatalf("%s %q: read %+v, the checked path %+v", typ.Name(), body, got.Elem(), want.Elem())
	}
}

// BenchmarkDecodeAsk reads (c)'s ask body: the way decode takes it, and
// the checked way alone (every body before the well-formed way existed).
func BenchmarkDecodeAsk(b *testing.B) {
	body := []byte(decodeBodies[1])
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var req domain.AskRequest
			if err := decode(httptest.NewRequest("POST", "/", strings.NewReader(string(body))), &req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("checked", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var req domain.AskRequest
			r := httptest.NewRequest("POST", "/", strings.NewReader(string(body)))
			if _, err := io.ReadAll(r.Body); err != nil {
				b.Fatal(err)
			}
			if err := decodeChecked(body, &req); err != nil {
				b.Fatal(err)
			}
		}
	})
}
