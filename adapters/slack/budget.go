package slack

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/askbridge/askbridge/domain"
	"github.com/slack-go/slack"
)

// Slack refuses a message (and, we assume, a modal) whose blocks hold more
// than about 12,000 characters of text in all, however little each block
// holds: msg_blocks_too_long, undocumented, seen from 11,341 (
// slackapi/bolt-js#2509 and #2867). Every message and modal stays under
// maxBlocksText; what does not fit is shortened, with a button that shows
// the whole text in a modal.
const maxBlocksText = 11000

// unlimited is a limit that never shortens anything.
const unlimited = 1 << 30

// minPart is the least a shortened text keeps, so that it still says
// what it is about.
const minPart = 60

// layout holds the most units each variable text of a message may take.
type layout struct {
	context, approval, outcome int
	items, options             []int // per item: its question; its option list
	whole                      *whole
}

// whole is how each variable text reads unshortened, worked out once per
// message: rendering is repeated while fitting, and these are the costly
// parts.
type whole struct {
	context   int      // length of the context's mrkdwn
	contextMD string   // the context's mrkdwn
	items     []int    // length of each escaped question
	options   []string // each option list
}

func measure(q *domain.Question) *whole {
	w := &whole{items: make([]int, len(q.Questions)), options: make([]string, len(q.Questions))}
	if strings.TrimSpace(q.Context) != "" {
		w.contextMD = markdown(q.Context, unlimited)
		w.context = textLen(w.contextMD)
	}
	for i, it := range q.Questions {
		w.items[i] = textLen(escape(it.Question))
		if len(it.Options) > 0 {
			w.options[i] = optionList(it, unlimited)
		}
	}
	return w
}

// fullLayout is each text's own block limit: what a message shows when the
// total fits.
func fullLayout(q *domain.Question, w *whole) layout {
	l := layout{context: maxSectionText, approval: maxContextText, outcome: maxSectionText - 300, whole: w}
	for range q.Questions {
		l.items = append(l.items, maxSectionText-200)
		l.options = append(l.options, maxSectionText)
	}
	return l
}

// wanted is how long each text is when shown whole, up to its block limit.
func wanted(q *domain.Question, final bool, w *whole) layout {
	full := fullLayout(q, w)
	l := layout{items: make([]int, len(q.Questions)), options: make([]int, len(q.Questions))}
	l.context = min(w.context, full.context)
	if final {
		l.outcome = min(textLen(outcomeWithin(q, unlimited)), full.outcome)
	} else {
		l.approval = min(textLen(approvalLine(q)), full.approval)
	}
	for i := range q.Questions {
		l.items[i] = min(w.items[i], full.items[i])
		l.options[i] = min(textLen(w.options[i]), full.options[i])
	}
	return l
}

// fit renders a message with the layout render is given, shortening the
// longest texts first until the total fits maxBlocksText. On a finished
// copy the outcome line is kept whole as far as possible: it is what people
// look for.
func fit(q *domain.Question, final bool, render func(layout) []slack.Block) []slack.Block {
	return fitWithin(q, final, maxBlocksText, render)
}

// fitWithin is fit to at most limit units of text.
func fitWithin(q *domain.Question, final bool, limit int, render func(layout) []slack.Block) []slack.Block {
	w := measure(q)
	blocks := render(fullLayout(q, w))
	total, over := textOver(blocks, limit)
	if !over {
		return blocks
	}
	want := wanted(q, final, w)
	n := len(q.Questions)
	parts := append([]int{want.context, want.approval}, append(want.items, want.options...)...)
	used := want.outcome
	for _, p := range parts {
		used += p
	}
	avail := limit - (total - used)
	for range 8 {
		l := layout{outcome: min(want.outcome, max(avail*6/10, minPart)), whole: w}
		got := share(parts, avail-l.outcome)
		l.context, l.approval, l.items, l.options = got[0], got[1], got[2:2+n], got[2+n:]
		blocks = render(l)
		if total, over = textOver(blocks, limit); !over {
			return blocks
		}
		avail -= total - limit + 50
	}
	return blocks
}

// share divides budget among texts wanting want[i] units, the shortest
// first: each gets what it wants or an equal share of what is left, and
// never less than minPart.
func share(want []int, budget int) []int {
	out := make([]int, len(want))
	var idx []int
	for i, w := range want {
		if w > 0 {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return want[idx[a]] < want[idx[b]] })
	left := budget
	for k, i := range idx {
		give := max(min(want[i], left/(len(idx)-k)), min(want[i], minPart))
		out[i] = give
		left -= give
	}
	return out
}

// blocksText counts the text of blocks as Slack does for its total limit:
// every "text" string in them (text objects, buttons, options, headers,
// context, confirm dialogs).
func blocksText(blocks []slack.Block) int {
	b, err := json.Marshal(blocks)
	if err != nil {
		return 0
	}
	return jsonText(b)
}

// textOver reports whether blocksText(blocks) is over limit, and that
// total when it is. Every unit of text takes at least one byte of the
// blocks' JSON (a UTF-16 unit is one to two bytes of UTF-8; an escape is
// longer still), so blocks whose JSON is no longer than limit fit without
// counting: most messages, which then skip decoding their JSON again.
func textOver(blocks []slack.Block, limit int) (int, bool) {
	b, err := json.Marshal(blocks)
	if err != nil || len(b) <= limit {
		return 0, false
	}
	total := jsonText(b)
	return total, total > limit
}

// jsonText is blocksText of blocks marshalled to b.
func jsonText(b []byte) int {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return 0
	}
	var walk func(any) int
	walk = func(v any) int {
		total := 0
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if s, ok := c.(string); ok {
					if k == "text" {
						total += textLen(s)
					}
					continue
				}
				total += walk(c)
			}
		case []any:
			for _, c := range x {
				total += walk(c)
			}
		}
		return total
	}
	return walk(v)
}

// itemBlocks are an item's question and option list, within l; when either
// is shortened the question carries a "Show full question" button.
func itemBlocks(q *domain.Question, i int, l layout) []slack.Block {
	it := q.Questions[i]
	text := itemText(q, i, l.items[i])
	var opts string
	if len(it.Options) > 0 {
		opts = optionList(it, l.options[i])
	}
	var more *slack.Accessory
	if l.items[i] < l.whole.items[i] || opts != l.whole.options[i] {
		more = slack.NewAccessory(fullButton(fmt.Sprintf("%s:%d", actFull, i), "Show full question"))
	}
	blocks := []slack.Block{slack.NewSectionBlock(mrkdwn(text), nil, more, slack.SectionBlockOptionBlockID(blockID(q.ID, "t"+strconv.Itoa(i))))}
	if opts != "" {
		blocks = append(blocks, slack.NewContextBlock("", mrkdwn(opts)))
	}
	return blocks
}

func fullButton(actionID, text string) *slack.ButtonBlockElement {
	return slack.NewButtonBlockElement(actionID, "full", plain(text))
}

const fullCallback = "askbridge_full"

// renderFull builds the modal showing item i of q whole (its question and
// every option with its description), or the whole context for i < 0.
// It is read-only: no input, no submit.
func renderFull(q *domain.Question, i int) slack.ModalViewRequest {
	var texts []string
	modalTitle := "Context"
	if i < 0 {
		for _, piece := range contextPieces(q.Context) {
			texts = append(texts, markdown(piece, maxSectionText))
		}
	} else {
		it := q.Questions[i]
		modalTitle = "Full question"
		if it.Header != "" {
			modalTitle = it.Header
		}
		if len(q.Questions) > 1 {
			head := fmt.Sprintf("*%d.*", i+1)
			if it.Header != "" {
				head = fmt.Sprintf("*%d. %s*", i+1, escClip(oneLine(it.Header), 100))
			}
			texts = append(texts, head)
		}
		texts = append(texts, escChunks(it.Question, maxSectionText)...)
		for j, o := range it.Options {
			line := fmt.Sprintf("*%d. %s*", j+1, escClip(oneLine(o.Label), 1000))
			if o.Recommended {
				line += " _(recommended)_"
			}
			if o.Description != "" {
				line += "\n" + escape(o.Description)
			}
			texts = append(texts, clip(line, maxSectionText))
		}
	}
	var blocks []slack.Block
	left := maxBlocksText
	for _, t := range texts {
		if strings.TrimSpace(t) == "" {
			continue
		}
		if left < minPart || len(blocks) == maxBlocksModal {
			break
		}
		if textLen(t) > left {
			t = clip(t, left)
		}
		left -= textLen(t)
		blocks = append(blocks, slack.NewSectionBlock(mrkdwn(t), nil, nil))
	}
	return slack.ModalViewRequest{
		Type:       slack.VTModal,
		Title:      plain(clip(oneLine(modalTitle), maxModalTitle)),
		Close:      plain("Close"),
		Blocks:     slack.Blocks{BlockSet: blocks},
		CallbackID: fullCallback,
	}
}

// escChunks escapes s for mrkdwn in pieces of at most size units, never
// cutting an entity in half.
func escChunks(s string, size int) []string {
	var out []string
	var b strings.Builder
	n := 0
	for _, r := range s {
		piece := escape(string(r))
		if w := textLen(piece); n+w > size {
			out = append(out, broadcasts.ReplaceAllString(b.String(), "@\u2060$1"))
			b.Reset()
			n = 0
		}
		b.WriteString(piece)
		n += textLen(piece)
	}
	if b.Len() > 0 {
		out = append(out, broadcasts.ReplaceAllString(b.String(), "@\u2060$1"))
	}
	return out
}

// contextPieces cuts the agent's context at line ends into pieces whose
// mrkdwn fits one section; a line too long on its own is cut in pieces
// that fit even when every character must be escaped. markdown works line
// by line, so a piece's length is the sum of its lines'.
func contextPieces(s string) []string {
	const runes = maxSectionText / 5 // "&" becomes "&amp;"
	var out []string
	var cur strings.Builder
	n := 0
	for _, line := range strings.SplitAfter(s, "\n") {
		parts := []string{line}
		if textLen(markdown(line, unlimited)) > maxSectionText {
			parts = parts[:0]
			for r := []rune(line); len(r) > 0; {
				k := min(runes, len(r))
				parts = append(parts, string(r[:k]))
				r = r[k:]
			}
		}
		for _, p := range parts {
			w := textLen(markdown(p, unlimited))
			if cur.Len() > 0 && n+w > maxSectionText {
				out = append(out, cur.String())
				cur.Reset()
				n = 0
			}
			cur.WriteString(p)
			n += w
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}
