package teams

import (
	"strings"

	"github.com/askbridge/askbridge/adapters/internal/actiontext"
	"github.com/askbridge/askbridge/adapters/internal/approval"
	"github.com/askbridge/askbridge/domain"
)

// actionBlocks show an approval's exact action: a line naming the tool
// (and the diff's size), the command or arguments, and a file edit's diff,
// as code, every line of the diff marked + or − as in the diff itself.
// What does not fit the level's budget is said in so many words ("diff:
// 300 lines, 212 shown") and linked (leftOut). A final copy keeps showing
// the action: it is what was decided.
func (r *cardRender) actionBlocks() []el {
	a := r.q.Action
	if a == nil {
		return nil
	}
	args, bash := actiontext.Arguments(a)
	tool, _ := clip(oneLine(a.Tool), domain.MaxToolLen)
	head := []el{run("Tool: ", el{"weight": "bolder"}), run(tool, el{"fontType": "monospace"})}
	if bash {
		head = append(head, run(" · command:"))
	}
	if a.Diff != "" {
		head = append(head, run(" · diff "+actiontext.DiffStat(actiontext.Fit(a.Diff, 1<<30, runeCount))))
	}
	out := []el{runs(head...)}
	budget := r.l.code
	argsRoom := budget
	if a.Diff != "" {
		argsRoom = min(runeCount(args)+1, budget/3)
	}
	what := "arguments"
	if bash {
		what = "command"
	}
	show := func(what, text string, room int, diff bool) {
		if text == "" {
			return
		}
		c := actiontext.Fit(text, room, runeCount)
		if c.Text != "" {
			out = append(out, codeBlock(c.Text, diff))
		}
		if m := actiontext.More(what, c); m != "" {
			r.cut = append(r.cut, m)
		}
	}
	show(what, args, argsRoom, false)
	if a.Diff != "" {
		show("diff", a.Diff, budget-min(runeCount(args), argsRoom), true)
	}
	return out
}

func runeCount(s string) int { return len([]rune(s)) }

// codeBlock shows text as code in one block: monospace, on an emphasised
// background; in a diff, added lines green and removed lines red, each
// keeping its + or − so the change reads without colour too. Lines of one
// kind share a run.
func codeBlock(text string, diff bool) el {
	lines := strings.SplitAfter(text, "\n")
	var inl []el
	var cur strings.Builder
	kind := ""
	flush := func() {
		if cur.Len() == 0 {
			return
		}
		st := el{"fontType": "monospace"}
		if kind != "" {
			st["color"] = kind
		}
		inl = append(inl, run(cur.String(), st))
		cur.Reset()
	}
	for _, l := range lines {
		k := ""
		if diff {
			switch {
			case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
				k = "accent"
			case strings.HasPrefix(l, "@@"):
				k = "accent"
			case strings.HasPrefix(l, "+"):
				k = "good"
			case strings.HasPrefix(l, "-"):
				k = "attention"
			}
		}
		if k != kind {
			flush()
			kind = k
		}
		cur.WriteString(l)
	}
	flush()
	if len(inl) == 0 {
		inl = append(inl, run(" ", el{"fontType": "monospace"}))
	}
	return el{"type": "Container", "style": "emphasis", "items": []el{runs(inl...)}}
}

// outcome is the final copy's line: who answered and what, or why the
// question closed, in the words of the other surfaces.
func (r *cardRender) outcome() el {
	line := outcomeLine(r.q)
	color := "good"
	switch {
	case r.q.Status != domain.StatusAnswered:
		color = "attention"
	default:
		if tone, _ := approval.Outcome(r.q); tone == approval.Deny {
			color = "attention"
		}
	}
	out := el{"type": "Container", "separator": true, "items": []el{
		runs(run(r.short("outcome", line, 6000), el{"weight": "bolder", "color": color})),
	}}
	return out
}

// outcomeLine says how q ended, "" while it is pending.
func outcomeLine(q *domain.Question) string {
	who := domain.PersonName(q.RespondedBy)
	switch q.Status {
	case domain.StatusAnswered:
		if q.Defaulted || q.ApprovalsRequired > 1 {
			return domain.OutcomeLine(q)
		}
		if line := decisionLine(q); line != "" {
			return line
		}
		if verb, note, ok := approval.Verdict(q); ok {
			line := verb + " by " + who
			if note != "" {
				line += ": " + note
			}
			return line
		}
		var parts []string
		for i, it := range q.Questions {
			ans, asked := q.Answers[it.Question]
			if !asked {
				continue
			}
			if len(q.Questions) > 1 {
				ans = itemName(it, i) + ": " + ans
			}
			parts = append(parts, ans)
		}
		return "Answered by " + who + ": " + strings.Join(parts, "; ")
	case domain.StatusExpired:
		return "Expired without an answer; the agent carries on without one."
	case domain.StatusCancelled:
		switch q.CancelReason {
		case domain.CancelUser:
			return "Dismissed by " + who + domain.NoteSuffix(q) + "."
		case domain.CancelSuperseded:
			return "Replaced by a newer question from this run."
		}
		return "Withdrawn by the agent" + domain.NoteSuffix(q) + "."
	}
	return ""
}

// decisionLine is how an allowed action approval ended: as asked, with
// edits (and what changed), with an "always allow" rule, or automatically
// by a rule. "" for anything else.
func decisionLine(q *domain.Question) string {
	d := q.Decision
	if d == nil || d.Behavior != domain.BehaviorAllow || q.Action == nil {
		return ""
	}
	who := domain.PersonName(q.RespondedBy)
	switch {
	case d.AutoRule != "":
		return "Allowed automatically by the route's rule " + d.AutoRule
	case d.Edited:
		return "Allowed with edits by " + who + ": " + oneLine(strings.Join(actiontext.Changes(q.Action.Tool, q.Action.Input, d.Input), "; "))
	case q.AppliedRule != nil && *q.AppliedRule < len(q.Action.Suggestions):
		rule := actiontext.Describe(q.Action.Suggestions[*q.AppliedRule])
		return "Allowed by " + who + ", and not asked again " + rule.Where + " for " + rule.What
	}
	return "Allowed as asked by " + who
}
