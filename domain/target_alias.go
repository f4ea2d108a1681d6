package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// ThreadID is a thread or forum topic id given as a JSON number (42) or
// text ("42").
type ThreadID string

// UnmarshalJSON reads a number or a string.
func (t *ThreadID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = ThreadID(s)
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return errors.New("must be a thread id: a whole number such as 42, or text")
	}
	*t = ThreadID(strconv.FormatInt(n, 10))
	return nil
}

// Resolved moves Chat and Thread into Channel and ThreadTS (where those are
// empty) and clears them.
func (t Target) Resolved() Target {
	if t.Channel == "" {
		t.Channel = t.Chat
	}
	if t.ThreadTS == "" {
		t.ThreadTS = string(t.Thread)
	}
	t.Chat, t.Thread = "", ""
	return t
}
