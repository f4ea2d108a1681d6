package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/askbridge/askbridge/domain"
)

// qAnswer is `askbridge questions answer`: by option numbers, free text, or an
// approval's edit, always-allow choice or denial reason.
func (a *app) qAnswer(ctx context.Context, args []string) int {
	const usage = `usage: askbridge questions answer ID N | N,M | -m "text" | N -m "note" | --text ITEM=TEXT ...   (see askbridge questions --help)`
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
	if noted(q, *note, texts) {
		return a.denyWithNote(ctx, q, picks, *note, texts, *asJSON)
	}
	answers, err := choose(q, picks, *note, texts)
	if err != nil {
		fmt.Fprintf(a.stderr, "askbridge questions answer: %v\n", err)
		return ExitUsage
	}
	res, err := c.Respond(ctx, q.ID, domain.RespondRequest{Answers: answers})
	if err != nil {
		return a.apiFailure("questions answer", err)
	}
	if *asJSON {
		return a.printJSON(res)
	}
	verb := answeredVerb(q, answers)
	for _, it := range q.Questions {
		if _, ok := answers[it.Question]; !ok {
			fmt.Fprintf(a.stdout, "not asked %q\n", it.Question)
			continue
		}
		fmt.Fprintf(a.stdout, "%s %q: %s\n", verb, it.Question, strings.Join(answers[it.Question], ", "))
	}
	if res.RunID != "" && res.RunID != q.RunID {
		fmt.Fprintf(a.stdout, "the run continues as %s\n", res.RunID)
	}
	return ExitOK
}

// itemTexts collects --text ITEM=TEXT: free text per item (1-based).
type itemTexts map[int]string

// choose maps an operator's picks (one argument per item not given with
// --text: "2", "1,3", or free text), note (-m) and texts (--text) to the
// answers of a respond request. It never dismisses: that is `cancel`.
func choose(q *domain.Question, picks []string, note string, texts itemTexts) (map[string]domain.StringList, error) {
	items := q.Questions
	answers := map[string]domain.StringList{}
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
		if len(picks) == 1 && picks[0] == "-" && note == "" { // the defaults, as pre-selected elsewhere
			if d := domain.DefaultChoices(items)[0]; len(d) > 0 {
				answers[it.Question] = d
				return answers, nil
			}
			return nil, fmt.Errorf("- takes the defaults, but this question has none")
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
				return nil, fmt.Errorf("give an option number (see askbridge questions show %s) or -m \"text\"", q.ID)
			}
			answers[it.Question] = domain.StringList{text}
			return answers, nil
		}
		labels, err := numbered(q, it, picks[0], true)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(note) != "" {
			switch {
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
	for n, text := range texts {
		if strings.TrimSpace(text) == "" {
			return nil, fmt.Errorf("--text %d= is empty", n)
		}
	}
	// The arguments answer, in order, the items asked: an item whose
	// show_if the answers before it do not meet is not asked and takes no
	// argument.
	choices := make([][]string, len(items))
	next := 0
	for i, it := range items {
		if !domain.Shown(items, choices)[i] {
			if _, ok := texts[i+1]; ok {
				return nil, fmt.Errorf("--text %d=…: item %d is not asked (%s)", i+1, i+1, domain.ConditionText(items, it.ShowIf))
			}
			continue
		}
		var got []string
		switch text, ok := texts[i+1]; {
		case ok:
			got = []string{text}
		case next >= len(picks):
			return nil, fmt.Errorf("item %d (%s) is asked and needs an argument: a number such as 2, numbers such as 1,3, - for its defaults, or free text; %d given",
				i+1, shorten(oneLine(it.Question), 60), len(picks))
		default:
			pick := picks[next]
			next++
			switch {
			case pick == "-":
				got = domain.DefaultChoices(items)[i]
				if len(got) == 0 {
					return nil, fmt.Errorf("item %d: - takes its defaults, but it has none", i+1)
				}
			case it.OpenEnded() || !isNumbers(pick):
				got = []string{pick}
			default:
				labels, err := numbered(q, it, pick, false)
				if err != nil {
					return nil, fmt.Errorf("item %d: %w", i+1, err)
				}
				got = labels
			}
		}
		for _, s := range got {
			if problem := domain.FreeTextProblem(it, s); problem != "" {
				return nil, fmt.Errorf("item %d: %s", i+1, problem)
			}
		}
		choices[i] = got
		answers[it.Question] = got
	}
	if next < len(picks) {
		return nil, fmt.Errorf("%d argument(s) too many: the items asked, given these answers, take %d (items not asked take none)", len(picks)-next, next)
	}
	return answers, nil
}

// numbered maps "2" or "1,3" to option labels.
func numbered(q *domain.Question, it domain.Item, pick string, single bool) ([]string, error) {
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
			return nil, fmt.Errorf("option %d does not exist: choose 1-%d (free text that looks like a number: --text N=%q; to dismiss the question: askbridge questions cancel %s)",
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

// answeredVerb says what an answer did, as --deny and --edit say it: an
// approval decided by one answer was "allowed" or "denied"; anything else
// was "answered".
func answeredVerb(q *domain.Question, answers map[string]domain.StringList) string {
	if q.Kind != domain.KindApproval || q.ApprovalsRequired > 1 ||
		len(q.Questions) != 1 || q.Questions[0].MultiSelect || q.Questions[0].OpenEnded() {
		return "answered"
	}
	it := q.Questions[0]
	sent := answers[it.Question]
	if len(sent) != 1 {
		return "answered"
	}
	tones := domain.ItemTones(it)
	for j, o := range it.Options {
		if o.Label == sent[0] && j < len(tones) {
			switch tones[j] {
			case domain.ToneAllow:
				return "allowed"
			case domain.ToneDeny:
				return "denied"
			}
			return "answered"
		}
	}
	return "answered"
}

// noted reports whether text given with -m (or --text 1=) is the reason
// of a denial: on an approval with options, where typed text is never an
// answer (docs/approvals.md).
func noted(q *domain.Question, note string, texts itemTexts) bool {
	_, text := texts[1]
	return (note != "" || text) && q.Kind == domain.KindApproval && len(q.Questions) == 1 && !q.Questions[0].OpenEnded()
}

// denyWithNote is `answer ID [N] -m "note"` on an approval: it denies with
// the note as the reason, exactly as typed; N, when given, must be the
// option that denies.
func (a *app) denyWithNote(ctx context.Context, q *domain.Question, picks []string, note string, texts itemTexts, asJSON bool) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(a.stderr, "askbridge questions answer: "+format+"\n", args...)
		return ExitUsage
	}
	it := q.Questions[0]
	deny, ok := domain.DenyOption(it)
	if text, given := texts[1]; given && note == "" && len(texts) == 1 {
		note, texts = text, nil
	}
	switch {
	case len(texts) > 0:
		return fail("-m is the reason of a denial; give no --text with it")
	case !ok:
		return fail("no option of this approval denies, so -m cannot go with one; answer with an option number")
	case strings.TrimSpace(note) == "":
		return fail("-m is empty: say why you deny it")
	case len(picks) > 1:
		return fail("one option number at most with -m (the Deny option), got %d arguments", len(picks))
	case len(picks) == 1:
		labels, err := numbered(q, it, picks[0], true)
		if err != nil {
			return fail("%v", err)
		}
		if labels[0] != deny.Label {
			return fail("a note goes with %s (it is the agent's reason), not with %s", deny.Label, labels[0])
		}
	}
	req := domain.RespondRequest{Reason: &note}
	if q.Action != nil {
		req.Digest = q.Action.Digest // the action show printed
	}
	res, err := a.env.Client().Respond(ctx, q.ID, req)
	if err != nil {
		return a.apiFailure("questions answer", err)
	}
	if asJSON {
		return a.printJSON(res)
	}
	fmt.Fprintf(a.stdout, "denied with a note %q: %s\n", it.Question, note)
	if res.RunID != "" && res.RunID != q.RunID {
		fmt.Fprintf(a.stdout, "the run continues as %s\n", res.RunID)
	}
	return ExitOK
}
