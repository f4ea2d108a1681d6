package domain

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// What a person reads must be what they decide, so text from agents is
// checked before anyone sees it:
//   - no text field or id may hold NUL or U+FFFD (what a JSON decoder makes
//     of invalid UTF-8 and lone surrogates), nor be invalid UTF-8;
//   - a label, header or id may hold no control or invisible format
//     character (zero-width, bidi overrides and isolates, soft hyphen):
//     two labels that differ only by one would look the same;
//   - within one item, no two labels may look the same (Skeleton), and no
//     option's value may name another option's label.

// TextProblem names what is wrong with s as text from outside (an agent's
// or a person's), or "": NUL, U+FFFD, invalid UTF-8.
func TextProblem(s string) string {
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	for _, r := range s {
		switch {
		case r == 0:
			return "must not contain NUL (U+0000)"
		case r == utf8.RuneError:
			return "must not contain U+FFFD (invalid UTF-8 or a lone surrogate)"
		}
	}
	return ""
}

// labelProblem is TextProblem for a short text shown as a control (a
// label, a header, an id): it also refuses controls and invisible
// characters.
func labelProblem(s string) string {
	if p := TextProblem(s); p != "" {
		return p
	}
	for _, r := range s {
		if invisible(r) || unicode.IsControl(r) {
			return "must not contain control or invisible characters (" + RuneName(r) + ")"
		}
	}
	return ""
}

// checkText adds field's text problem, if any.
func checkText(p *problems, field, s string) {
	if msg := TextProblem(s); msg != "" {
		p.add(field, "%s", msg)
	}
}

// checkLabel adds field's label problem, if any.
func checkLabel(p *problems, field, s string) {
	if msg := labelProblem(s); msg != "" {
		p.add(field, "%s", msg)
	}
}

// invisible reports format characters a reader cannot see: zero-width
// spaces and joiners, bidi marks, overrides and isolates, the BOM, soft
// hyphen, invisible operators, tags.
func invisible(r rune) bool {
	return unicode.Is(unicode.Cf, r) || r == '\u115F' || r == '\u1160' || r == '\u3164' || r == '\uFFA0'
}

// RuneName writes r the way every surface shows a character it will not
// interpret: U+202E.
func RuneName(r rune) string { return fmt.Sprintf("U+%04X", r) }

// confusables maps letters that look like Latin ones (Cyrillic, Greek,
// and a few others) to the Latin letter they imitate, for Skeleton.
var confusables = map[rune]rune{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'ё': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c', 'т': 't',
	'у': 'y', 'х': 'x', 'ѕ': 's', 'і': 'i', 'ї': 'i', 'ј': 'j', 'һ': 'h', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'ӏ': 'l',
	'ɡ': 'g', 'ь': 'b', 'п': 'n', 'г': 'r',
	// Greek
	'α': 'a', 'β': 'b', 'ε': 'e', 'η': 'n', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't', 'υ': 'u',
	'χ': 'x', 'γ': 'y', 'ω': 'w', 'ϲ': 'c', 'ϳ': 'j',
	// Latin look-alikes and digits
	'ı': 'i', 'ȷ': 'j', 'ɑ': 'a', '0': 'o', '1': 'l',
}

// Skeleton is the form in which two texts that look alike are equal:
// compatibility-normalised (NFKC: full-width and styled letters become
// plain ones), lower case, invisible characters gone, look-alike letters of
// other scripts replaced by the Latin ones they imitate, white space as
// single spaces, surrounding spaces and punctuation gone. It decides
// whether labels look the same and what an approval's options do.
func Skeleton(s string) string {
	if out, ok := asciiSkeleton(s); ok {
		return out
	}
	return fullSkeleton(s)
}

func fullSkeleton(s string) string {
	s = norm.NFKC.String(s)
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range strings.ToLower(s) {
		if invisible(r) || unicode.IsControl(r) && !unicode.IsSpace(r) {
			continue
		}
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if c, ok := confusables[r]; ok {
			r = c
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return strings.TrimFunc(b.String(), func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
}

// Visible returns s with every character a terminal or a reader would not
// show as itself made visible instead of interpreted: C0 controls but
// line feed and tab, DEL and invalid bytes as \x1b; C1 controls (U+009B is
// a terminal's CSI), bidi overrides and isolates, zero-width and other
// invisible format characters, and the line and paragraph separators as
// ⟨U+202E⟩. What a person reads in a terminal is then exactly the text.
func Visible(s string) string {
	if visibleAlready(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f, invisible(r), r == '\u2028', r == '\u2029':
			b.WriteString("⟨" + RuneName(r) + "⟩")
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// visibleAlready reports whether Visible would return s unchanged (the
// common case, without allocating).
func visibleAlready(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 || r <= 0x9f || invisible(r) || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += size
	}
	return true
}

// asciiSkeleton is Skeleton for printable ASCII text (nearly every label),
// without normalising: s itself when it is already its skeleton, else one
// allocation. ok is false for anything else.
func asciiSkeleton(s string) (string, bool) {
	same := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < ' ' || c > '~':
			return "", false
		case c >= 'A' && c <= 'Z', c == '0', c == '1':
			same = false
		case c == ' ' && (i == 0 || i == len(s)-1 || s[i-1] == ' '):
			same = false
		case (i == 0 || i == len(s)-1) && unicode.IsPunct(rune(c)):
			same = false
		}
	}
	if same {
		return s, true
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ':
			space = b.Len() > 0
			continue
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c == '0':
			c = 'o'
		case c == '1':
			c = 'l'
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteByte(c)
	}
	return strings.TrimFunc(b.String(), func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) }), true
}
