package domain

import (
	"encoding/json"
	"testing"
)

// Telegram's target names (chat, thread: a number or text) land in
// channel and thread_ts; a record never shows them.
func TestTelegramTargetNames(t *testing.T) {
	for body, want := range map[string]Target{
		`{"platform":"telegram","chat":"-1001234567890","thread":42}`:    {Platform: "telegram", Channel: "-1001234567890", ThreadTS: "42"},
		`{"platform":"telegram","chat":"@ops","thread":"7"}`:             {Platform: "telegram", Channel: "@ops", ThreadTS: "7"},
		`{"platform":"telegram","channel":"-100","chat":"ignored"}`:      {Platform: "telegram", Channel: "-100"},
		`{"platform":"slack","channel":"C1","thread_ts":"1700000.0001"}`: {Platform: "slack", Channel: "C1", ThreadTS: "1700000.0001"},
	} {
		var tg Target
		if err := json.Unmarshal([]byte(body), &tg); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		got := tg.Resolved()
		if got.Platform != want.Platform || got.Channel != want.Channel || got.ThreadTS != want.ThreadTS || got.Chat != "" || got.Thread != "" {
			t.Errorf("%s: %+v, want %+v", body, got, want)
		}
		b, _ := json.Marshal(got)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		if _, ok := m["chat"]; ok {
			t.Errorf("a resolved target shows chat: %s", b)
		}
	}
	var tg Target
	if err := json.Unmarshal([]byte(`{"thread":4.5}`), &tg); err == nil {
		t.Error("a thread of 4.5 was taken")
	}
}
