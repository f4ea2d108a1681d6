package faketelegram

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
)

// parseHTML reads text in the Bot API's HTML parse mode as Telegram does
// (https://core.telegram.org/bots/api#html-style): only the supported tags,
// properly nested; only &lt; &gt; &amp; &quot; and numeric entities; every
// other <, > and & must be escaped. It returns the visible text.
func parseHTML(s string) (string, error) {
	var b strings.Builder
	var stack []string
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '<':
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return "", fmt.Errorf("can't parse entities: unclosed start tag at byte offset %d", i)
			}
			tag := s[i+1 : i+end]
			i += end + 1
			if name, ok := strings.CutPrefix(tag, "/"); ok {
				if len(stack) == 0 || stack[len(stack)-1] != name {
					return "", fmt.Errorf("can't parse entities: can't find end tag corresponding to start tag %q", name)
				}
				stack = stack[:len(stack)-1]
				continue
			}
			name, attrs, _ := strings.Cut(tag, " ")
			if err := checkTag(name, attrs); err != nil {
				return "", err
			}
			stack = append(stack, name)
		case '>':
			return "", fmt.Errorf("can't parse entities: unexpected > at byte offset %d", i)
		case '&':
			end := strings.IndexByte(s[i:], ';')
			if end < 0 || end > 10 {
				return "", fmt.Errorf("can't parse entities: unsupported & at byte offset %d", i)
			}
			ent := s[i+1 : i+end]
			switch {
			case ent == "lt":
				b.WriteByte('<')
			case ent == "gt":
				b.WriteByte('>')
			case ent == "amp":
				b.WriteByte('&')
			case ent == "quot":
				b.WriteByte('"')
			case strings.HasPrefix(ent, "#x"):
				n, err := strconv.ParseInt(ent[2:], 16, 32)
				if err != nil {
					return "", fmt.Errorf("can't parse entities: bad numeric entity at byte offset %d", i)
				}
				b.WriteRune(rune(n))
			case strings.HasPrefix(ent, "#"):
				n, err := strconv.ParseInt(ent[1:], 10, 32)
				if err != nil {
					return "", fmt.Errorf("can't parse entities: bad numeric entity at byte offset %d", i)
				}
				b.WriteRune(rune(n))
			default:
				return "", fmt.Errorf("can't parse entities: unsupported HTML entity &%s; at byte offset %d", ent, i)
			}
			i += end + 1
		default:
			b.WriteByte(c)
			i++
		}
	}
	if len(stack) > 0 {
		return "", fmt.Errorf("can't parse entities: can't find end tag corresponding to start tag %q", stack[len(stack)-1])
	}
	return b.String(), nil
}

var plainTags = map[string]bool{"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "tg-spoiler": true, "pre": true, "blockquote": true}

func checkTag(name, attrs string) error {
	attrs = strings.TrimSpace(attrs)
	switch {
	case plainTags[name] && attrs == "":
		return nil
	case name == "blockquote" && attrs == "expandable":
		return nil
	case name == "span" && attrs == `class="tg-spoiler"`:
		return nil
	case name == "code" && (attrs == "" || strings.HasPrefix(attrs, `class="language-`) && strings.HasSuffix(attrs, `"`)):
		return nil
	case name == "a":
		href, ok := strings.CutPrefix(attrs, `href="`)
		if !ok || !strings.HasSuffix(href, `"`) || strings.Contains(strings.TrimSuffix(href, `"`), `"`) {
			return fmt.Errorf("can't parse entities: bad link %q", attrs)
		}
		return nil
	}
	return fmt.Errorf("can't parse entities: unsupported start tag %q", name)
}

// units is a text's length as Telegram counts it: UTF-16 code units.
func units(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
