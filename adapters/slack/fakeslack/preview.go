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
// links), context lines with their small images, image blocks, buttons
// with their styles, radio buttons and checkboxes with their initial
// options (what Slack shows selected before anyone clicks), and a modal
// with its inputs, hints and the errors a response_action set. It is no
// model of Slack's client; it shows what a message holds, laid out the
// way Slack lays it out.

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
a{color:#1264a3;text-decoration:none}
.ctx img{width:20px;height:20px;border-radius:3px;vertical-align:middle;object-fit:cover;margin-right:4px}.ctx span{margin-right:8px;vertical-align:middle}
.img{margin:8px 0}.img img{max-width:360px;max-height:240px;border-radius:8px;border:1px solid #ddd;display:block}.sec>img{width:88px;height:88px;border-radius:6px;object-fit:cover}
.acts:has(.choices){align-items:flex-start}.choices{display:flex;flex-direction:column;gap:6px;margin:8px 0}.choices label{display:flex;gap:8px;align-items:flex-start}.choices input{margin:3px 0 0;accent-color:#1264a3}.choices .desc{display:block;font-size:13px;color:#616061}
.modal{max-width:520px;border:1px solid #ddd;border-radius:8px;box-shadow:0 4px 12px rgba(0,0,0,.15);margin:8px auto}.modal>header{font-weight:900;font-size:20px;padding:16px 24px;border-bottom:1px solid #ddd}
.modal>.body{padding:16px 24px}.modal>footer{display:flex;justify-content:flex-end;gap:8px;padding:16px 24px;border-top:1px solid #ddd}
.input{margin:12px 0}.input>b{display:block;margin-bottom:6px}.input textarea,.input input{width:100%;box-sizing:border-box;font:inherit;border:1px solid #868686;border-radius:4px;padding:8px}
.input.bad textarea,.input.bad input{border-color:#e01e5a;box-shadow:0 0 0 1px #e01e5a}.input .err{color:#e01e5a;font-size:13px;margin-top:4px}.input .hint{color:#616061;font-size:13px;margin-top:4px}`

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

// imgHTML is an image block or element: its URL and alt text escaped.
func imgHTML(o map[string]any) string {
	src, _ := o["image_url"].(string)
	alt, _ := o["alt_text"].(string)
	return `<img src="` + html.EscapeString(src) + `" alt="` + html.EscapeString(alt) + `">`
}

// choicesHTML shows radio buttons or checkboxes with their initial
// options checked.
func choicesHTML(o map[string]any) string {
	typ := "radio"
	if o["type"] == "checkboxes" {
		typ = "checkbox"
	}
	on := map[string]bool{}
	if io, ok := o["initial_option"].(map[string]any); ok {
		v, _ := io["value"].(string)
		on[v] = true
	}
	ios, _ := o["initial_options"].([]any)
	for _, x := range ios {
		io, _ := x.(map[string]any)
		v, _ := io["value"].(string)
		on[v] = true
	}
	var b strings.Builder
	b.WriteString(`<div class="choices">`)
	opts, _ := o["options"].([]any)
	for _, x := range opts {
		opt, _ := x.(map[string]any)
		v, _ := opt["value"].(string)
		checked := ""
		if on[v] {
			checked = " checked"
		}
		b.WriteString(`<label><input type="` + typ + `"` + checked + ` onclick="return false"><span>` + textOf(opt["text"]))
		if d, ok := opt["description"]; ok {
			b.WriteString(`<span class="desc">` + textOf(d) + `</span>`)
		}
		b.WriteString(`</span></label>`)
	}
	b.WriteString(`</div>`)
	return b.String()
}

// elementHTML is an interactive element of an actions block.
func elementHTML(v any) string {
	o, _ := v.(map[string]any)
	switch o["type"] {
	case "radio_buttons", "checkboxes":
		return choicesHTML(o)
	}
	return buttonHTML(v)
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
			if acc, ok := bl["accessory"].(map[string]any); ok && acc["type"] == "image" {
				b.WriteString(imgHTML(acc))
			} else if ok {
				b.WriteString(buttonHTML(acc))
			}
			b.WriteString("</div>")
		case "context":
			// One line: texts and small images side by side, as Slack
			// lays out a context block.
			b.WriteString(`<div class="ctx">`)
			els, _ := bl["elements"].([]any)
			for _, e := range els {
				if o, _ := e.(map[string]any); o["type"] == "image" {
					b.WriteString(imgHTML(o))
					continue
				}
				b.WriteString(`<span>` + strings.ReplaceAll(textOf(e), "\n", "<br>") + "</span>")
			}
			b.WriteString("</div>")
		case "image":
			b.WriteString(`<div class="img">` + imgHTML(bl) + `</div>`)
		case "actions":
			b.WriteString(`<div class="acts">`)
			els, _ := bl["elements"].([]any)
			for _, e := range els {
				b.WriteString(elementHTML(e))
			}
			b.WriteString("</div>")
		case "divider":
			b.WriteString("<hr>")
		}
	}
	b.WriteString("</div></div></body></html>")
	return b.String()
}

// PreviewViewHTML renders a modal (a view): its title, sections and input
// blocks, each input holding what the person typed (values, by block id)
// with its hint, and the error Slack shows on it after the app answered
// the submission with response_action "errors" (errs, by block id).
func PreviewViewHTML(view json.RawMessage, values, errs map[string]string) string {
	var v map[string]any
	_ = json.Unmarshal(view, &v)
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>Slack modal preview</title><style>` + previewCSS + `</style></head><body>`)
	b.WriteString(`<div class="modal"><header>` + textOf(v["title"]) + `</header><div class="body">`)
	bs, _ := v["blocks"].([]any)
	for _, x := range bs {
		bl, _ := x.(map[string]any)
		id, _ := bl["block_id"].(string)
		switch bl["type"] {
		case "section":
			b.WriteString(`<div class="sec"><div>` + textOf(bl["text"]) + `</div></div>`)
		case "context":
			b.WriteString(`<div class="ctx">` + textOf(firstOf(bl["elements"])) + `</div>`)
		case "input":
			cls := "input"
			if errs[id] != "" {
				cls += " bad"
			}
			b.WriteString(`<div class="` + cls + `"><b>` + textOf(bl["label"]) + `</b>`)
			el, _ := bl["element"].(map[string]any)
			val := html.EscapeString(values[id])
			if multi, _ := el["multiline"].(bool); multi {
				b.WriteString(`<textarea rows="3">` + val + `</textarea>`)
			} else {
				b.WriteString(`<input value="` + val + `">`)
			}
			if errs[id] != "" {
				b.WriteString(`<div class="err">` + html.EscapeString(errs[id]) + `</div>`)
			}
			if h, ok := bl["hint"]; ok {
				b.WriteString(`<div class="hint">` + textOf(h) + `</div>`)
			}
			b.WriteString(`</div>`)
		}
	}
	b.WriteString(`</div><footer>`)
	if c, ok := v["close"]; ok {
		b.WriteString(`<button>` + textOf(c) + `</button>`)
	}
	if sub, ok := v["submit"]; ok {
		b.WriteString(`<button class="primary">` + textOf(sub) + `</button>`)
	}
	b.WriteString(`</footer></div></body></html>`)
	return b.String()
}

func firstOf(v any) any {
	xs, _ := v.([]any)
	if len(xs) == 0 {
		return nil
	}
	return xs[0]
}
