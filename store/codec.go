package store

import (
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// The record codec, shared with the native embedded store (store/native),
// so a question reads back the same whichever store kept it: the
// immutable part and its copy and result lines (record.go) and the short
// fields of the record's hash.

// EncodeDoc is the first line of a question's immutable part.
func EncodeDoc(q *domain.Question) string { return encodeDoc(q) }

// CopyLine is a posted copy's line in the immutable part.
func CopyLine(t domain.Target) string { return copyLine(t) }

// ResultJSON is what a transition adds to the record (its "R" line).
func ResultJSON(tr lifecycle.Transition, at time.Time) string { return resultJSON(tr, at) }

// SupersededResult is the result of a question superseded by a newer one
// of its run.
func SupersededResult() string { return string(marshal(result{CancelReason: domain.CancelSuperseded})) }

// TransitionDetail is the audit trail's one-line account of a transition.
func TransitionDetail(tr lifecycle.Transition) string { return transitionDetail(tr) }

// PersonJSON is a person as the audit trail keeps it ("" for nil).
func PersonJSON(p *domain.Person) string { return personJSON(p) }

// Marshal encodes v as records keep it (no HTML escaping).
func Marshal(v any) []byte { return marshal(v) }

// DecodeRecord builds a question from the fields of its hash (status,
// run, fp, seq, read, updated_at, resumed_run_id, esc_level, vote:…,
// vorder:…) and its immutable part with copy and result lines.
func DecodeRecord(project, id string, fields map[string]string, doc string) (*domain.Question, error) {
	q, _, err := decode(project, id, fields, doc)
	return q, err
}

// ErrRunOwned refuses a run id another agent started.
func ErrRunOwned(run string) error { return errRunOwned(run) }
