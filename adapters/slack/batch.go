package slack

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/actiontext"
	"github.com/askbridge/askbridge/adapters/internal/approval"
	"github.com/askbridge/askbridge/domain"
	"github.com/slack-go/slack"
)

// A batch of approvals (lifecycle.BatchChannel) is one message: a heading,
// a section per call — its question, its action as a single approval shows
// it, and its own Allow / Deny / Edit… / Deny with note…, or its outcome
// once decided — and a last row with Allow all N / Deny all N / Deny all
// with note…. A batch whose sections do not fit Slack's 50 blocks and
// text limit shows one line per call instead, says so, and links the
// batch's page of the web inbox, where each call is decided on its own.

// Controls of a batch's message: block "ab|<batch id>|all".
const (
	partAll       = "all"
	actAllowAll   = "allowall"   // value: how many calls the message showed
	actDenyAll    = "denyall"    // value: the same
	actDenyAllRsn = "denyallrsn" // opens the "Deny all with note" modal

	batchNoteCallback = "askbridge_batchnote"
	// minCallBudget is the least text a call's action gets in a message
	// with a section per call; below it the compact layout is used.
	minCallBudget = 700
	// minLine is the least a call's line gets in the compact layout.
	minLine = 60
)

// batchPage is the batch's page of the web inbox, "" without a public URL.
func (a *Adapter) batchPage(b *domain.Batch) string {
	base := strings.TrimRight(a.cfg.PublicURL, "/")
	if base == "" {
		return ""
	}
	return base + "/batches/" + url.PathEscape(b.ID)
}

// renderBatch builds the blocks and fallback text of a batch's message.
func (a *Adapter) renderBatch(b *domain.Batch, now time.Time) ([]slack.Block, string) {
	head := batchHeading(b, now)
	bar := batchBar(b)
	fixed := blocksText(head) + blocksText(bar)
	n := len(b.Questions)
	budget := (maxBlocksText - fixed - 300*n) / max(n, 1)
	if budget >= minCallBudget {
		blocks := head
		for i, q := range b.Questions {
			blocks = append(blocks, a.callBlocks(q, i, budget)...)
		}
		blocks = append(blocks, bar...)
		if len(blocks) <= maxBlocksMessage && blocksText(blocks) <= maxBlocksText {
			return blocks, batchFallback(b)
		}
	}
	blocks := append(head, a.compactCalls(b, maxBlocksMessage-len(head)-len(bar)-1, maxBlocksText-fixed-600)...)
	return append(blocks, bar...), batchFallback(b)
}

// batchHeading is the header, the line naming agent, run and deadline, and
// how many calls are decided.
func batchHeading(b *domain.Batch, now time.Time) []slack.Block {
	q := b.Questions[0]
	n := len(b.Questions)
	title := fmt.Sprintf("%d approvals needed", n)
	if b.Pending == 0 {
		title = fmt.Sprintf("%d approvals", n)
	}
	meta := "*" + escClip(oneLine(q.AgentLabel()), 200) + "*"
	if q.RunID != "" {
		meta += " · run `" + escClip(strings.ReplaceAll(q.RunID, "`", "'"), 200) + "`"
	}
	meta += fmt.Sprintf(" · %d of %d decided", n-b.Pending, n)
	if b.Pending > 0 {
		if exp := earliestDeadline(b); !exp.IsZero() {
			meta += fmt.Sprintf(" · expires in %s", domain.HumanDuration(exp.Sub(now)))
		}
	}
	return []slack.Block{slack.NewHeaderBlock(plain(title)), slack.NewContextBlock("", mrkdwn(clip(meta, maxContextText)))}
}

func earliestDeadline(b *domain.Batch) time.Time {
	var t time.Time
	for _, q := range b.Questions {
		if q.Status == domain.StatusPending && (t.IsZero() || q.ExpiresAt.Before(t)) {
			t = q.ExpiresAt
		}
	}
	return t
}

// batchFallback is the message's top-level text.
func batchFallback(b *domain.Batch) string {
	var parts []string
	for _, q := range b.Questions {
		parts = append(parts, q.Questions[0].Question)
	}
	return escClip(oneLine(fmt.Sprintf("%s asks for %d approvals: %s", b.Questions[0].AgentLabel(), len(b.Questions), strings.Join(parts, " / "))), maxFallbackText)
}

// batchBar is the row of Allow all N / Deny all N, while a call is
// pending. The buttons carry how many calls the message shows: a call
// that joins the batch later is not decided by a click on an older copy.
func batchBar(b *domain.Batch) []slack.Block {
	if b.Pending == 0 {
		return nil
	}
	shown := strconv.Itoa(len(b.Questions))
	allow := slack.NewButtonBlockElement(actAllowAll, shown, plain(fmt.Sprintf("Allow all %d", b.Pending)))
	allow.Style = slack.StylePrimary
	deny := slack.NewButtonBlockElement(actDenyAll, shown, plain(fmt.Sprintf("Deny all %d", b.Pending)))
	deny.Style = slack.StyleDanger
	note := slack.NewButtonBlockElement(actDenyAllRsn, shown, plain("Deny all with note…"))
	return []slack.Block{slack.NewActionBlock(blockID(b.ID, partAll), allow, deny, note)}
}

// callBlocks are call i's section: its question, its action within
// budget, and its controls while pending, else its outcome.
func (a *Adapter) callBlocks(q *domain.Question, i, budget int) []slack.Block {
	text := fmt.Sprintf("*%d.* %s", i+1, escClip(oneLine(q.Questions[0].Question), 500))
	if line := approvalLine(q); line != "" && q.Status == domain.StatusPending {
		text += "\n" + line
	}
	blocks := []slack.Block{slack.NewSectionBlock(mrkdwn(clip(text, maxSectionText)), nil, nil, slack.SectionBlockOptionBlockID(blockID(q.ID, "t0")))}
	x := a.extras(q)
	blocks = append(blocks, actionBlocks(q, budget, x)...)
	if q.Status != domain.StatusPending {
		return append(blocks, slack.NewContextBlock(blockID(q.ID, "out"), mrkdwn(clip(outcomeWithin(q, 500), maxContextText))))
	}
	if els := callControls(q, x); len(els) > 0 {
		blocks = append(blocks, slack.NewActionBlock(blockID(q.ID, "0"), els...))
	}
	return blocks
}

// callControls are a pending call's buttons, as its single-call message
// has them: its options (Allow, Deny) by tone, Edit… where the route
// allows it, and Deny with note….
func callControls(q *domain.Question, x extras) []slack.BlockElement {
	if len(q.Questions) != 1 || q.Questions[0].MultiSelect {
		return nil
	}
	if q.Questions[0].OpenEnded() {
		b := slack.NewButtonBlockElement(actAnswer+":0", "answer", plain("Answer…"))
		b.Style = slack.StylePrimary
		return []slack.BlockElement{b}
	}
	it := q.Questions[0]
	tones := approval.Tones(q)
	var els []slack.BlockElement
	for j, o := range it.Options {
		b := slack.NewButtonBlockElement(fmt.Sprintf("%s:0:%d", actOption, j), strconv.Itoa(j), plain(clip(oneLine(o.Label), maxButtonText)))
		if tones != nil {
			b.Style = map[approval.Tone]slack.Style{approval.Allow: slack.StylePrimary, approval.Deny: slack.StyleDanger}[tones[j]]
		}
		els = append(els, b)
	}
	if edit, _ := actionControls(q, x); edit != nil {
		els = append(els, edit)
	}
	if approval.NoteAllowed(q) {
		els = append(els, slack.NewButtonBlockElement(actOther+":0", "deny-note", plain(denyNoteLabel)))
	}
	return els
}

// compactCalls is the layout of a batch too big for a section per call:
// a line saying so, with the batch page's link, then one line per call
// (its action's main argument and its state), packed into at most blocks
// sections of at most text units in all.
func (a *Adapter) compactCalls(b *domain.Batch, blocks, text int) []slack.Block {
	note := fmt.Sprintf(":warning: *%d calls are more than one Slack message shows with buttons for each.* ", len(b.Questions))
	if page := a.batchPage(b); page != "" {
		note += "Read and decide each call on <" + page + "|the batch's page>, or all at once below."
	} else {
		note += "Read and decide each call in the web inbox (/batches/" + escape(b.ID) + "), or all at once below."
	}
	out := []slack.Block{slack.NewSectionBlock(mrkdwn(note), nil, nil)}
	calls, more := b.Questions, 0
	per := min(300, (text-textLen(note))/max(len(calls), 1)-10)
	if per < minLine { // thousands of calls: as many lines as fit, then how many more
		n := max((text-textLen(note))/(minLine+10)-1, 1)
		calls, more, per = calls[:n], len(calls)-n, minLine
	}
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, slack.NewSectionBlock(mrkdwn(cur.String()), nil, nil))
			cur.Reset()
		}
	}
	sections := max(blocks-1, 1)
	lines := make([]string, 0, len(calls)+1)
	for i, q := range calls {
		lines = append(lines, callLine(q, i, per))
	}
	if more > 0 {
		lines = append(lines, fmt.Sprintf("_…and %d more calls: every one is on the batch's page._", more))
	}
	for _, line := range lines {
		// Sections hold lines up to their limit; the last section takes
		// what is left so no call is left out.
		if cur.Len() > 0 && textLen(cur.String())+textLen(line)+1 > maxSectionText-50 && len(out) < sections {
			flush()
		}
		if cur.Len() > 0 {
			cur.WriteString("\n")
		}
		cur.WriteString(line)
	}
	flush()
	return out
}

// callLine is one call in a line of at most max units: its number, its
// action's main argument (or question) and its state.
func callLine(q *domain.Question, i, max int) string {
	what := q.Questions[0].Question
	if q.Action != nil {
		if args, _ := actiontext.Arguments(q.Action); args != "" {
			what = q.Action.Tool + ": " + args
		}
	}
	state := "waiting"
	if q.Status != domain.StatusPending {
		state = clip(outcomeWithin(q, 100), 200)
	}
	room := max - textLen(state) - 12
	return fmt.Sprintf("*%d.* `%s` — %s", i+1, strings.ReplaceAll(escClip(oneLine(what), room), "`", "'"), state)
}
