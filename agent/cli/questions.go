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

	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/agent/internal/termsafe"
	"github.com/askbridge/askbridge/domain"
)

const questionsUsage = `usage: askbridge questions <command> [flags]

commands:
  list [--all | --status S] [--json]   pending questions of the project, every one, oldest first
    [--limit N [--cursor C]]           one page of N instead, and the command for the next
  show ID [--json]                     one question with its numbered options
  answer ID N                          answer with option N (as numbered by show)
  answer ID 1,3                        several options of a multi-select item
  answer ID -m "free text"             answer in your own words
  answer ID N -m "note"                option N with a note (multi-select: N and the note); on an
                                       approval N is its Deny option, or leave N out: it denies
                                       with the note as the reason, exactly as typed (as --deny)
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
the ask message print it; a trailing … (or ...) is ignored.

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
	fmt.Fprintf(a.stderr, "askbridge questions: unknown command %q\n%s\n", args[0], questionsUsage)
	return ExitUsage
}

func (a *app) qList(ctx context.Context, args []string) int {
	const usage = "usage: askbridge questions list [--all | --status S] [--json] [--limit N [--cursor C]]"
	fs := newFlags("questions list", a.stderr, usage)
	all := fs.Bool("all", false, "every state, not only pending")
	status := fs.String("status", "pending", "pending, answered, cancelled or expired")
	asJSON := fs.Bool("json", false, "print JSON")
	limit := fs.Int("limit", 0, "list one page of at most `N` questions (1-1000) instead of every one")
	cursor := fs.String("cursor", "", "the page after the one that printed this `cursor` (with --limit)")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(a.stderr, "askbridge questions list: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	if *limit < 0 || *limit > client.MaxPage || (*cursor != "" && *limit == 0) {
		fmt.Fprintf(a.stderr, "askbridge questions list: --limit takes a number from 1 to %d, and --cursor needs --limit\n%s\n", client.MaxPage, usage)
		return ExitUsage
	}
	st := domain.Status(*status)
	if *all {
		st = ""
	}
	what := "questions"
	if st != "" {
		what = string(st) + " questions"
	}
	var qs []*domain.Question
	next := ""
	if *limit > 0 {
		page, err := a.env.Client().ListPage(ctx, client.ListOptions{Status: st, Limit: *limit, Cursor: *cursor})
		if err != nil {
			return a.apiFailure("questions list", err)
		}
		qs, next = page.Questions, page.NextCursor
	} else {
		var err error
		if qs, err = a.env.Client().List(ctx, st); err != nil {
			return a.apiFailure("questions list", err)
		}
	}
	if *asJSON {
		if *limit > 0 {
			return a.printJSON(map[string]any{"questions": qs, "next_cursor": next})
		}
		return a.printJSON(map[string]any{"questions": qs})
	}
	// How many, on stderr: stdout stays the table alone.
	switch {
	case *limit == 0 && len(qs) == 0:
		fmt.Fprintf(a.stderr, "no %s in project %s\n", what, a.env.Project)
	case *limit == 0:
		fmt.Fprintf(a.stderr, "%s in project %s, oldest first\n", countOf(len(qs), what), a.env.Project)
	case next == "":
		fmt.Fprintf(a.stderr, "%s on this page, the last one\n", countOf(len(qs), what))
	default:
		fmt.Fprintf(a.stderr, "%s on this page; more follow: askbridge questions list%s --limit %d --cursor %s\n",
			countOf(len(qs), what), listFlags(*all, st), *limit, next)
	}
	if len(qs) == 0 {
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
		if q.Status == domain.StatusPending {
			exp = "in " + domain.HumanDuration(q.ExpiresAt.Sub(now))
		}
		kind := q.Kind
		if kind == "" {
			kind = domain.KindQuestion
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

// countOf says how many: "1 pending question", "10000 pending questions".
func countOf(n int, what string) string {
	if n == 1 {
		return "1 " + strings.TrimSuffix(what, "s")
	}
	return strconv.Itoa(n) + " " + what
}

// listFlags repeats the state a list was asked for, for the next page's
// command.
func listFlags(all bool, st domain.Status) string {
	switch {
	case all:
		return " --all"
	case st != domain.StatusPending:
		return " --status " + string(st)
	}
	return ""
}

func (a *app) qShow(ctx context.Context, args []string) int {
	fs := newFlags("questions show", a.stderr, "usage: askbridge questions show ID [--json]")
	asJSON := fs.Bool("json", false, "print the record as JSON")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(a.stderr, "usage: askbridge questions show ID [--json]")
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
func (a *app) render(q *domain.Question) {
	w := a.stdout
	kind := firstNonEmpty(q.Kind, domain.KindQuestion)
	fmt.Fprintf(w, "%s %s (%s)\n", strings.ToUpper(kind[:1])+kind[1:], q.ID, q.Status)
	fmt.Fprintf(w, "agent: %s   run: %s\n", firstNonEmpty(q.AgentName, q.AgentID, "-"), q.RunID)
	if q.Status == domain.StatusPending {
		fmt.Fprintf(w, "expires: %s (in %s)\n", q.ExpiresAt.Format(time.RFC3339), domain.HumanDuration(q.ExpiresAt.Sub(a.now())))
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
	if img := q.ContextImage; img != nil {
		fmt.Fprintf(w, "picture: %s <%s>\n", img.Alt, img.URL)
	}
	if h := domain.HistoryText(q.History, a.now()); h != "" && q.Status == domain.StatusPending {
		fmt.Fprintf(w, "\n%s\n", h)
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
		if c := domain.ConditionText(q.Questions, it.ShowIf); c != "" {
			fmt.Fprintf(w, "   (%s; otherwise it takes no argument)\n", c)
		}
		if img := it.Image; img != nil {
			fmt.Fprintf(w, "   picture: %s <%s>\n", img.Alt, img.URL)
		}
		if r := it.Other; r != nil {
			fmt.Fprintf(w, "   (your own answer: %s)\n", r.Describe())
		}
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
			if o.Default {
				line += " (default: - takes it)"
			}
			if o.Image != nil {
				line += fmt.Sprintf(" [picture: %s <%s>]", o.Image.Alt, o.Image.URL)
			}
			fmt.Fprintln(w, line)
		}
	}
	switch q.Status {
	case domain.StatusPending:
		fmt.Fprintf(w, "\nto dismiss it without an answer: askbridge questions cancel %s\n", q.ID)
	case domain.StatusAnswered:
		by := "someone"
		if q.RespondedBy != nil {
			by = q.RespondedBy.String()
		}
		fmt.Fprintf(w, "\nanswered by %s:\n", by)
		for _, it := range q.Questions {
			if a, ok := q.Answers[it.Question]; ok {
				fmt.Fprintf(w, "   %s → %s\n", it.Question, a)
			}
		}
		if q.Reason != "" { // denied with a note
			fmt.Fprintf(w, "   reason: %s\n", q.Reason)
		}
		for _, s := range q.Skipped {
			fmt.Fprintf(w, "   %s: %s\n", s.Question, s.Reason)
		}
	case domain.StatusCancelled:
		// The line every copy shows, with who dismissed it and the note.
		fmt.Fprintf(w, "\n%s\n", domain.OutcomeLine(q))
	case domain.StatusExpired:
		fmt.Fprintf(w, "\nexpired at %s without an answer\n", q.ExpiresAt.Format(time.RFC3339))
	}
}

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

func (a *app) qCancel(ctx context.Context, args []string) int {
	fs := newFlags("questions cancel", a.stderr, "usage: askbridge questions cancel ID [--reason user|agent] [--note TEXT]")
	reason := fs.String("reason", domain.CancelUser, "user (a person dismissed it) or agent (the runtime withdrew it)")
	note := fs.String("note", "", "why, in a few words: kept on the record and shown on every copy (at most 500 characters)")
	asJSON := fs.Bool("json", false, "print the record as JSON")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(a.stderr, "usage: askbridge questions cancel ID [--reason user|agent] [--note TEXT]")
		return ExitUsage
	}
	if *reason != domain.CancelUser && *reason != domain.CancelAgent {
		fmt.Fprintf(a.stderr, "askbridge questions cancel: --reason must be user or agent, got %q\n", *reason)
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

// printJSON writes v as indented JSON, with the characters a terminal
// would act on as \u escapes (termsafe.JSON): the same document.
func (a *app) printJSON(v any) int {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		fmt.Fprintf(a.stderr, "askbridge: %v\n", err)
		return ExitError
	}
	if _, err := a.rawOut.Write(append(termsafe.JSON(b), '\n')); err != nil {
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
	const usage = "usage: askbridge questions audit [ID] [--jsonl]"
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
	if fs.NArg() == 1 && typedID(id) == "" {
		// `audit ""`: an id was meant (an unset "$id"), not the whole project.
		return a.idFailure("questions audit", noID)
	}
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
		q := domain.ShortID(e.QuestionID)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.At.Local().Format("2006-01-02 15:04:05"), e.Type, by, q, e.Detail)
	}
	tw.Flush()
	return ExitOK
}
