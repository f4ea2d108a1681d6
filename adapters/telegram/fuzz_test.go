package telegram

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/domain"
)

// FuzzDecodeUpdate: any body the webhook accepts decodes without panicking,
// and handling it never panics either, whatever question key, chat or
// message it names.
func FuzzDecodeUpdate(f *testing.F) {
	f.Add([]byte(`{"update_id":1,"callback_query":{"id":"q","from":{"id":1001,"is_bot":false,"first_name":"a"},"message":{"message_id":101,"chat":{"id":-1001000000001,"type":"supergroup"},"date":1},"chat_instance":"1","data":"AAAAAAAAAAAAAAAAAAAAAA:o0.1"}}`))
	f.Add([]byte(`{"update_id":2,"message":{"message_id":5,"from":{"id":1,"is_bot":false,"first_name":"x"},"chat":{"id":1,"type":"private"},"date":1,"text":"hi","reply_to_message":{"message_id":4,"chat":{"id":1,"type":"private"},"date":1,"from":{"id":7000001,"is_bot":true,"first_name":"b"}}}}`))
	f.Add([]byte(`{"update_id":3,"callback_query":{"id":"q","from":{"id":1},"data":"~x:s"}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"update_id":-1}`))
	e := newEnv(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		u, err := decodeUpdate(body)
		if err != nil {
			return
		}
		if u.UpdateID <= 0 {
			t.Fatalf("decoded an update without an id: %s", body)
		}
		e.ad.handleUpdate(context.Background(), u)
	})
	e.fake.ForgetQueries()
}

// FuzzCallbackData: parsing never panics, and what it accepts is written
// back the same and fits Telegram's 64 bytes.
func FuzzCallbackData(f *testing.F) {
	f.Add(callbackData(domain.NewQuestionID("ops"), opOption, 3, 2))
	f.Add(callbackData("x", opSubmit))
	f.Add(callbackData(domain.NewQuestionID("ops"), opDefaults))
	f.Add("~:o1.1")
	f.Add("AAAAAAAAAAAAAAAAAAAAAA:r0.99")
	f.Fuzz(func(t *testing.T, s string) {
		a, ok := parseCallbackData(s)
		if !ok {
			return
		}
		var nums []int
		if a.Item >= 0 {
			nums = append(nums, a.Item)
		}
		if a.Option >= 0 {
			nums = append(nums, a.Option)
		}
		back := callbackData(a.QuestionID, a.Op, nums...)
		if len(back) > maxCallbackData {
			t.Fatalf("%q → %q: %d bytes", s, back, len(back))
		}
		if b, ok := parseCallbackData(back); !ok || b != a {
			t.Fatalf("%q → %+v → %q → %+v", s, a, back, b)
		}
	})
}

// The webhook refuses what is no update with 400, after the secret.
func TestWebhookRefusesGarbage(t *testing.T) {
	e := newEnv(t)
	for _, body := range []string{"", "{", `{"update_id":0}`, "[1]", strings.Repeat("x", maxUpdate+1)} {
		want := http.StatusBadRequest
		if len(body) > maxUpdate {
			want = http.StatusRequestEntityTooLarge
		}
		if st := e.deliver([]byte(body)); st != want {
			t.Errorf("body %.20q: %d, want %d", body, st, want)
		}
	}
}
