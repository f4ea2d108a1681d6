package slack

import (
	"regexp"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Slack's Block Kit limits (https://docs.slack.dev/reference/block-kit).
// Lengths are counted in UTF-16 code units, which is never less than what
// Slack counts, so a clipped text is never rejected.
const (
	maxBlocksMessage   = 50
	maxBlocksModal     = 100
	maxButtonText      = 75
	maxOptionText      = 75
	maxOptionDesc      = 75
	maxSectionText     = 3000
	maxHeaderText      = 150
	maxModalTitle      = 24
	maxModalButton     = 24
	maxPrivateMetadata = 3000
	maxFallbackText    = 3000 // slack-go refuses a longer text; Slack's own limit is 40 000
	maxPlaceholder     = 150
	maxInputLabel      = 2000
	maxConfirmTitle    = 100
	maxConfirmText     = 300
	maxConfirmButton   = 30
	maxContextText     = 3000
	// maxInputLength is plain_text_input's max_length ceiling (1–3000),
	// below domain.MaxAnswerLen.
	maxInputLength = 3000
)

const ellipsis = "…"

// textLen is the length of s as Slack counts it, at most.
func textLen(s string) int {
	n := 0
	for _, r := range s {
		if w := utf16.RuneLen(r); w > 0 {
			n += w
		} else {
			n++
		}
	}
	return n
}

// clip shortens s to at most max units, ending with "…" when it cut.
func clip(s string, max int) string {
	if textLen(s) <= max {
		return s
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		w := utf16.RuneLen(r)
		if w < 0 {
			w = 1
		}
		if n+w > max-1 {
			break
		}
		b.WriteRune(r)
		n += w
	}
	return strings.TrimRight(b.String(), " \n\t") + ellipsis
}

// oneLine folds line breaks into spaces (button and option texts).
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// broadcasts are the words Slack may turn into a notification for everyone
// even without the <!…> syntax (with link_names or by older clients).
var broadcasts = regexp.MustCompile(`(?i)@(channel|here|everyone)\b`)

var entities = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// escape makes s inert in mrkdwn: no <…> links, mentions or broadcasts, and
// no "@channel" a client could still turn into one.
func escape(s string) string {
	s = entities.Replace(s)
	return broadcasts.ReplaceAllString(s, "@\u2060$1")
}

// escClip escapes s for mrkdwn and shortens the result to max units without
// cutting an entity in half.
func escClip(s string, max int) string {
	full := escape(s)
	if textLen(full) <= max {
		return full
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		var piece string
		switch r {
		case '&':
			piece = "&amp;"
		case '<':
			piece = "&lt;"
		case '>':
			piece = "&gt;"
		default:
			piece = string(r)
		}
		w := textLen(piece)
		if n+w > max-1 {
			break
		}
		b.WriteString(piece)
		n += w
	}
	// A broadcast word may have been cut before its joiner was added.
	out := broadcasts.ReplaceAllString(b.String(), "@\u2060$1")
	for out != "" && textLen(out)+1 > max { // max may be below 1: then nothing is left
		_, size := utf8.DecodeLastRuneInString(out)
		out = out[:len(out)-size]
	}
	return strings.TrimRight(out, " \n\t") + ellipsis
}

var (
	mdBold    = regexp.MustCompile(`\*\*([^*\n]+)\*\*`)
	mdLink    = regexp.MustCompile(`\[([^\]\n]+)\]\((https?://[^\s)|<>]+)\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6}[ \t]+(.+)$`)
)

// markdown renders the agent's context (CommonMark-ish) as safe mrkdwn:
// everything is escaped first, then bold, headings and http(s) links are
// turned into Slack's syntax. Nothing the agent writes can mention anyone,
// and a link shows where it goes: "[text](url)" becomes "text (url)",
// never a masked link whose words could imitate the bridge's address.
func markdown(s string, max int) string {
	out := escape(s)
	out = mdHeading.ReplaceAllString(out, "*$1*")
	out = mdBold.ReplaceAllString(out, "*$1*")
	out = mdLink.ReplaceAllStringFunc(out, func(m string) string {
		p := mdLink.FindStringSubmatch(m)
		return p[1] + " (<" + p[2] + ">)"
	})
	if textLen(out) <= max {
		return out
	}
	// Too long once converted: fall back to the escaped text, shortened.
	return escClip(s, max)
}

// unescape turns Slack's entity escaping of a user's message back into text.
func unescape(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}
