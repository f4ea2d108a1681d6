package lifecycle

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// Page sizes of a list (QuestionReader.ListPage and the API's limit).
const (
	// DefaultListLimit is a page's size when none is asked for.
	DefaultListLimit = 500
	// MaxListLimit is the largest page.
	MaxListLimit = 1000
)

// ListQuery selects one page of a project's questions.
type ListQuery struct {
	// Status keeps only the questions in that state; "" keeps them all.
	Status domain.Status
	// Cursor continues after the last question of an earlier page (its
	// ListPage.Next); "" starts from the oldest question.
	Cursor string
	// Limit bounds the page: DefaultListLimit when 0 or less, at most
	// MaxListLimit.
	Limit int
}

// ListPage is one page of a list.
type ListPage struct {
	Questions []*domain.Question
	// Next is the cursor of the following page; "" when this page is the
	// last. A page may hold fewer than the limit (even none) and still
	// have a Next: a store that scans a long index for a status stops
	// after a bounded amount of work.
	Next string
}

// Deadline is a pending question's id and deadline (QuestionReader.Deadlines).
type Deadline struct {
	ID string
	At time.Time
}

// PageLimit is the size of the page a ListQuery asks for.
func PageLimit(n int) int {
	switch {
	case n <= 0:
		return DefaultListLimit
	case n > MaxListLimit:
		return MaxListLimit
	}
	return n
}

// A cursor is a position in a project's creation order: the sequence
// number every store gives a question when it is created, after which the
// next page starts. Questions that end between pages therefore never move
// the others, and a cursor stays good for as long as the list is read
// (the numbering restarts only once a project has no record left at all).
// It is opaque to clients: "c1." and the number, in URL-safe base64.
const cursorTag = "c1."

// CursorAfter is the cursor of the page that starts after the question with
// sequence number seq.
func CursorAfter(seq int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorTag + strconv.FormatInt(seq, 10)))
}

// ParseCursor returns the sequence number a cursor continues after (0 for
// ""). EInvalid, naming the field cursor, for anything a page did not give.
func ParseCursor(c string) (int64, error) {
	if c == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(c)
	if err == nil {
		if n, ok := strings.CutPrefix(string(b), cursorTag); ok {
			if seq, err := strconv.ParseInt(n, 10, 64); err == nil && seq > 0 && CursorAfter(seq) == c {
				return seq, nil
			}
		}
	}
	return 0, &domain.Error{Code: domain.EInvalid, Message: "invalid cursor",
		Details: []domain.Detail{{Field: "cursor", Problem: "not a cursor this list gave: pass next_cursor exactly as received, or leave cursor out to start from the oldest question"}}}
}
