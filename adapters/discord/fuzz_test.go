package discord

import (
	"encoding/json"
	"reflect"
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

// FuzzInboundDecodersAgree: the interactions handler decodes with
// segmentio's decoder for speed (decodeInbound); wherever encoding/json
// accepts an interaction, both must read the same thing from it.
func FuzzInboundDecodersAgree(f *testing.F) {
	f.Add([]byte(`{"id":"1","application_id":"2","type":3,"token":"t","guild_id":"g","channel_id":"c","data":{"custom_id":"ab:o:q:0:1","component_type":2},"message":{"id":"m","components":[{"type":1}]},"member":{"user":{"id":"u","username":"alice","global_name":"Alice"},"nick":"al","roles":["r1","r2"]}}`))
	f.Add([]byte(`{"type":3,"data":{"custom_id":"ab:s:q:0","values":["a","b"]},"user":{"id":"u","username":"bob"}}`))
	f.Add([]byte(`{"type":5,"data":{"custom_id":"ab:m:q:0","components":[{"type":18,"component":{"type":4,"custom_id":"text","value":"x\u00e9\n"}}]}}`))
	f.Add([]byte(`{"type":1}`))
	f.Add([]byte(`{"TYPE":3,"Data":{"Custom_ID":"x"},"member":null,"user":{"id":12}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var std, fast inbound
		if err := json.Unmarshal(b, &std); err != nil {
			return
		}
		if err := decodeInbound(b, &fast); err != nil {
			t.Fatalf("encoding/json reads %q but the handler's decoder refuses it: %v", b, err)
		}
		if !reflect.DeepEqual(std, fast) {
			t.Fatalf("decoders disagree on %q:\nencoding/json %+v\nhandler       %+v", b, std, fast)
		}
	})
}
