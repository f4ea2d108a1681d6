package discord

import (
	"encoding/json"
	"testing"
)

// FuzzParseCustomID: custom_id comes from Discord clients; whatever it is,
// parsing never panics and what it accepts names a question and is within
// the limits the adapter renders.
func FuzzParseCustomID(f *testing.F) {
	for _, s := range []string{"ab:o:3f2a:0:1", "ab:s:q:2", "ab:u:q", "ab:m:q:0", "ab:o:q:-1:0", "x", "ab:d:q:1", "ab:o:q:99:99:9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, ok := parseCustomID(s)
		if !ok {
			return
		}
		if a.QuestionID == "" || len(s) > maxCustomID || a.Item >= 100 || a.Option >= 100 {
			t.Fatalf("accepted %q as %+v", s, a)
		}
		if again, ok := parseCustomID(customID(a.Kind, a.QuestionID, nonNegative(a.Item, a.Option)...)); !ok || again != a {
			t.Fatalf("round trip of %+v gave %+v %v", a, again, ok)
		}
	})
}

func nonNegative(ns ...int) []int {
	var out []int
	for _, n := range ns {
		if n >= 0 {
			out = append(out, n)
		}
	}
	return out
}

// FuzzInteractionText: modal submissions are parsed without panicking
// whatever their shape.
func FuzzInteractionText(f *testing.F) {
	f.Add([]byte(`{"type":5,"data":{"custom_id":"ab:m:q:0","components":[{"type":1,"components":[{"type":4,"custom_id":"text","value":"hi"}]}]}}`))
	f.Add([]byte(`{"type":5,"data":{"components":[{"type":18,"component":{"type":4,"custom_id":"text","value":"x"}}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var in inbound
		if err := jsonUnmarshal(b, &in); err != nil {
			return
		}
		_ = in.text()
		_ = in.person()
	})
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
