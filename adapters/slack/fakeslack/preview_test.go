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

// TestPreviewShowsPicturesAndInitialChoices: image blocks and context
// images with their alt text, radio buttons and checkboxes with their
// initial options checked (and no other), all text escaped.
func TestPreviewShowsPicturesAndInitialChoices(t *testing.T) {
	opt := func(v, text string) map[string]any {
		return map[string]any{"value": v, "text": map[string]any{"type": "plain_text", "text": text}}
	}
	blocks := []map[string]any{
		{"type": "image", "image_url": "https://img.example.com/a.png?x=1&y=2", "alt_text": `two "layouts"`},
		{"type": "context", "elements": []any{
			map[string]any{"type": "image", "image_url": "https://img.example.com/g.png", "alt_text": "a grid"},
			map[string]any{"type": "mrkdwn", "text": "*1.* Grid"}}},
		{"type": "actions", "elements": []any{
			map[string]any{"type": "radio_buttons", "action_id": "p0", "options": []any{opt("0", "Grid <b>"), opt("1", "List")}, "initial_option": opt("0", "Grid <b>")},
			map[string]any{"type": "checkboxes", "action_id": "p1", "options": []any{opt("0", "read"), opt("1", "write"), opt("2", "admin")},
				"initial_options": []any{opt("0", "read"), opt("2", "admin")}}}},
	}
	raw, _ := json.Marshal(blocks)
	page := PreviewHTML(raw)
	for _, want := range []string{
		`<div class="img"><img src="https://img.example.com/a.png?x=1&amp;y=2" alt="two &#34;layouts&#34;"></div>`,
		`<div class="ctx"><img src="https://img.example.com/g.png" alt="a grid"><span><b>1.</b> Grid</span></div>`,
		`<input type="radio" checked onclick="return false"><span>Grid &lt;b&gt;</span>`,
		`<input type="radio" onclick="return false"><span>List</span>`,
		`<input type="checkbox" checked onclick="return false"><span>read</span>`,
		`<input type="checkbox" onclick="return false"><span>write</span>`,
		`<input type="checkbox" checked onclick="return false"><span>admin</span>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("preview lacks %s:\n%s", want, page)
		}
	}
}

// TestPreviewViewShowsTheErrorOnTheField: a modal's input holds what was
// typed, the error of response_action "errors" under it, and its hint.
func TestPreviewViewShowsTheErrorOnTheField(t *testing.T) {
	view := map[string]any{"type": "modal", "title": map[string]any{"type": "plain_text", "text": "Ticket"},
		"submit": map[string]any{"type": "plain_text", "text": "Save"}, "close": map[string]any{"type": "plain_text", "text": "Cancel"},
		"blocks": []any{map[string]any{"type": "input", "block_id": "ab_text", "label": map[string]any{"type": "plain_text", "text": "Your answer"},
			"hint":    map[string]any{"type": "plain_text", "text": "Expected: a ticket id like OPS-123"},
			"element": map[string]any{"type": "plain_text_input", "action_id": "text", "multiline": true}}}}
	raw, _ := json.Marshal(view)
	page := PreviewViewHTML(raw, map[string]string{"ab_text": "ops <12>"}, map[string]string{"ab_text": `"ops <12>" does not match`})
	for _, want := range []string{`<header>Ticket</header>`, `<div class="input bad"><b>Your answer</b><textarea rows="3">ops &lt;12&gt;</textarea>`,
		`<div class="err">&#34;ops &lt;12&gt;&#34; does not match</div><div class="hint">Expected: a ticket id like OPS-123</div>`,
		`<button>Cancel</button><button class="primary">Save</button>`} {
		if !strings.Contains(page, want) {
			t.Errorf("modal preview lacks %s:\n%s", want, page)
		}
	}
}
