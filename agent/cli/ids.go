package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/askbridge/askbridge/domain"
	"github.com/google/uuid"
)

// minPrefix is the fewest characters of an id the CLI accepts, as git
// does: a shorter one is too easily a mistyped option number.
const minPrefix = 4

// idError is an id the operator typed that names no question (notFound),
// or several, or is too short.
type idError struct {
	msg      string
	notFound bool
}

func (e *idError) Error() string { return e.msg }

// noID is the error for an empty id: an unset "$id", or `show ""`.
var noID = &idError{msg: "no question id given: pass the id (or its first 4 or more characters) that askbridge questions list prints"}

// typedID is what the operator typed without the spaces around it and
// the ellipsis of a short id pasted as the ask message and the list print
// it ("3f2a9c1b…", or "..." typed).
func typedID(s string) string {
	s = strings.TrimSpace(s)
	for _, dots := range []string{"…", "..."} {
		s = strings.TrimSpace(strings.TrimSuffix(s, dots))
	}
	return s
}

// resolveID turns what the operator typed — a full id, or a unique prefix
// of an id or of its short form (as list, show and the ask message print
// them, with or without their ellipsis) — into the question's id.
// pendingOnly looks among pending questions only (answer, cancel);
// otherwise pending ones are tried first, then the project's recent
// questions.
func (a *app) resolveID(ctx context.Context, typed string, pendingOnly bool) (string, error) {
	if typed = typedID(typed); typed == "" {
		return "", noID
	}
	if _, err := uuid.Parse(typed); err == nil || !hexPrefix(typed) {
		return typed, nil // a full id, or a name: the bridge says whether it exists
	}
	if n := len(strings.ReplaceAll(typed, "-", "")); n < minPrefix {
		return "", &idError{msg: fmt.Sprintf("%q is too short to name a question: give at least %d characters of its id", typed, minPrefix)}
	}
	statuses := []domain.Status{domain.StatusPending}
	if !pendingOnly {
		statuses = append(statuses, "")
	}
	for _, st := range statuses {
		qs, err := a.env.Client().List(ctx, st)
		if err != nil {
			return "", err
		}
		var found []*domain.Question
		for _, q := range qs {
			if domain.IDHasPrefix(q.ID, typed) {
				found = append(found, q)
			}
		}
		switch {
		case len(found) == 1:
			return found[0].ID, nil
		case len(found) > 1:
			var b strings.Builder
			fmt.Fprintf(&b, "%q matches %d questions; give more characters of the id:", typed, len(found))
			for _, q := range found {
				text := ""
				if len(q.Questions) > 0 {
					text = shorten(oneLine(q.Questions[0].Question), 60)
				}
				fmt.Fprintf(&b, "\n  %s  %-9s %s", q.ID, q.Status, text)
			}
			return "", &idError{msg: b.String()}
		}
	}
	where := "question"
	if pendingOnly {
		where = "pending question"
	}
	return "", &idError{msg: fmt.Sprintf("not_found: no %s of project %s has an id starting with %q (see askbridge questions list)", where, a.env.Project, typed), notFound: true}
}

func hexPrefix(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range strings.ToLower(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c == '-') {
			return false
		}
	}
	return true
}

// shortIDs returns the ids as people read them in a table: their short
// forms, lengthened where two would read the same.
func shortIDs(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = domain.ShortID(id)
	}
	for {
		seen := map[string]int{}
		for _, s := range out {
			seen[s]++
		}
		grown := false
		for i, s := range out {
			compact := strings.ReplaceAll(ids[i], "-", "")
			if seen[s] > 1 && len(s) < len(compact) {
				// Lengthen within whatever the short form is a part of.
				if k := strings.Index(compact, s); k >= 0 && k+len(s) < len(compact) {
					out[i] = compact[k : k+len(s)+1]
					grown = true
				}
			}
		}
		if !grown {
			return out
		}
	}
}

// idFailure reports an error of resolveID.
func (a *app) idFailure(cmd string, err error) int {
	var e *idError
	if !errors.As(err, &e) {
		return a.apiFailure(cmd, err)
	}
	fmt.Fprintf(a.stderr, "askbridge %s: %s\n", cmd, e.msg)
	if e.notFound {
		return ExitError
	}
	return ExitUsage
}
