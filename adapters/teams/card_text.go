package teams

import (
	"strings"
	"unicode/utf8"

	"github.com/askbridge/askbridge/domain"
)

// Text from agents and people is untrusted: what a person reads on a card
// must be exactly what they decide. A TextBlock renders a Markdown subset
// (links whose text hides where they go, emphasis, lists) and Teams adds
// mentions (<at>) and date functions ({{DATE(…)}}), so no text that came
// from outside ever goes in a TextBlock: it goes in a RichTextBlock's
// TextRun, which the Adaptive Card schema defines as plain text ("Markdown
// is not supported"). The date functions are applied to TextRuns too, so
// their opening braces are kept apart by an invisible word joiner.
//
// Labels that must be titles of controls (buttons, choices, input labels)
// are plain text in the schema, but some renderers apply Markdown to
// choice labels; there inert also breaks the sequences that would make a
// link, a mention, HTML or an entity, with the same invisible joiner, so
// they show as typed. The exact label is always listed above the control.

// joiner is U+2060 WORD JOINER: invisible, and no line break at it.
const joiner = "\u2060"

// plain is s as a TextRun shows it literally.
func plain(s string) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	return strings.ReplaceAll(s, "{{", "{"+joiner+"{")
}

// inertRepl breaks what a Markdown or HTML renderer would act on in a
// control's title.
var inertRepl = strings.NewReplacer(
	"{{", "{"+joiner+"{",
	"](", "]"+joiner+"(",
	"<", "<"+joiner,
	"&", "&"+joiner,
)

// inert is s as a control's title, shown as typed on every renderer.
func inert(s string) string { return inertRepl.Replace(s) }

// oneLine joins the lines of s with spaces (titles and labels).
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n\t") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// clip shortens s to at most n runes, ending with "…" when cut, and
// reports whether it was.
func clip(s string, n int) (string, bool) {
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	return domain.Shorten(s, n), true
}

// label is a control's title: one line, at most n runes, inert.
func label(s string, n int) string {
	c, _ := clip(oneLine(s), n)
	return inert(c)
}
