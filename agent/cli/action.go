package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/askbridge/askbridge/domain"
)

// renderAction prints an approval's action in full: the tool, every
// argument (indented JSON, never cut), the diff of a file edit, the
// "always allow" choices and, once answered, the decision.
func renderAction(w io.Writer, q *domain.Question) {
	a := q.Action
	if a == nil {
		return
	}
	fmt.Fprintf(w, "\naction: %s   digest: %s\n", a.Tool, a.Digest)
	var in bytes.Buffer
	if json.Indent(&in, a.Input, "   ", "  ") == nil {
		fmt.Fprintf(w, "   %s\n", in.String())
	}
	if a.Diff != "" {
		fmt.Fprintln(w, "\ndiff:")
		fmt.Fprint(w, a.Diff)
	}
	if len(a.Suggestions) > 0 {
		fmt.Fprintln(w, "\nalways allow (answer with --always N):")
		for i, s := range a.Suggestions {
			// The words of every surface (domain.DescribeSuggestion), not the JSON.
			fmt.Fprintf(w, "   %d) %s\n", i+1, domain.DescribeSuggestion(s).Sentence())
		}
	}
	if q.Status == domain.StatusPending {
		fmt.Fprintln(w)
		// Offered only where the bridge takes an edit: the record tells
		// the action's allow_edit and a vote; a route's allow_edit: false
		// is not on the record, and the bridge refuses that edit itself.
		if domain.EditAllowed(q, false) && q.ApprovalsRequired < 2 {
			fmt.Fprintf(w, "to allow with other arguments: askbridge questions answer %s --edit '{...}' (or --edit key=value)\n", q.ID)
		}
		fmt.Fprintf(w, "to deny with a reason: askbridge questions answer %s --deny \"why\"\n", q.ID)
	}
	if d := q.Decision; d != nil {
		fmt.Fprintf(w, "\ndecision: %s", d.Behavior)
		switch {
		case d.AutoRule != "":
			fmt.Fprintf(w, " (auto-allow rule %s)", d.AutoRule)
		case d.Edited:
			fmt.Fprint(w, " with edited arguments")
		}
		if d.Message != "" {
			fmt.Fprintf(w, ": %s", d.Message)
		}
		fmt.Fprintln(w)
		if e := q.EditedAction; e != nil {
			var out bytes.Buffer
			_ = json.Indent(&out, e.Input, "   ", "  ")
			fmt.Fprintf(w, "edited by %s:\n   %s\n", personString(e.By), out.String())
		}
		for _, r := range d.Rules {
			fmt.Fprintf(w, "always allowed: %s\n", domain.DescribeSuggestion(r).Sentence())
		}
	}
}

func personString(p *domain.Person) string {
	if p == nil {
		return "someone"
	}
	return p.String()
}

// editFlags collects --edit: a JSON object (the whole new arguments) or
// key=value pairs changing single arguments (a value that is valid JSON,
// such as 3, true or {"a":1}, is taken as JSON, anything else as text).
type editFlags []string

func (e *editFlags) String() string     { return strings.Join(*e, " ") }
func (e *editFlags) Set(v string) error { *e = append(*e, v); return nil }

// editedInput applies the --edit values to the action's arguments.
func editedInput(a *domain.Action, edits editFlags) (json.RawMessage, error) {
	if a == nil {
		return nil, fmt.Errorf("--edit: this question carries no action to edit")
	}
	args := map[string]json.RawMessage{}
	if err := json.Unmarshal(a.Input, &args); err != nil {
		return nil, fmt.Errorf("--edit: the action's arguments are not an object")
	}
	for _, e := range edits {
		t := strings.TrimSpace(e)
		if strings.HasPrefix(t, "{") {
			whole := map[string]json.RawMessage{}
			if err := json.Unmarshal([]byte(t), &whole); err != nil {
				return nil, fmt.Errorf("--edit %q: not a JSON object; write the whole arguments as {\"key\": value} or one argument as key=value", e)
			}
			args = whole
			continue
		}
		k, v, ok := strings.Cut(e, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--edit %q: write key=value (e.g. command=\"make clean\") or a JSON object", e)
		}
		if json.Valid([]byte(v)) {
			args[strings.TrimSpace(k)] = json.RawMessage(v)
		} else {
			b, _ := json.Marshal(v)
			args[strings.TrimSpace(k)] = b
		}
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// qDecide answers an approval with --edit, --always or --deny. The digest
// of the action shown is sent, so an action changed since is refused.
func (a *app) qDecide(ctx context.Context, args []string, edits editFlags, always int, deny string, asJSON bool) int {
	const cmd = "questions answer"
	if len(args) != 1 {
		fmt.Fprintln(a.stderr, "usage: askbridge questions answer ID [--edit JSON | --edit key=value ...] [--always N] | --deny \"reason\"")
		return ExitUsage
	}
	if deny != "" && (len(edits) > 0 || always != 0) {
		fmt.Fprintln(a.stderr, "askbridge questions answer: --deny refuses the action; it does not go with --edit or --always")
		return ExitUsage
	}
	id, err := a.resolveID(ctx, args[0], true)
	if err != nil {
		return a.idFailure(cmd, err)
	}
	c := a.env.Client()
	q, err := c.Get(ctx, id)
	if err != nil {
		return a.apiFailure(cmd, err)
	}
	req := domain.RespondRequest{}
	if q.Action != nil {
		req.Digest = q.Action.Digest
	}
	switch {
	case deny != "":
		req.Reason = &deny
	default:
		if len(edits) > 0 {
			if req.EditedInput, err = editedInput(q.Action, edits); err != nil {
				fmt.Fprintf(a.stderr, "askbridge questions answer: %v\n", err)
				return ExitUsage
			}
		}
		if always != 0 {
			n := 0
			if q.Action != nil {
				n = len(q.Action.Suggestions)
			}
			if always < 1 || always > n {
				fmt.Fprintf(a.stderr, "askbridge questions answer: --always %d: this approval offers %d \"always allow\" choice(s); see askbridge questions show %s\n", always, n, q.ID)
				return ExitUsage
			}
			r := always - 1
			req.Rule = &r
		}
	}
	res, err := c.Respond(ctx, q.ID, req)
	if err != nil {
		return a.apiFailure(cmd, err)
	}
	if asJSON {
		return a.printJSON(res)
	}
	switch {
	case deny != "":
		fmt.Fprintf(a.stdout, "denied %s: %s\n", q.ID, deny)
	case req.EditedInput != nil:
		fmt.Fprintf(a.stdout, "allowed %s with arguments %s\n", q.ID, req.EditedInput)
	default:
		fmt.Fprintf(a.stdout, "allowed %s\n", q.ID)
	}
	if req.Rule != nil {
		fmt.Fprintf(a.stdout, "always allowed: %s\n", domain.DescribeSuggestion(q.Action.Suggestions[*req.Rule]).Sentence())
	}
	return ExitOK
}
