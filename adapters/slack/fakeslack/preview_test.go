package fakeslack

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPreviewShowsBlocks: the preview shows code blocks, links, escaped
// text and styled buttons of a message.
func TestPreviewShowsBlocks(t *testing.T) {
	blocks := []map[string]any{
		{"type": "header", "text": map[string]any{"type": "plain_text", "text": "Approval <needed>"}},
		{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": "*Tool:* `Bash`\n```rm -rf build &amp;&amp; ls &lt;x&gt;```\nfull action: <https://b.example/questions/q1|open the question page>"}},
		{"type": "actions", "elements": []any{
			map[string]any{"type": "button", "text": map[string]any{"type": "plain_text", "text": "Allow"}, "style": "primary", "action_id": "a"},
			map[string]any{"type": "button", "text": map[string]any{"type": "plain_text", "text": "Deny"}, "style": "danger", "action_id": "d"}}},
	}
	raw, _ := json.Marshal(blocks)
	page := PreviewHTML(raw)
	for _, want := range []string{
		"<h3>Approval &lt;needed&gt;</h3>",
		"<b>Tool:</b> <code>Bash</code>",
		"<pre>rm -rf build &amp;&amp; ls &lt;x&gt;</pre>",
		`<a href="https://b.example/questions/q1">open the question page</a>`,
		`<button class="primary">Allow</button>`,
		`<button class="danger">Deny</button>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("preview lacks %s:\n%s", want, page)
		}
	}
}
