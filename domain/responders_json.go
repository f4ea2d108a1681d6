package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The fields of a responders object that are not a kind of group.
const (
	respondersUsers   = "users"
	respondersExclude = "exclude_requester"
)

// MarshalJSON writes r as one object: users, each kind of group as a field
// of its own (sorted), exclude_requester; empty ones are left out.
func (r Responders) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	field := func(name string, v any) error {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(name)
		b.Write(k)
		b.WriteByte(':')
		j, err := json.Marshal(v)
		b.Write(j)
		return err
	}
	if len(r.Users) > 0 {
		if err := field(respondersUsers, r.Users); err != nil {
			return nil, err
		}
	}
	kinds := make([]string, 0, len(r.Groups))
	for k, v := range r.Groups {
		if len(v) > 0 {
			kinds = append(kinds, k)
		}
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		if err := field(k, r.Groups[k]); err != nil {
			return nil, err
		}
	}
	if r.ExcludeRequester {
		if err := field(respondersExclude, true); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a responders object. A field other than users and
// exclude_requester is a kind of group and must be a list of ids; whether a
// surface takes that kind is checked with the rest of the ask (Validate).
func (r *Responders) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil || fields == nil {
		if string(bytes.TrimSpace(b)) == "null" {
			return nil
		}
		return errors.New("must be an object with users, exclude_requester, and a list of ids for each kind of group")
	}
	out := Responders{}
	var problems []string
	for k, v := range fields {
		switch k {
		case respondersUsers:
			if err := json.Unmarshal(v, &out.Users); err != nil {
				problems = append(problems, "users: must be a list of \"<platform>:<id>\" strings")
			}
		case respondersExclude:
			if err := json.Unmarshal(v, &out.ExcludeRequester); err != nil {
				problems = append(problems, "exclude_requester: must be true or false")
			}
		default:
			var ids []string
			if err := json.Unmarshal(v, &ids); err != nil {
				problems = append(problems, fmt.Sprintf("%s: must be a list of ids", k))
				continue
			}
			if out.Groups == nil {
				out.Groups = map[string][]string{}
			}
			out.Groups[k] = ids
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return errors.New(strings.Join(problems, "; "))
	}
	*r = out
	return nil
}
