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

var reBold = regexp.MustCompile(`\*\*([^*]+)\*\*`)

// inline escapes a line, then marks up code spans and **bold**. A code span
// opens with a run of backticks and closes with a run of the same length
// (CommonMark), so ““a`b“” and the hook's “```rm -rf build/```” are
// code too. Escaping never produces a backtick or an asterisk, so the
// scanner only sees the agent's own markers.
func inline(s string) string {
	s = html.EscapeString(strings.TrimSpace(s))
	var out strings.Builder
	plain, i := 0, 0
	for i < len(s) {
		if s[i] != '`' {
			i++
			continue
		}
		open := backticks(s, i)
		end := -1
		for k := i + open; k < len(s); {
			if s[k] != '`' {
				k++
				continue
			}
			if n := backticks(s, k); n == open {
				end = k
				break
			} else {
				k += n
			}
		}
		if end < 0 {
			i += open
			continue
		}
		code := s[i+open : end]
		if len(code) >= 2 && code[0] == ' ' && code[len(code)-1] == ' ' && strings.Trim(code, " ") != "" {
			code = code[1 : len(code)-1]
		}
		// Code spans first, so that ** inside code stays literal.
		out.WriteString(reBold.ReplaceAllString(s[plain:i], "<strong>$1</strong>"))
		out.WriteString("<code>" + code + "</code>")
		i = end + open
		plain = i
	}
	out.WriteString(reBold.ReplaceAllString(s[plain:], "<strong>$1</strong>"))
	return out.String()
}

// backticks is the length of the run of backticks at s[i].
func backticks(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	return n
}

// inlineHTML renders one line of agent text (a question, a description)
// with code spans and bold, escaped like the context.
func inlineHTML(s string) template.HTML {
	return template.HTML(inline(s)) //nolint:gosec // built only from escaped text and fixed tags
}
