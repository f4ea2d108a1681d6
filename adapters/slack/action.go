package slack

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/askbridge/askbridge/adapters/internal/actiontext"
	"github.com/askbridge/askbridge/domain"
	"github.com/slack-go/slack"
)

// An approval that carries an action (domain.Action) shows the tool and its
// whole arguments in code blocks, and a file edit's diff, within the
// message's text budget. What does not fit is said in so many words
// ("diff: 300 lines, 212 shown") with a link to the question page of the
// web inbox (Config.PublicURL) or, without one, a button that pages
// through the whole action in modals. Nothing is cut silently.

// Controls of an action approval.
const (
	actEdit       = "edit"    // opens the edit modal
	actRule       = "rule"    // rule:<n>  allow with suggestion n
	actFullAction = "fullact" // fullact:<page>  the whole action, one page per modal

	editCallback = "askbridge_edit"
	editBlock    = "ab_edit"
	editAction   = "input"

	// codeSection is the most a code block section holds with its fences.
	codeSection = maxSectionText - 10
	// minActionBudget is the least the action gets of a message, however
	// long the question's text: it is what people decide on.
	minActionBudget = 6000
)

// extras are what rendering an approval's action needs beyond the record.
type extras struct {
	pageURL string // the question page of the web inbox, "" when unknown
	canEdit bool   // the route allows editing the arguments
	// choices are the options picked so far per item (labels), which
	// decide the conditional items shown and the options pre-selected;
	// nil: the defaults.
	choices [][]string
}

// extras works out the link and the edit permission of q.
func (a *Adapter) extras(q *domain.Question) extras {
	var x extras
	if q.Action == nil {
		return x
	}
	if base := strings.TrimRight(a.cfg.PublicURL, "/"); base != "" {
		x.pageURL = base + "/questions/" + url.PathEscape(q.ID)
	}
	r, ok := a.router.Route(q.Route)
	x.canEdit = domain.EditAllowed(q, ok && r.NoEdit) && q.ApprovalsRequired < 2
	return x
}

// codeEsc makes text safe inside a ``` block: mrkdwn entities escaped, and
// no run of three backticks that would end the block early.
func codeEsc(s string) string {
	return strings.ReplaceAll(escape(s), "```", "`\u200b`\u200b`")
}

func codeCost(line string) int { return textLen(codeEsc(line)) }

// codeBlocks are sections showing text as code, cut at line ends into
// sections Slack takes.
func codeBlocks(text string) []slack.Block {
	var out []slack.Block
	for _, p := range actiontext.Pages(text, codeSection, codeCost) {
		out = append(out, slack.NewSectionBlock(mrkdwn("```"+codeEsc(p)+"```"), nil, nil))
	}
	return out
}

// actionBlocks show q's action within budget units of text: a line naming
// the tool (and the diff's size), the arguments, the diff, and, when any
// of them is cut, a line saying what is left out and where to see it all.
func actionBlocks(q *domain.Question, budget int, x extras) []slack.Block {
	a := q.Action
	if a == nil {
		return nil
	}
	args, bash := actiontext.Arguments(a)
	head := "*Tool:* `" + codeEsc(oneLine(clip(a.Tool, domain.MaxToolLen))) + "`"
	if bash {
		head += " · command:"
	}
	var diffWhole actiontext.Cut
	if a.Diff != "" {
		diffWhole = actiontext.Fit(a.Diff, unlimited, codeCost)
		head += " · diff " + actiontext.DiffStat(diffWhole)
	}
	blocks := []slack.Block{slack.NewSectionBlock(mrkdwn(head), nil, nil)}
	// Leave room for the head, the fences and the "left out" line.
	room := budget - textLen(head) - 400
	argsRoom, diffRoom := room, 0
	if a.Diff != "" {
		argsRoom = min(codeCost(args)+len(args)/codeSection*10+10, room/3)
		diffRoom = room - argsRoom
	}
	var cuts []string
	show := func(what, text string, room int) {
		if text == "" {
			return
		}
		// Each section's fences cost 6; count them in.
		c := actiontext.Fit(text, max(room-6*(room/codeSection+1), 0), codeCost)
		if c.Text != "" {
			blocks = append(blocks, codeBlocks(c.Text)...)
		}
		if m := actiontext.More(what, c); m != "" {
			cuts = append(cuts, m)
		}
	}
	what := "arguments"
	if bash {
		what = "command"
	}
	show(what, args, argsRoom)
	if a.Diff != "" {
		show("diff", a.Diff, diffRoom)
	}
	if len(cuts) == 0 {
		return blocks
	}
	line := ":warning: *Not all shown here* — " + strings.Join(cuts, "; ")
	if x.pageURL != "" {
		line += " — full action: <" + x.pageURL + "|open the question page>"
		return append(blocks, slack.NewSectionBlock(mrkdwn(line), nil, nil))
	}
	line += " — press *Show full action* to read all of it."
	return append(blocks, slack.NewSectionBlock(mrkdwn(line), nil,
		slack.NewAccessory(fullButton(actFullAction+":0", "Show full action")),
		slack.SectionBlockOptionBlockID(blockID(q.ID, "act"))))
}

// ruleLines lists the "always allow" choices in words, numbered like their
// buttons (whose 75 characters may cut them).
func ruleLines(q *domain.Question) string {
	var lines []string
	for i, s := range q.Action.Suggestions {
		lines = append(lines, fmt.Sprintf("*%d.* %s", i+1, escape(actiontext.Describe(s).Sentence())))
	}
	return clip("*Always allow choices*\n"+strings.Join(lines, "\n"), maxContextText)
}

// actionControls are the action's extra controls beside Allow and Deny:
// "Edit…" (when the route allows it) and one button per suggestion.
func actionControls(q *domain.Question, x extras) (edit *slack.ButtonBlockElement, rules []slack.Block) {
	if q.Action == nil || !approvalShape(q) {
		return nil, nil
	}
	if x.canEdit {
		edit = slack.NewButtonBlockElement(actEdit, "edit", plain("Edit…"))
	}
	if len(q.Action.Suggestions) == 0 || q.ApprovalsRequired > 1 {
		return edit, nil
	}
	var els []slack.BlockElement
	for i, s := range q.Action.Suggestions {
		label := fmt.Sprintf("%d. %s", i+1, actiontext.Describe(s).Sentence())
		els = append(els, slack.NewButtonBlockElement(fmt.Sprintf("%s:%d", actRule, i), "rule", plain(clip(label, maxButtonText))))
	}
	return edit, []slack.Block{
		slack.NewContextBlock("", mrkdwn(ruleLines(q))),
		slack.NewActionBlock(blockID(q.ID, "rules"), els...),
	}
}

// approvalShape is an approval with one single-select item.
func approvalShape(q *domain.Question) bool {
	return q.Kind == domain.KindApproval && len(q.Questions) == 1 && !q.Questions[0].MultiSelect && !q.Questions[0].OpenEnded()
}

// decisionLine is what an answered action approval ended in: allowed as
// asked, with edits (and what changed), with an "always allow" rule, or
// automatically by a rule. "" for a denial: the generic outcome says it,
// with the reason.
func decisionLine(q *domain.Question, max int) string {
	d := q.Decision
	if d == nil || d.Behavior != domain.BehaviorAllow || q.Action == nil {
		return ""
	}
	who := personRef(q.RespondedBy)
	switch {
	case d.AutoRule != "":
		return ":white_check_mark: Allowed automatically by the route's rule " + escClip(d.AutoRule, max)
	case d.Edited:
		return ":pencil2: Allowed with edits by " + who + ": " + escClip(oneLine(strings.Join(actiontext.Changes(q.Action.Tool, q.Action.Input, d.Input), "; ")), max)
	case q.AppliedRule != nil && *q.AppliedRule < len(q.Action.Suggestions):
		r := actiontext.Describe(q.Action.Suggestions[*q.AppliedRule])
		return ":white_check_mark: Allowed by " + who + ", and not asked again " + escClip(r.Where+" for "+r.What, max)
	}
	return ":white_check_mark: Allowed as asked by " + who
}

// renderFullAction is page page of the whole action (the command or
// arguments, then the diff) in a read-only modal, with a button to the
// next page while there is one.
func renderFullAction(q *domain.Question, page int) slack.ModalViewRequest {
	pages := fullActionPages(q)
	page = max(0, min(page, len(pages)-1))
	var blocks []slack.Block
	head := fmt.Sprintf("*%s* — page %d of %d", escape(oneLine(clip(q.Action.Tool, 200))), page+1, len(pages))
	blocks = append(blocks, slack.NewSectionBlock(mrkdwn(head), nil, nil))
	blocks = append(blocks, codeBlocks(pages[page])...)
	if page+1 < len(pages) {
		next := slack.NewButtonBlockElement(fmt.Sprintf("%s:%d", actFullAction, page+1), "next", plain("Next page →"))
		blocks = append(blocks, slack.NewActionBlock(blockID(q.ID, "page"), next))
	}
	return slack.ModalViewRequest{
		Type:       slack.VTModal,
		Title:      plain("Full action"),
		Close:      plain("Close"),
		Blocks:     slack.Blocks{BlockSet: blocks},
		CallbackID: fullCallback,
	}
}

// fullActionPages cuts the whole action into pages a modal holds.
func fullActionPages(q *domain.Question) []string {
	args, bash := actiontext.Arguments(q.Action)
	text := args
	if bash {
		text = "$ " + args
	}
	if q.Action.Diff != "" {
		if text != "" {
			text += "\n\n"
		}
		text += q.Action.Diff
	}
	// A modal takes maxBlocksText units; keep room for the heading and
	// each section's fences.
	pages := actiontext.Pages(text, maxBlocksText-500, codeCost)
	if len(pages) == 0 {
		pages = []string{""}
	}
	return pages
}
