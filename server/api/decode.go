package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/shape"
)

// MaxBody bounds request bodies: 1 MiB. A larger body gets 413 too_large.
const MaxBody = 1 << 20

// bodyShape names the API's request types for people.
var bodyShape = &shape.Checker{
	Tag:         "json",
	Unmarshaler: reflect.TypeFor[json.Unmarshaler](),
	FoldCase:    true,
	Nouns: map[reflect.Type]string{
		reflect.TypeFor[domain.Item]():          "question",
		reflect.TypeFor[domain.Option]():        "option",
		reflect.TypeFor[domain.Target]():        "target",
		reflect.TypeFor[domain.Person]():        "person",
		reflect.TypeFor[domain.StringList]():    "answer",
		reflect.TypeFor[domain.Duration]():      "duration",
		reflect.TypeFor[domain.Responders]():    "responders object",
		reflect.TypeFor[domain.ResumeRequest](): "resume object",
	},
	Shapes: map[reflect.Type]string{
		reflect.TypeFor[domain.Item]():          "must be a question: an object with question, header, multiSelect and options",
		reflect.TypeFor[domain.Option]():        "must be an option: an object with label and optionally value, description, recommended",
		reflect.TypeFor[domain.Target]():        "must be a target: an object with platform and channel",
		reflect.TypeFor[domain.Person]():        "must be an object with platform and id",
		reflect.TypeFor[domain.Responders]():    "must be an object with users, slack_usergroups, discord_roles or exclude_requester",
		reflect.TypeFor[domain.ResumeRequest](): "must be an object with url",
		reflect.TypeFor[domain.OnTimeout]():     "must be an object with answer",
		reflect.TypeFor[domain.StringList]():    "must be a string or a list of strings",
		reflect.TypeFor[domain.Duration]():      `must be a duration such as "30m" or a number of seconds`,
	},
}

// decode reads a JSON body into v strictly: exactly one JSON object, at most
// MaxBody bytes, every unknown field and every value of the wrong kind
// named with its full path in plain words.
func decode(r *http.Request, v any) error {
	b, err := io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return domain.Errorf(domain.ETooLarge, "the request body is larger than the limit of %d bytes (1 MiB): send a smaller body", MaxBody)
	case err != nil:
		return domain.Errorf(domain.EInvalid, "the request body could not be read")
	case len(bytes.TrimSpace(b)) == 0:
		return domain.Errorf(domain.EInvalid, "request body is empty: send a JSON object")
	}
	if err := checkDepth(b); err != nil {
		return err
	}
	if decodeWellFormed(b, v) {
		return nil
	}
	// Not well formed: v goes back to its zero value (every caller passes
	// a zero value) and the checked path names every problem.
	reflect.ValueOf(v).Elem().SetZero()
	return decodeChecked(b, v)
}

// decodeChecked reads the non-empty body b into v, naming every problem
// with its full path: the shape check first, then the decoder.
func decodeChecked(b []byte, v any) error {
	if err := checkDepth(b); err != nil {
		return err
	}
	doc, err := shape.ParseJSON(b)
	var se *json.SyntaxError
	switch {
	case errors.Is(err, shape.ErrTrailing):
		return domain.Errorf(domain.EInvalid, "the request body has data after the JSON object: send exactly one JSON object")
	case errors.As(err, &se):
		return domain.Errorf(domain.EInvalid, "request body is not valid JSON (at byte %d)", se.Offset)
	case err != nil:
		return domain.Errorf(domain.EInvalid, "request body is not valid JSON: it ends before the object is complete")
	}
	t := reflect.TypeOf(v).Elem()
	if doc.Kind() != shape.Object && t.Kind() == reflect.Struct {
		return &domain.Error{Code: domain.EInvalid, Message: "the request body must be a JSON object",
			Details: []domain.Detail{{Field: "body", Problem: "must be a JSON object { ... }"}}}
	}
	if ps := bodyShape.Check(doc, t); len(ps) > 0 {
		e := &domain.Error{Code: domain.EInvalid, Message: "the request is not valid"}
		for _, p := range ps {
			e.Details = append(e.Details, domain.Detail{Field: p.Path, Problem: p.Problem})
		}
		return e
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		// The shape check passed, so this is a value the type itself refused.
		var ce *domain.Error
		if errors.As(err, &ce) { // a field's own decoder named the problem
			return ce
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return &domain.Error{Code: domain.EInvalid, Message: "the request is not valid",
				Details: []domain.Detail{{Field: te.Field, Problem: fmt.Sprintf("must not be %s", te.Value)}}}
		}
		return domain.Errorf(domain.EInvalid, "the request is not valid")
	}
	return nil
}

// decodeWellFormed decodes b into the struct v pointed to when b is one
// JSON object that v's type takes as it is: the body of nearly every
// request. It decodes with the same decoder the checked path ends with,
// so v is what that path would make of b; for the API's request types the
// shape check passes whenever this decoding does (decode_test.go checks the
// types keep to what makes that so), and a body with anything after its
// object falls through. Skipping the shape check's document tree and walk
// for such bodies keeps an ask as cheap as before the checked path
// existed; anything else returns false and goes the checked way.
func decodeWellFormed(b []byte, v any) bool {
	if reflect.TypeOf(v).Elem().Kind() != reflect.Struct {
		return false
	}
	if i := skipSpace(b, 0); i == len(b) || b[i] != '{' {
		return false // null, a list or a scalar: the checked path says what it must be
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return false
	}
	return skipSpace(b, int(dec.InputOffset())) == len(b)
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// checkDepth refuses a body nested deeper than shape.MaxDepth, before any
// decoder walks it.
func checkDepth(b []byte) error {
	if shape.CheckDepth(b, shape.MaxDepth) != nil {
		return &domain.Error{Code: domain.EInvalid, Message: "the request is not valid",
			Details: []domain.Detail{{Field: "body", Problem: fmt.Sprintf("nests arrays and objects deeper than %d levels", shape.MaxDepth)}}}
	}
	return nil
}
