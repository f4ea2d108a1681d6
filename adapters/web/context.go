package web

import (
	"html"
	"html/template"
	"regexp"
	"strings"
)

// renderContext renders an agent's context (markdown) as a small, safe
// subset of HTML: paragraphs, line breaks, bullet lists, fenced code blocks,
// `code` and **bold**. Every character of the input is escaped first; the
// only tags in the output are the ones written here, so an agent cannot
// inject markup, scripts or links.
func renderContext(src string) template.HTML {
	src = strings.ReplaceAll(strings.TrimSpace(src), "\r\n", "\n")
	if src == "" {
		return ""
	}
	var b strings.Builder
	lines := strings.Split(src, "\n")
	var para, list []string
	flushPara := func() {
		if len(para) > 0 {
			b.WriteString("<p>")
			for n, l := range para {
				if n > 0 {
					b.WriteString("<br>")
				}
				b.WriteString(inline(l))
			}
			b.WriteString("</p>")
			para = nil
		}
	}
	flushList := func() {
		if len(list) > 0 {
			b.WriteString("<ul>")
			for _, l := range list {
				b.WriteString("<li>" + inline(l) + "</li>")
			}
			b.WriteString("</ul>")
			list = nil
		}
	}
	for n := 0; n < len(lines); n++ {
		l := lines[n]
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "```"):
			flushPara()
			flushList()
			var code []string
			for n++; n < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[n]), "```"); n++ {
				code = append(code, lines[n])
			}
			b.WriteString("<pre><code>" + html.EscapeString(strings.Join(code, "\n")) + "</code></pre>")
		case t == "":
			flushPara()
			flushList()
		case strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* "):
			flushPara()
			list = append(list, strings.TrimSpace(t[2:]))
		default:
			flushList()
			para = append(para, strings.TrimLeft(t, "#"))
		}
	}
	flushPara()
	flushList()
	return template.HTML(b.String()) //nolint:gosec // built only from escaped text and fixed tags
}

var (
	reCode = regexp.MustCompile("`([^`]+)`")
	reBold = regexp.MustCompile(`\*\*([^*]+)\*\*`)
)

// inline escapes a line, then marks up `code` and **bold**. Escaping never
// produces a backtick or an asterisk, so the patterns only see the agent's
// own markers.
func inline(s string) string {
	s = html.EscapeString(strings.TrimSpace(s))
	var out strings.Builder
	// Code spans first, so that ** inside code stays literal.
	last := 0
	for _, m := range reCode.FindAllStringSubmatchIndex(s, -1) {
		out.WriteString(reBold.ReplaceAllString(s[last:m[0]], "<strong>$1</strong>"))
		out.WriteString("<code>" + s[m[2]:m[3]] + "</code>")
		last = m[1]
	}
	out.WriteString(reBold.ReplaceAllString(s[last:], "<strong>$1</strong>"))
	return out.String()
}
