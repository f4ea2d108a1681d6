package fakeslack

import (
	"encoding/json"
	"strings"
	"testing"
)

func section(text string) map[string]any {
	return map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": text}}
}

// The total text of a message's blocks is limited, whatever each block
// holds on its own; buttons, options and context count too.
func TestTotalTextOfBlocksIsLimited(t *testing.T) {
	button := map[string]any{"type": "actions", "elements": []any{
		map[string]any{"type": "button", "action_id": "b", "text": map[string]any{"type": "plain_text", "text": strings.Repeat("b", 75)}},
		map[string]any{"type": "checkboxes", "action_id": "c", "options": []any{map[string]any{
			"value": "0", "text": map[string]any{"type": "plain_text", "text": strings.Repeat("o", 75)},
			"description": map[string]any{"type": "plain_text", "text": strings.Repeat("d", 75)}}}}}}
	ctx := map[string]any{"type": "context", "elements": []any{map[string]any{"type": "mrkdwn", "text": strings.Repeat("c", 100)}}}
	header := map[string]any{"type": "header", "text": map[string]any{"type": "plain_text", "text": strings.Repeat("h", 100)}}
	fixed := 75 + 75 + 75 + 100 + 100
	for _, tc := range []struct {
		rest int
		want string
	}{{12000 - fixed, ""}, {12001 - fixed, "msg_blocks_too_long"}} {
		blocks := []any{header, ctx, button}
		for left := tc.rest; left > 0; left -= 3000 {
			blocks = append(blocks, section(strings.Repeat("x", min(left, 3000))))
		}
		b, _ := json.Marshal(blocks)
		got := checkMessage(map[string]string{"text": "t", "blocks": string(b)})
		code := ""
		if got != nil {
			code, _ = got["error"].(string)
		}
		if code != tc.want {
			t.Errorf("%d characters of text: got %q, want %q", fixed+tc.rest, code, tc.want)
		}
	}
}
