package faketelegram

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// The checks the fake makes are Telegram's: the description's fields and
// types, the HTML subset, the keyboard limits.
func TestChecksAreTelegrams(t *testing.T) {
	s := loadSpec()
	ok := map[string]any{"chat_id": "-100", "text": "hi", "parse_mode": "HTML",
		"reply_markup": map[string]any{"inline_keyboard": []any{[]any{map[string]any{"text": "A", "callback_data": "x"}}}}}
	if p := s.checkMethod("sendMessage", ok); len(p) != 0 {
		t.Errorf("a good sendMessage: %v", p)
	}
	for name, c := range map[string]struct {
		method string
		params map[string]any
		want   string
	}{
		"unknown method":    {"sendMesage", map[string]any{}, "no such method"},
		"unknown field":     {"sendMessage", map[string]any{"chat_id": 1, "text": "x", "colour": "red"}, "unknown field colour"},
		"missing required":  {"sendMessage", map[string]any{"chat_id": 1}, "required field text"},
		"wrong type":        {"sendMessage", map[string]any{"chat_id": true, "text": "x"}, "chat_id"},
		"button field":      {"sendMessage", map[string]any{"chat_id": 1, "text": "x", "reply_markup": map[string]any{"inline_keyboard": []any{[]any{map[string]any{"label": "A"}}}}}, "reply_markup"},
		"float message id":  {"editMessageText", map[string]any{"chat_id": 1, "message_id": 1.5, "text": "x"}, "message_id"},
		"null field":        {"answerCallbackQuery", map[string]any{"callback_query_id": "1", "text": nil}, "null"},
		"webhook no url":    {"setWebhook", map[string]any{"secret_token": "x"}, "required field url"},
		"reaction not list": {"setMessageReaction", map[string]any{"chat_id": 1, "message_id": 1, "reaction": map[string]any{"type": "emoji"}}, "reaction"},
	} {
		p := strings.Join(s.checkMethod(c.method, c.params), "; ")
		if !strings.Contains(p, c.want) {
			t.Errorf("%s: %q, want it to name %q", name, p, c.want)
		}
	}
	for in, want := range map[string]string{
		"<b>x</b> &lt;ok&gt; &amp; &quot; &#128512;":    `x <ok> & " 😀`,
		`<a href="https://x">link</a>`:                  "link",
		`<pre><code class="language-go">x</code></pre>`: "x",
	} {
		if got, err := parseHTML(in); err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"a < b", "a & b", "<b>x", "<b>x</i>", "<script>x</script>", "&nbsp;", "x > y", `<a href=x>y</a>`} {
		if _, err := parseHTML(bad); err == nil {
			t.Errorf("%q was taken", bad)
		}
	}
	row := func(bs ...map[string]any) map[string]any {
		var r []any
		for _, b := range bs {
			r = append(r, b)
		}
		return map[string]any{"inline_keyboard": []any{r}}
	}
	for name, kb := range map[string]map[string]any{
		"65 bytes":         row(map[string]any{"text": "A", "callback_data": strings.Repeat("x", 65)}),
		"neither":          row(map[string]any{"text": "A"}),
		"both":             row(map[string]any{"text": "A", "callback_data": "x", "url": "https://x"}),
		"http url":         row(map[string]any{"text": "A", "url": "http://127.0.0.1/q"}),
		"empty text":       row(map[string]any{"text": " ", "callback_data": "x"}),
		"nine in a row":    row(map[string]any{"text": "1", "callback_data": "1"}, map[string]any{"text": "2", "callback_data": "2"}, map[string]any{"text": "3", "callback_data": "3"}, map[string]any{"text": "4", "callback_data": "4"}, map[string]any{"text": "5", "callback_data": "5"}, map[string]any{"text": "6", "callback_data": "6"}, map[string]any{"text": "7", "callback_data": "7"}, map[string]any{"text": "8", "callback_data": "8"}, map[string]any{"text": "9", "callback_data": "9"}),
		"long placeholder": {"force_reply": true, "input_field_placeholder": strings.Repeat("x", 65)},
	} {
		if _, _, e := keyboard(kb); e == nil {
			t.Errorf("%s: taken", name)
		}
	}
	if _, _, e := text(map[string]any{"text": strings.Repeat("é", 4097)}); e == nil || !strings.Contains(e.desc, "too long") {
		t.Errorf("4,097 characters: %v", e)
	}
	if _, _, e := text(map[string]any{"text": "<b>" + strings.Repeat("é", 4096) + "</b>", "parse_mode": "HTML"}); e != nil {
		t.Errorf("4,096 characters with markup: %v", e)
	}
}

// Updates go to the webhook as Telegram sends them: at most the
// max_connections setWebhook gave at once, the rest after (40 when it was
// left out); a max_connections outside 1–100 is refused.
func TestWebhookDeliveriesAtMostMaxConnections(t *testing.T) {
	var mu sync.Mutex
	inFlight, most, got := 0, 0, 0
	bridge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		inFlight--
		got++
		mu.Unlock()
	}))
	defer bridge.Close()
	f := New(t)
	for _, c := range []struct {
		set  any
		want int
	}{{nil, DefaultMaxConnections}, {7.0, 7}} {
		p := map[string]any{"url": "https://bridge.example/telegram/webhook", "secret_token": "s"}
		if c.set != nil {
			p["max_connections"] = c.set
		}
		if _, err := f.handle("setWebhook", p); err != nil {
			t.Fatal(err.desc)
		}
		most, got = 0, 0
		var wg sync.WaitGroup
		for range 3 * c.want {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if code, err := f.Deliver(context.Background(), bridge.URL, []byte(`{"update_id":1}`)); err != nil || code != 200 {
					t.Errorf("delivery: %d %v", code, err)
				}
			}()
		}
		wg.Wait()
		if got != 3*c.want || most > c.want || most < c.want/2 {
			t.Errorf("max_connections %v: %d updates delivered, at most %d at once; want %d, at most %d", c.set, got, most, 3*c.want, c.want)
		}
	}
	for _, bad := range []any{0.0, 101.0} {
		if _, err := f.handle("setWebhook", map[string]any{"url": "https://bridge.example/telegram/webhook", "max_connections": bad}); err == nil {
			t.Errorf("max_connections %v was accepted", bad)
		}
	}
}
