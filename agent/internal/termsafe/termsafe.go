// Package termsafe keeps text from agents and people from acting on the
// terminal it is printed to: escape sequences, carriage returns, bidi
// overrides and the like are shown (domain.Visible), never interpreted.
package termsafe

import (
	"bytes"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/askbridge/askbridge/domain"
)

// Writer writes through domain.Visible. A character split across two
// writes is held back until it is whole.
type Writer struct {
	w    io.Writer
	held []byte
}

// New returns a Writer over w.
func New(w io.Writer) *Writer { return &Writer{w: w} }

// Underlying returns the writer s writes to.
func (s *Writer) Underlying() io.Writer { return s.w }

// Write makes p visible and writes it; it reports len(p) on success.
func (s *Writer) Write(p []byte) (int, error) {
	b := append(s.held, p...)
	s.held = nil
	// Hold back an incomplete UTF-8 sequence at the end.
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				s.held = append([]byte(nil), b[i:]...)
				b = b[:i]
			}
			break
		}
	}
	if _, err := io.WriteString(s.w, domain.Visible(string(b))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what a final incomplete character held back, made visible.
func (s *Writer) Flush() error {
	if len(s.held) == 0 {
		return nil
	}
	_, err := io.WriteString(s.w, domain.Visible(string(s.held)))
	s.held = nil
	return err
}

// JSON rewrites a JSON document so that the characters Visible would show
// and encoding/json leaves raw (C1 controls, bidi and other invisible
// format characters, U+2028/U+2029) are \u escapes: the same document, safe
// to print. They can only stand inside strings, where \u is valid.
func JSON(doc []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(doc))
	for i := 0; i < len(doc); {
		r, size := utf8.DecodeRune(doc[i:])
		switch {
		case r < utf8.RuneSelf || domain.Visible(string(r)) == string(r):
			b.Write(doc[i : i+size])
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.Bytes()
}
