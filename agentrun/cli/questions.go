package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/askbridge/askbridge/core"
)

const questionsUsage = `usage: bridge questions <command> [flags]

commands:
  list [--all | --status S] [--json]   pending questions of the project, oldest first
  show ID [--json]                     one question with its numbered options
  answer ID N                          answer with option N (as numbered by show)
  answer ID 1,3                        several options of a multi-select item
  answer ID -m "free text"             answer in your own words
  answer ID N -m "note"                option N; on an approval, Deny with the note as feedback
  answer ID 2 1,3 "text"               a question with several items: one argument per item
  answer ID <options+1>                the last choice shown, "Cancel": dismiss the question
  cancel ID [--reason user|agent]      dismiss (user, default) or withdraw (agent)

Configured by BRIDGE_URL, BRIDGE_TOKEN, BRIDGE_PROJECT.`

func (a *app) questions(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(a.stderr, questionsUsage)
		return ExitUsage
	}
	switch args[0] {
	case "list", "ls":
		return a.qList(ctx, args[1:])
	case "show":
		return a.qShow(ctx, args[1:])
	case "answer", "respond":
		return a.qAnswer(ctx, args[1:])
	case "cancel", "dismiss":
		return a.qCancel(ctx, args[1:])
	case "-h", "--help", "help":
		fmt.Fprintln(a.stdout, questionsUsage)
		return ExitOK
	}
	fmt.Fprintf(a.stderr, "bridge questions: unknown command %q\n%s\n", args[0], questionsUsage)
	return ExitUsage
}

func (a *app) qList(ctx context.Context, args []string) int {
	fs := newFlags("questions list", a.stderr, "usage: bridge questions list [--all | --status S] [--json]")
	all := fs.Bool("all", false, "every state, not only pending")
	status := fs.String("status", "pending", "pending, answered, cancelled or expired")
	asJSON := fs.Bool("json", false, "print JSON")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(a.stderr, "bridge questions list: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	st := core.Status(*status)
	if *all {
		st = ""
	}
	qs, err := a.env.Client().List(ctx, st)
	if err != nil {
		return a.apiFailure("questions list", err)
	}
	if *asJSON {
		return a.printJSON(map[string]any{"questions": qs})
	}
	if len(qs) == 0 {
		fmt.Fprintf(a.stderr, "no %squestions in project %s\n", map[bool]string{true: "", false: string(st) + " "}[st == ""], a.env.Project)
		return ExitOK
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSTATUS\tEXPIRES\tAGENT\tQUESTION")
	now := a.now()
	for _, q := range qs {
		exp := "-"
		if q.Status == core.StatusPending {
			exp = "in " + core.HumanDuration(q.ExpiresAt.Sub(now))
		}
		kind := q.Kind
		if kind == "" {
			kind = core.KindQuestion
		}
		text := ""
		if len(q.Questions) > 0 {
			text = shorten(oneLine(q.Questions[0].Question), 70)
			if len(q.Questions) > 1 {
				text += fmt.Sprintf(" (+%d more)", len(q.Questions)-1)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", q.ID, kind, q.Status, exp, firstNonEmpty(q.AgentName, q.AgentID, "-"), text)
	}
	_ = tw.Flush()
	return ExitOK
}

func (a *app) qShow(ctx context.Context, args []string) int {
	fs := newFlags("questions show", a.stderr, "usage: bridge questions show ID [--json]")
	asJSON := fs.Bool("json", false, "print the record as JSON")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(a.stderr, "usage: bridge questions show ID [--json]")
		return ExitUsage
	}
	q, err := a.env.Client().Get(ctx, fs.Arg(0))
	if err != nil {
		return a.apiFailure("questions show", err)
	}
	if *asJSON {
		return a.printJSON(q)
	}
	a.render(q)
	return ExitOK
}

// render prints a question for an operator: the real texts, numbered
// options and a last "Cancel" choice per item.
func (a *app) render(q *core.Question) {
	w := a.stdout
	kind := firstNonEmpty(q.Kind, core.KindQuestion)
	fmt.Fprintf(w, "%s %s (%s)\n", strings.ToUpper(kind[:1])+kind[1:], q.ID, q.Status)
	fmt.Fprintf(w, "agent: %s   run: %s\n", firstNonEmpty(q.AgentName, q.AgentID, "-"), q.RunID)
	if q.Status == core.StatusPending {
		fmt.Fprintf(w, "expires: %s (in %s)\n", q.ExpiresAt.Format(time.RFC3339), core.HumanDuration(q.ExpiresAt.Sub(a.now())))
	}
	for _, t := range q.Targets {
		line := "posted: " + t.Platform + " " + t.Channel
		if t.URL != "" {
			line += " " + t.URL
		}
		if t.Error != "" {
			line += " (failed: " + t.Error + ")"
		}
		fmt.Fprintln(w, line)
	}
	if q.Context != "" {
		fmt.Fprintf(w, "\n%s\n", q.Context)
	}
	for i, it := range q.Questions {
		fmt.Fprintln(w)
		head := ""
		if it.Header != "" {
			head = "[" + it.Header + "] "
		}
		prefix := ""
		if len(q.Questions) > 1 {
			prefix = strconv.Itoa(i+1) + ". "
		}
		fmt.Fprintf(w, "%s%s%s\n", prefix, head, it.Question)
		switch {
		case it.OpenEnded():
			fmt.Fprintln(w, "   (free text: answer with -m \"...\")")
		case it.MultiSelect:
			fmt.Fprintln(w, "   (choose one or more, e.g. 1,3; or your own words with -m)")
		}
		for j, o := range it.Options {
			line := fmt.Sprintf("   %d) %s", j+1, o.Label)
			if o.Description != "" {
				line += " — " + o.Description
			}
			if o.Recommended {
				line += " (recommended)"
			}
			fmt.Fprintln(w, line)
		}
		fmt.Fprintf(w, "   %d) Cancel — dismiss the question without an answer\n", len(it.Options)+1)
	}
	switch q.Status {
	case core.StatusAnswered:
		by := "someone"
		if q.RespondedBy != nil {
			by = q.RespondedBy.String()
		}
		fmt.Fprintf(w, "\nanswered by %s:\n", by)
		for _, it := range q.Questions {
			fmt.Fprintf(w, "   %s → %s\n", it.Question, q.Answers[it.Question])
		}
	case core.StatusCancelled:
		fmt.Fprintf(w, "\ncancelled (%s)\n", q.CancelReason)
	case core.StatusExpired:
		fmt.Fprintf(w, "\nexpired at %s without an answer\n", q.ExpiresAt.Format(time.RFC3339))
	}
}

func (a *app) qAnswer(ctx context.Context, args []string) int {
	const usage = `usage: bridge questions answer ID N | N,M | -m "text" | N -m "note"   (see bridge questions --help)`
	fs := newFlags("questions answer", a.stderr, usage)
	note := fs.String("m", "", "free text answer, or the feedback of a Deny")
	asJSON := fs.Bool("json", false, "print the response as JSON")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() < 1 {
		fmt.Fprintln(a.stderr, usage)
		return ExitUsage
	}
	id, picks := fs.Arg(0), fs.Args()[1:]
	c := a.env.Client()
	q, err := c.Get(ctx, id)
	if err != nil {
		return a.apiFailure("questions answer", err)
	}
	answers, cancel, err := choose(q, picks, *note)
	if err != nil {
		fmt.Fprintf(a.stderr, "bridge questions answer: %v\n", err)
		return ExitUsage
	}
	if cancel {
		cq, err := c.Cancel(ctx, id, core.CancelUser)
		if err != nil {
			return a.apiFailure("questions answer", err)
		}
		if *asJSON {
			return a.printJSON(cq)
		}
		fmt.Fprintf(a.stdout, "question %s dismissed\n", cq.ID)
		return ExitOK
	}
	res, err := c.Respond(ctx, id, core.RespondRequest{Answers: answers})
	if err != nil {
		return a.apiFailure("questions answer", err)
	}
	if *asJSON {
		return a.printJSON(res)
	}
	for _, it := range q.Questions {
		fmt.Fprintf(a.stdout, "answered %q: %s\n", it.Question, strings.Join(answers[it.Question], ", "))
	}
	if res.RunID != "" && res.RunID != q.RunID {
		fmt.Fprintf(a.stdout, "the run continues as %s\n", res.RunID)
	}
	return ExitOK
}

// choose maps an operator's picks (one argument per item: "2", "1,3", or
// free text for several items) and note to the answers of a respond
// request. cancel is true when the pick is the "Cancel" choice.
func choose(q *core.Question, picks []string, note string) (answers map[string]core.StringList, cancel bool, err error) {
	items := q.Questions
	answers = map[string]core.StringList{}
	if len(items) == 1 {
		it := items[0]
		if len(picks) > 1 {
			return nil, false, fmt.Errorf("one argument expected after the id (e.g. 2 or 1,3), got %d; free text goes with -m", len(picks))
		}
		if len(picks) == 0 {
			if strings.TrimSpace(note) == "" {
				return nil, false, fmt.Errorf("give an option number (see bridge questions show %s) or -m \"text\"", q.ID)
			}
			answers[it.Question] = core.StringList{note}
			return answers, false, nil
		}
		labels, cancel, err := numbered(it, picks[0])
		if err != nil || cancel {
			return nil, cancel, err
		}
		if strings.TrimSpace(note) != "" {
			switch {
			case q.Kind == core.KindApproval:
				if len(labels) == 1 && strings.EqualFold(labels[0], "Allow") {
					return nil, false, fmt.Errorf("a note goes with Deny (it becomes the agent's feedback), not with Allow")
				}
				// Free text denies, with the text as the agent's feedback.
				labels = []string{note}
			case it.MultiSelect:
				labels = append(labels, note)
			default:
				return nil, false, fmt.Errorf("this item takes one answer: an option number or -m \"text\", not both")
			}
		}
		answers[it.Question] = labels
		return answers, false, nil
	}
	if note != "" {
		return nil, false, fmt.Errorf("this question has %d items: give one argument per item instead of -m", len(items))
	}
	if len(picks) != len(items) {
		return nil, false, fmt.Errorf("this question has %d items: give one argument per item (a number such as 2, numbers such as 1,3, or free text), got %d", len(items), len(picks))
	}
	for i, it := range items {
		if !isNumbers(picks[i]) {
			answers[it.Question] = core.StringList{picks[i]}
			continue
		}
		labels, c, err := numbered(it, picks[i])
		if err != nil {
			return nil, false, fmt.Errorf("item %d: %w", i+1, err)
		}
		if c {
			return nil, true, nil
		}
		answers[it.Question] = labels
	}
	return answers, false, nil
}

// numbered maps "2" or "1,3" to option labels; options+1 is Cancel.
func numbered(it core.Item, pick string) (labels []string, cancel bool, err error) {
	if !isNumbers(pick) {
		return nil, false, fmt.Errorf("%q is not an option number (1-%d); free text goes with -m", pick, len(it.Options)+1)
	}
	seen := map[int]bool{}
	for _, p := range strings.Split(pick, ",") {
		n, _ := strconv.Atoi(strings.TrimSpace(p))
		switch {
		case n == len(it.Options)+1:
			cancel = true
		case n < 1 || n > len(it.Options)+1:
			return nil, false, fmt.Errorf("option %d does not exist: choose 1-%d (%d = Cancel)", n, len(it.Options)+1, len(it.Options)+1)
		case !seen[n]:
			seen[n] = true
			labels = append(labels, it.Options[n-1].Label)
		}
	}
	if cancel && len(labels) > 0 {
		return nil, false, fmt.Errorf("%d is Cancel and cannot be combined with options", len(it.Options)+1)
	}
	if !it.MultiSelect && len(labels) > 1 {
		return nil, false, fmt.Errorf("this item takes one answer, got %d", len(labels))
	}
	return labels, cancel, nil
}

func isNumbers(s string) bool {
	if s == "" {
		return false
	}
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			return false
		}
		if _, err := strconv.Atoi(p); err != nil {
			return false
		}
	}
	return true
}

func (a *app) qCancel(ctx context.Context, args []string) int {
	fs := newFlags("questions cancel", a.stderr, "usage: bridge questions cancel ID [--reason user|agent]")
	reason := fs.String("reason", core.CancelUser, "user (a person dismissed it) or agent (the runtime withdrew it)")
	asJSON := fs.Bool("json", false, "print the record as JSON")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(a.stderr, "usage: bridge questions cancel ID [--reason user|agent]")
		return ExitUsage
	}
	if *reason != core.CancelUser && *reason != core.CancelAgent {
		fmt.Fprintf(a.stderr, "bridge questions cancel: --reason must be user or agent, got %q\n", *reason)
		return ExitUsage
	}
	q, err := a.env.Client().Cancel(ctx, fs.Arg(0), *reason)
	if err != nil {
		return a.apiFailure("questions cancel", err)
	}
	if *asJSON {
		return a.printJSON(q)
	}
	fmt.Fprintf(a.stdout, "question %s cancelled (%s)\n", q.ID, q.CancelReason)
	return ExitOK
}

func (a *app) printJSON(v any) int {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(a.stderr, "bridge: %v\n", err)
		return ExitError
	}
	return ExitOK
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
