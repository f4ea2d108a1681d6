package faketelegram

import (
	"html"
	"net/http"
	"strconv"
	"strings"
)

// A plain HTML preview of a message as a Telegram client lays it out, for
// eyes and screenshots (docs/img/telegram-*.png): the bubble with the
// message's own HTML — which the fake has already checked is Telegram's
// safe subset — and the inline keyboard under it. It is no model of a
// Telegram client.

const previewCSS = `body{font:15px/1.4 -apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;background:#8fb98b;margin:0;padding:18px;max-width:560px}
.bubble{background:#fff;border-radius:12px;padding:8px 12px 6px;box-shadow:0 1px 1px rgba(0,0,0,.15);white-space:pre-wrap;word-break:break-word}
.name{color:#3a8dd6;font-weight:600;margin-bottom:2px}pre{background:#f2f4f5;border-radius:6px;padding:6px 8px;margin:4px 0;white-space:pre-wrap;font:13px/1.35 Menlo,Consolas,monospace}
code{font:13px Menlo,Consolas,monospace;background:#f2f4f5;border-radius:3px;padding:0 2px}a{color:#168acd;text-decoration:none}
.kb{margin-top:4px}.row{display:flex;gap:4px;margin-top:4px}.row span{flex:1;text-align:center;background:rgba(70,110,70,.55);color:#fff;border-radius:8px;padding:8px 6px;font-weight:500;font-size:14px}`

// PreviewHTML renders a message as a page.
func PreviewHTML(m *Msg) string {
	var b strings.Builder
	b.WriteString("<!doctype html><meta charset=utf-8><style>" + previewCSS + "</style><div class=bubble><div class=name>askbridge</div>")
	b.WriteString(m.HTML)
	b.WriteString("</div><div class=kb>")
	for _, row := range m.Keyboard {
		b.WriteString("<div class=row>")
		for _, bt := range row {
			b.WriteString("<span>" + html.EscapeString(bt.Text))
			if bt.URL != "" {
				b.WriteString(" ↗")
			}
			b.WriteString("</span>")
		}
		b.WriteString("</div>")
	}
	b.WriteString("</div>")
	return b.String()
}

// servePreview is GET /preview?chat=C&id=M.
func (f *Server) servePreview(w http.ResponseWriter, r *http.Request) {
	chat, _ := strconv.ParseInt(r.URL.Query().Get("chat"), 10, 64)
	id, _ := strconv.ParseInt(r.URL.Query().Get("id"), 10, 64)
	m := f.Message(chat, id)
	if m == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(PreviewHTML(m)))
}
