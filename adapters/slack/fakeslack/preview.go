package fakeslack

import (
	"encoding/json"
	"html"
	"net/http"
	"regexp"
	"strings"
)

// A plain HTML preview of a posted message, for eyes and screenshots:
// headers, sections (mrkdwn: bold, italic, inline code, code blocks,
// links), context lines, and buttons with their styles. It is no model of
// Slack's client; it shows what a message holds, laid out the way Slack
// lays it out.

// Preview returns the HTML page of message channel/ts.
func (s *Server) Preview(channel, ts string) (string, bool) {
	m, ok := s.Message(channel, ts)
	if !ok {
		return "", false
	}
	return PreviewHTML(m.Blocks), true
}

// servePreview is GET /preview?channel=C&ts=T.
func (s *Server) servePreview(w http.ResponseWriter, r *http.Request) {
	page, ok := s.Preview(r.URL.Query().Get("channel"), r.URL.Query().Get("ts"))
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(page))
}

const previewCSS = `body{font:15px/1.46 -apple-system,"Segoe UI",Lato,Helvetica,Arial,sans-serif;color:#1d1c1d;background:#fff;margin:0;padding:16px 20px;max-width:760px}
.msg{display:flex;gap:10px}.avatar{width:36px;height:36px;border-radius:6px;background:#4a154b;color:#fff;font-weight:700;display:flex;align-items:center;justify-content:center;flex:none}
.name{font-weight:900}.app{font-size:10px;background:#e8e8e8;color:#616061;border-radius:2px;padding:1px 3px;margin-left:4px;font-weight:700}
h3{font-size:17px;margin:6px 0 4px}.ctx{font-size:12px;color:#616061;margin:4px 0}.sec{margin:6px 0;display:flex;gap:10px;align-items:flex-start}.sec>div{flex:1;white-space:pre-wrap;word-break:break-word}
pre{background:#f8f8f8;border:1px solid #ddd;border-radius:4px;padding:8px;margin:4px 0;font:12px/1.5 Monaco,Menlo,Consolas,monospace;white-space:pre-wrap;word-break:break-all}
code{font:12px Monaco,Menlo,Consolas,monospace;color:#c01343;background:#f8f8f8;border:1px solid #ddd;border-radius:3px;padding:0 3px}
.acts{display:flex;flex-wrap:wrap;gap:8px;margin:8px 0}button{font:700 13px/1 inherit;border:1px solid #bbb;background:#fff;color:#1d1c1d;border-radius:4px;padding:7px 12px;text-align:left}
button.primary{background:#007a5a;border-color:#007a5a;color:#fff}button.danger{background:#e01e5a;border-color:#e01e5a;color:#fff}
a{color:#1264a3;text-decoration:none}`

var emoji = strings.NewReplacer(":white_check_mark:", "✅", ":no_entry:", "⛔", ":warning:", "⚠️", ":pencil2:", "✏️",
	":hourglass:", "⌛", ":no_entry_sign:", "🚫", ":information_source:", "ℹ️")

var (
	slackLink = regexp.MustCompile(`<((?:https?|mailto):[^|>]+)\|([^>]*)>`)
	slackURL  = regexp.MustCompile(`<((?:https?):[^|>]+)>`)
	slackUser = regexp.MustCompile(`<@([A-Z0-9]+)>`)
	slackDate = regexp.MustCompile(`<!date\^[^|>]*\|([^>]*)>`)
	codeSpan  = regexp.MustCompile("`([^`\n]+)`")
	boldSpan  = regexp.MustCompile(`(^|[\s(])\*([^*\n]+)\*`)
	italSpan  = regexp.MustCompile(`(^|[\s(])_([^_\n]+)_`)
)

// mrkdwnHTML renders Slack mrkdwn as HTML. Slack text already escapes &, <
// and > as entities, which HTML reads the same; the only raw < are Slack's
// own links, mentions and dates.
func mrkdwnHTML(s string) string {
	var b strings.Builder
	parts := strings.Split(s, "```")
	for i, p := range parts {
		if i%2 == 1 && i < len(parts)-1 {
			b.WriteString("<pre>" + strings.Trim(p, "\n") + "</pre>")
			continue
		}
		if i%2 == 1 {
			b.WriteString("```")
		}
		p = slackLink.ReplaceAllString(p, `<a href="$1">$2</a>`)
		p = slackURL.ReplaceAllString(p, `<a href="$1">$1</a>`)
		p = slackUser.ReplaceAllString(p, `<a>@$1</a>`)
		p = slackDate.ReplaceAllString(p, `$1`)
		p = codeSpan.ReplaceAllString(p, `<code>$1</code>`)
		p = boldSpan.ReplaceAllString(p, `$1<b>$2</b>`)
		p = italSpan.ReplaceAllString(p, `$1<i>$2</i>`)
		b.WriteString(emoji.Replace(p))
	}
	return b.String()
}

func textOf(v any) string {
	o, _ := v.(map[string]any)
	t, _ := o["text"].(string)
	if o["type"] == "plain_text" {
		return html.EscapeString(t)
	}
	return mrkdwnHTML(t)
}

func buttonHTML(v any) string {
	o, _ := v.(map[string]any)
	if o["type"] != "button" {
		return ""
	}
	style, _ := o["style"].(string)
	return `<button class="` + html.EscapeString(style) + `">` + textOf(o["text"]) + `</button>`
}

// PreviewHTML renders a message's blocks as a small HTML page.
func PreviewHTML(blocks json.RawMessage) string {
	var bs []map[string]any
	_ = json.Unmarshal(blocks, &bs)
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>Slack message preview</title><style>` + previewCSS + `</style></head><body>`)
	b.WriteString(`<div class="msg"><div class="avatar">ab</div><div style="flex:1;min-width:0"><div><span class="name">askbridge</span><span class="app">APP</span></div>`)
	for _, bl := range bs {
		switch bl["type"] {
		case "header":
			b.WriteString("<h3>" + textOf(bl["text"]) + "</h3>")
		case "section":
			b.WriteString(`<div class="sec"><div>` + textOf(bl["text"]) + "</div>")
			if acc, ok := bl["accessory"]; ok {
				b.WriteString(buttonHTML(acc))
			}
			b.WriteString("</div>")
		case "context":
			els, _ := bl["elements"].([]any)
			for _, e := range els {
				b.WriteString(`<div class="ctx">` + strings.ReplaceAll(textOf(e), "\n", "<br>") + "</div>")
			}
		case "actions":
			b.WriteString(`<div class="acts">`)
			els, _ := bl["elements"].([]any)
			for _, e := range els {
				b.WriteString(buttonHTML(e))
			}
			b.WriteString("</div>")
		case "divider":
			b.WriteString("<hr>")
		}
	}
	b.WriteString("</div></div></body></html>")
	return b.String()
}
