package telegram

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/channeltest"
	"github.com/askbridge/askbridge/lifecycle"
)

// TestHugeBatchStaysWithinTelegramLimits: a batch of 300 calls is still one
// message Telegram takes (4,096 characters, 100 buttons, 64-byte button
// data), with as many calls as fit, how many more, and the batch page.
func TestHugeBatchStaysWithinTelegramLimits(t *testing.T) {
	e := newEnv(t, func(_ *lifecycle.RouterConfig, c *Config) { c.PublicURL = "https://bridge.example.com" })
	b := channeltest.HugeBatch(300, e.ad.now())
	m := e.ad.renderBatch(b)
	text := stripTags(m.Text)
	if units(text) > maxText {
		t.Fatalf("%d characters: more than Telegram takes", units(text))
	}
	n := 0
	for _, row := range m.Keyboard.InlineKeyboard {
		for _, bt := range row {
			n++
			if len(bt.CallbackData) > maxCallbackData {
				t.Errorf("button %q carries %d bytes", bt.Text, len(bt.CallbackData))
			}
		}
	}
	if n > maxButtons {
		t.Errorf("%d buttons", n)
	}
	for _, want := range []string{"Bash: rm -rf build1 xxxxxxxx", "more calls", "https://bridge.example.com/batches/" + b.ID, "Allow all 300"} {
		if !strings.Contains(text+buttonsText(m), want) {
			t.Errorf("the message does not say %q", want)
		}
	}
}

func buttonsText(m message) string {
	var b strings.Builder
	for _, row := range m.Keyboard.InlineKeyboard {
		for _, bt := range row {
			b.WriteString(bt.Text + "\n")
		}
	}
	return b.String()
}
