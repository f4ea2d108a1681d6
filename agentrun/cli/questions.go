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
  answer ID 2 1,3 "text"               a question with several items: one argument per item;
                                       for an open-ended item the argument is always its text
  answer ID --text 1="3" 1,3 "text"    free text for item N, even one that looks like a number;
                                       the other items take the arguments, in order
  answer ID --edit '{"command":"ls"}'  approve a tool call with other arguments (or --edit key=value,
                                       repeatable); only for an approval that carries an action
  answer ID --always N                 allow, and accept the action's "always allow" choice N
  answer ID --deny "reason"            deny an approval, the reason being the agent's feedback
  cancel ID [--reason user|agent]      dismiss (user, default) or withdraw (agent); answer
    [--note TEXT]                      never dismisses; --note says why, on every copy
  audit [ID] [--jsonl]                 the audit trail of one question (or the project), oldest first

ID is the full id or any unique prefix of it (at least 4 characters), as list, audit and
the ask message print it.

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
	case "audit":
		return a.qAudit(ctx, args[1:])
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
	ids := make([]string, len(qs))
	for i, q := range qs {
		ids[i] = q.ID
	}
	short := shortIDs(ids)
	for i, q := range qs {
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", short[i], kind, q.Status, exp, firstNonEmpty(q.AgentName, q.AgentID, "-"), text)
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
	id, err := a.resolveID(ctx, fs.Arg(0), false)
	if err != nil {
		return a.idFailure("questions show", err)
	}
	q, err := a.env.Client().Get(ctx, id)
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
	renderAction(w, q)
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
			if len(q.Questions) > 1 {
				fmt.Fprintf(w, "   (free text: this item's argument, or --text %d=\"...\")\n", i+1)
			} else {
				fmt.Fprintln(w, "   (free text: answer with -m \"...\")")
			}
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
	}
	switch q.Status {
	case core.StatusPending:
		fmt.Fprintf(w, "\nto dismiss it without an answer: bridge questions cancel %s\n", q.ID)
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
	const usage = `usage: bridge questions answer ID N | N,M | -m "text" | N -m "note" | --text ITEM=TEXT ...   (see bridge questions --help)`
	fs := newFlags("questions answer", a.stderr, usage)
	note := fs.String("m", "", "free text answer, or the feedback of a Deny")
	texts := itemTexts{}
	fs.Var(texts, "text", "`ITEM=TEXT`: free text for item ITEM (1-based), even text that looks like a number; repeatable")
	asJSON := fs.Bool("json", false, "print the response as JSON")
	var edits editFlags
	fs.Var(&edits, "edit", "approve with other arguments: a JSON object, or key=value for one argument; repeatable")
	always := fs.Int("always", 0, "allow, accepting the action's \"always allow\" choice `N` (as numbered by show)")
	deny := fs.String("deny", "", "deny the approval with this `reason` as the agent's feedback")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if len(edits) > 0 || *always != 0 || *deny != "" {
		return a.qDecide(ctx, fs.Args(), edits, *always, *deny, *asJSON)
	}
	if fs.NArg() < 1 {
		fmt.Fprintln(a.stderr, usage)
		return ExitUsage
	}
	id, err := a.resolveID(ctx, fs.Arg(0), true)
	if err != nil {
		return a.idFailure("questions answer", err)
	}
	picks := fs.Args()[1:]
	c := a.env.Client()
	q, err := c.Get(ctx, id)
	if err != nil {
		return a.apiFailure("questions answer", err)
	}
	answers, err := choose(q, picks, *note, texts)
	if err != nil {
		fmt.Fprintf(a.stderr, "bridge questions answer: %v\n", err)
		return ExitUsage
	}
	res, err := c.Respond(ctx, q.ID, core.RespondRequest{Answers: answers})
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

// itemTexts collects --text ITEM=TEXT: free text per item (1-based).
type itemTexts map[int]string

func (t itemTexts) String() string { return "" }

func (t itemTexts) Set(v string) error {
	k, text, ok := strings.Cut(v, "=")
	n, err := strconv.Atoi(strings.TrimSpace(k))
	if !ok || err != nil || n < 1 {
		return fmt.Errorf("want ITEM=TEXT with ITEM the item's number (1, 2, …), got %q", v)
	}
	if _, dup := t[n]; dup {
		return fmt.Errorf("item %d has two --text answers", n)
	}
	t[n] = text
	return nil
}

// choose maps an operator's picks (one argument per item not given with
// --text: "2", "1,3", or free text), note (-m) and texts (--text) to the
// answers of a respond request. It never dismisses: that is `cancel`.
func choose(q *core.Question, picks []string, note string, texts itemTexts) (map[string]core.StringList, error) {
	items := q.Questions
	answers := map[string]core.StringList{}
	for n := range texts {
		if n > len(items) {
			return nil, fmt.Errorf("--text %d=…: this question has %d item(s)", n, len(items))
		}
	}
	if len(items) == 1 {
		it := items[0]
		if text, ok := texts[1]; ok {
			if note != "" || len(picks) > 0 {
				return nil, fmt.Errorf("--text 1=… is the whole answer: give no option number or -m with it")
			}
			note = text
		}
		if len(picks) > 1 {
			return nil, fmt.Errorf("one argument expected after the id (e.g. 2 or 1,3), got %d; free text goes with -m", len(picks))
		}
		if len(picks) == 0 || it.OpenEnded() {
			text := note
			if len(picks) == 1 {
				if note != "" {
					return nil, fmt.Errorf("this item is open-ended: give its answer once, as an argument or with -m")
				}
				text = picks[0]
			}
			if strings.TrimSpace(text) == "" {
				return nil, fmt.Errorf("give an option number (see bridge questions show %s) or -m \"text\"", q.ID)
			}
			answers[it.Question] = core.StringList{text}
			return answers, nil
		}
		labels, err := numbered(q, it, picks[0], true)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(note) != "" {
			switch {
			case q.Kind == core.KindApproval:
				if len(labels) == 1 && strings.EqualFold(labels[0], "Allow") {
					return nil, fmt.Errorf("a note goes with Deny (it becomes the agent's feedback), not with Allow")
				}
				// Free text denies, with the text as the agent's feedback.
				labels = []string{note}
			case it.MultiSelect:
				labels = append(labels, note)
			default:
				return nil, fmt.Errorf("this item takes one answer: an option number or -m \"text\", not both")
			}
		}
		answers[it.Question] = labels
		return answers, nil
	}
	if note != "" {
		return nil, fmt.Errorf("this question has %d items: give one argument per item (free text for item N: --text N=\"...\") instead of -m", len(items))
	}
	var rest []int // the items the arguments answer, in order
	for i := range items {
		if _, ok := texts[i+1]; !ok {
			rest = append(rest, i)
		}
	}
	if len(picks) != len(rest) {
		given := ""
		if len(texts) > 0 {
			given = fmt.Sprintf(" (%d given with --text)", len(texts))
		}
		return nil, fmt.Errorf("this question has %d items%s: give one argument for each of the other %d (a number such as 2, numbers such as 1,3, or free text), got %d",
			len(items), given, len(rest), len(picks))
	}
	for n, text := range texts {
		if strings.TrimSpace(text) == "" {
			return nil, fmt.Errorf("--text %d= is empty", n)
		}
		answers[items[n-1].Question] = core.StringList{text}
	}
	for k, i := range rest {
		it, pick := items[i], picks[k]
		if it.OpenEnded() || !isNumbers(pick) {
			answers[it.Question] = core.StringList{pick}
			continue
		}
		labels, err := numbered(q, it, pick, false)
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i+1, err)
		}
		answers[it.Question] = labels
	}
	return answers, nil
}

// numbered maps "2" or "1,3" to option labels.
func numbered(q *core.Question, it core.Item, pick string, single bool) ([]string, error) {
	if !isNumbers(pick) {
		hint := "free text goes with -m"
		if !single {
			hint = "free text goes as the item's argument"
		}
		return nil, fmt.Errorf("%q is not an option number (1-%d); %s", pick, len(it.Options), hint)
	}
	var labels []string
	seen := map[int]bool{}
	for _, p := range strings.Split(pick, ",") {
		n, _ := strconv.Atoi(strings.TrimSpace(p))
		switch {
		case n < 1 || n > len(it.Options):
			return nil, fmt.Errorf("option %d does not exist: choose 1-%d (free text that looks like a number: --text N=%q; to dismiss the question: bridge questions cancel %s)",
				n, len(it.Options), p, q.ID)
		case !seen[n]:
			seen[n] = true
			labels = append(labels, it.Options[n-1].Label)
		}
	}
	if !it.MultiSelect && len(labels) > 1 {
		return nil, fmt.Errorf("this item takes one answer, got %d", len(labels))
	}
	return labels, nil
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
	fs := newFlags("questions cancel", a.stderr, "usage: bridge questions cancel ID [--reason user|agent] [--note TEXT]")
	reason := fs.String("reason", core.CancelUser, "user (a person dismissed it) or agent (the runtime withdrew it)")
	note := fs.String("note", "", "why, in a few words: kept on the record and shown on every copy (at most 500 characters)")
	asJSON := fs.Bool("json", false, "print the record as JSON")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(a.stderr, "usage: bridge questions cancel ID [--reason user|agent] [--note TEXT]")
		return ExitUsage
	}
	if *reason != core.CancelUser && *reason != core.CancelAgent {
		fmt.Fprintf(a.stderr, "bridge questions cancel: --reason must be user or agent, got %q\n", *reason)
		return ExitUsage
	}
	id, err := a.resolveID(ctx, fs.Arg(0), true)
	if err != nil {
		return a.idFailure("questions cancel", err)
	}
	q, err := a.env.Client().CancelWithNote(ctx, id, *reason, *note)
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

// qAudit prints the audit trail: a line per entry, or JSON lines (--jsonl)
// for export.
func (a *app) qAudit(ctx context.Context, args []string) int {
	const usage = "usage: bridge questions audit [ID] [--jsonl]"
	fs := newFlags("questions audit", a.stderr, usage)
	jsonl := fs.Bool("jsonl", false, "print one JSON object per line (for export)")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 1 {
		fmt.Fprintln(a.stderr, usage)
		return ExitUsage
	}
	id := fs.Arg(0)
	if id != "" {
		var err error
		if id, err = a.resolveID(ctx, id, false); err != nil {
			return a.idFailure("questions audit", err)
		}
	}
	entries, err := a.env.Client().Audit(ctx, id)
	if err != nil {
		return a.apiFailure("questions audit", err)
	}
	if *jsonl {
		enc := json.NewEncoder(a.stdout)
		enc.SetEscapeHTML(false)
		for _, e := range entries {
			enc.Encode(e)
		}
		return ExitOK
	}
	if len(entries) == 0 {
		fmt.Fprintln(a.stdout, "no audit entries")
		return ExitOK
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tEVENT\tBY\tQUESTION\tDETAIL")
	for _, e := range entries {
		by := "-"
		if e.By != nil {
			by = e.By.Platform + ":" + e.By.ID
		}
		q := core.ShortID(e.QuestionID)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.At.Local().Format("2006-01-02 15:04:05"), e.Type, by, q, e.Detail)
	}
	tw.Flush()
	return ExitOK
}
