package discord

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/askbridge/askbridge/adapters/internal/actiontext"
	"github.com/askbridge/askbridge/domain"
	"github.com/bwmarrin/discordgo"
)

// How a copy shows the action of an approval (issue 18): the tool and its
// whole arguments (a Bash command in a code block, anything else as
// pretty JSON), a file edit's unified diff in a ```diff block (Discord
// colours its added and removed lines), and, when that does not fit the
// embed, an explicit "diff: 300 lines, 80 shown — full action: <link>".

// renderOpts is what rendering needs beyond the question: where the
// question page is, and whether the route lets people edit arguments.
type renderOpts struct {
	PublicURL string
	Edit      bool
	// Choices are the options picked so far per item, which decide the
	// conditional items shown (show_if); nil: the defaults.
	Choices [][]string
}

// renderOpts of q on this adapter.
func (a *Adapter) opts(q *domain.Question) renderOpts {
	o := renderOpts{PublicURL: a.cfg.PublicURL, Edit: true}
	if r, ok := a.router.Route(q.Route); !domain.EditAllowed(q, ok && r.NoEdit) {
		o.Edit = false
	}
	return o
}

// render is render with this adapter's options.
func (a *Adapter) render(q *domain.Question) message { return render(q, a.now(), a.opts(q)) }

// fullAction says where a person sees the whole action: the question page
// when the bridge has a public URL, else the CLI command.
func (o renderOpts) fullAction(q *domain.Question) string {
	if o.PublicURL != "" {
		return strings.TrimRight(o.PublicURL, "/") + "/questions/" + q.ID
	}
	return "`askbridge questions show " + q.ID + "`"
}

// hasAction reports whether q is a single-vote approval of a tool call,
// the kind that takes edits and "always allow" choices.
func hasAction(q *domain.Question) bool {
	return q.Action != nil && q.Kind == domain.KindApproval && len(q.Questions) == 1 && shapeOf(q) == shapeSingleButtons
}

// canEdit reports whether q's copy offers "Edit…".
func canEdit(q *domain.Question, o renderOpts) bool {
	return hasAction(q) && o.Edit && q.ApprovalsRequired < 2
}

// section is one code block of the action.
type section struct {
	lang, label, text string
}

// fence escapes a triple backtick inside a code block, which would end it.
func fence(s string) string { return strings.ReplaceAll(s, "```", "`\u200b``") }

func actionSections(a *domain.Action) []section {
	var out []section
	if cmd, rest, ok := actiontext.SplitCommand(a.Tool, a.Input); ok && a.Diff == "" {
		out = append(out, section{"sh", "command", cmd})
		if len(rest) > 0 {
			b, _ := json.Marshal(rest)
			out = append(out, section{"json", "other arguments", actiontext.Pretty(b)})
		}
		return out
	}
	if a.Diff != "" {
		if args := actiontext.WithoutDiffed(a.Tool, a.Input); string(args) != "{}" {
			out = append(out, section{"json", "arguments", actiontext.Pretty(args)})
		}
		return append(out, section{"diff", "diff", strings.TrimRight(a.Diff, "\n")})
	}
	return append(out, section{"json", "arguments", actiontext.Pretty(a.Input)})
}

// actionText renders q's action in at most budget runes: everything, or
// the head of each block that does not fit with a line saying how much is
// shown and where the rest is. Never cut silently.
func actionText(q *domain.Question, o renderOpts, budget int) string {
	a := q.Action
	head := "Tool: `" + strings.ReplaceAll(a.Tool, "`", "'") + "`"
	secs := actionSections(a)
	block := func(s section, text string) string { return "\n```" + s.lang + "\n" + fence(text) + "\n```" }
	full := head
	for _, s := range secs {
		full += block(s, s.text)
	}
	if utf8.RuneCountInString(full) <= budget {
		return full
	}
	where := o.fullAction(q)
	out := head
	left := budget - utf8.RuneCountInString(head)
	for i, s := range secs {
		text := fence(s.text)
		overhead := utf8.RuneCountInString(block(s, ""))
		// Later blocks keep room for their start and their note.
		reserve := 0
		for _, r := range secs[i+1:] {
			reserve += min(utf8.RuneCountInString(r.text), 200) + 160
		}
		if n := utf8.RuneCountInString(text); n+overhead <= left-reserve {
			out += block(s, s.text)
			left -= n + overhead
			continue
		}
		cut := actiontext.HeadLines
		if s.lang == "diff" {
			cut = actiontext.CutDiff // the start of both sides of each change
		}
		shownText, shown, total := cut(text, max(left-reserve-overhead-160, 0))
		note := fmt.Sprintf("\n%s: %d lines, %d shown — full action: %s", s.label, total, shown, where)
		if shown > 0 {
			out += "\n```" + s.lang + "\n" + shownText + "\n```"
		}
		out += note
		left = budget - utf8.RuneCountInString(out)
	}
	return out
}

// ruleButtons are the "always allow" choices of q's action that fit the
// rows left, and how many did not fit.
func ruleButtons(q *domain.Question, final bool, rowsLeft int) (rows []discordgo.MessageComponent, missing int) {
	if !hasAction(q) || q.ApprovalsRequired > 1 || len(q.Action.Suggestions) == 0 || rowsLeft <= 0 {
		return nil, 0
	}
	n := len(q.Action.Suggestions)
	perRow := 1
	if n > rowsLeft {
		perRow = maxButtonsPerRow
	}
	var cur []discordgo.MessageComponent
	for j, s := range q.Action.Suggestions {
		if len(rows) == rowsLeft {
			return rows, n - j
		}
		cur = append(cur, discordgo.Button{Label: domain.Shorten(actiontext.AlwaysAllowLabel(s), maxButtonLabel),
			Style: discordgo.SuccessButton, CustomID: customID(actRule, q.ID, 0, j), Disabled: final})
		if len(cur) == perRow || j == n-1 {
			rows = append(rows, discordgo.ActionsRow{Components: cur})
			cur = nil
		}
	}
	return rows, 0
}

// rulesNote lists, in the embed, the "always allow" choices whose button
// label had to be shortened or that found no button, so none is hidden.
func rulesNote(q *domain.Question, o renderOpts, shownButtons int) string {
	if !hasAction(q) || q.ApprovalsRequired > 1 || q.Status != domain.StatusPending {
		return ""
	}
	var b strings.Builder
	for j, s := range q.Action.Suggestions {
		l := actiontext.AlwaysAllowLabel(s)
		switch {
		case j >= shownButtons && o.PublicURL != "":
			fmt.Fprintf(&b, "\n%d. %s (no room for its button: choose it at %s)", j+1, l, o.fullAction(q))
		case j >= shownButtons:
			fmt.Fprintf(&b, "\n%d. %s (no room for its button: choose it with `askbridge questions answer %s --always %d`)", j+1, l, q.ID, j+1)
		case utf8.RuneCountInString(l) > maxButtonLabel:
			fmt.Fprintf(&b, "\n%d. %s", j+1, l)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "\n**Always allow choices in full:**" + b.String()
}

// actionOutcome is the outcome line of an answered approval of a tool
// call: allowed as asked, with edits (what changed), with a rule, or
// denied (with the reason). ok is false when the generic line applies.
func actionOutcome(q *domain.Question, o renderOpts) (string, bool) {
	d := q.Decision
	if q.Action == nil || d == nil || q.Status != domain.StatusAnswered || q.RespondedBy == nil || q.Defaulted || q.ApprovalsRequired > 1 {
		return "", false
	}
	by := q.RespondedBy.String()
	if d.Behavior != domain.BehaviorAllow {
		return "", false // the denial lines of adapters/internal/approval
	}
	var line string
	switch {
	case d.Edited && q.EditedAction != nil:
		line = "✅ Allowed with edits by " + by
		changes := strings.Join(actiontext.Changes(q.Action.Tool, q.Action.Input, q.EditedAction.Input), "; ")
		if utf8.RuneCountInString(line+changes) > maxContent-300 {
			line += " (what changed is too long to show here; see it at " + o.fullAction(q) + ")"
		} else {
			line += ": " + changes
		}
	default:
		line = "✅ Allowed by " + by + " as asked"
	}
	if q.AppliedRule != nil && *q.AppliedRule < len(q.Action.Suggestions) {
		s := q.Action.Suggestions[*q.AppliedRule]
		if !d.Edited {
			line = "✅ Allowed by " + by
		}
		line += ", and not asked again " + actiontext.RuleScope(s) + " for " + actiontext.RuleWords(s)
	}
	if utf8.RuneCountInString(line) > maxContent {
		line = domain.Shorten(line, maxContent-200) + " (the rest at " + o.fullAction(q) + ")"
	}
	return line, true
}
