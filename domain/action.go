package domain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/askbridge/askbridge/domain/textdiff"
)

// Limits of an approval's action (docs/openapi.yaml, Action).
const (
	MaxToolLen       = 200
	MaxActionInput   = 256 << 10 // bytes of the arguments as JSON
	MaxSuggestions   = 20
	MaxSuggestionLen = 16 << 10 // bytes of one suggestion as JSON
)

// Action is the exact tool call an approval decides: the tool and its
// arguments, as the agent would run it. The bridge sets Digest (what the
// decision binds to) and Diff (for file edits); the agent sends Tool,
// Input and, for Claude Code, Suggestions.
type Action struct {
	Tool string `json:"tool"`
	// Input is the tool's arguments, a JSON object, stored in canonical
	// form (keys sorted, no spaces).
	Input json.RawMessage `json:"input"`
	// Digest is "sha256:" + hex SHA-256 of Tool, a newline, and Input in
	// canonical form. An ask may send it; one that does not match is refused.
	Digest string `json:"digest"`
	// Diff is a unified diff of a file edit (Claude Code Edit, MultiEdit,
	// Write, or any input with old_string/new_string), else empty.
	Diff string `json:"diff,omitempty"`
	// Suggestions are "always allow" rules the agent offers (Claude Code's
	// permission_suggestions), kept as sent; a person may pick one by index.
	Suggestions []json.RawMessage `json:"suggestions,omitempty"`
	// AllowEdit false says the agent cannot run edited arguments (its
	// framework has no way to): nobody is offered Edit and edited_input is
	// refused. Absent or true: editing follows the route.
	AllowEdit *bool `json:"allow_edit,omitempty"`
	// CallID is the host's id of the tool call (Claude Code's tool_use_id,
	// a framework's call id). It keys the approval within its run: asking
	// about the same call again re-attaches to its record, whatever became
	// of it, and approvals of distinct calls coexist (domain/batch.go).
	CallID string `json:"call_id,omitempty"`
}

// EditAllowed reports whether a person may edit the arguments of q's
// action: neither the route (routeNoEdit) nor the action forbids it.
func EditAllowed(q *Question, routeNoEdit bool) bool {
	return !routeNoEdit && (q.Action == nil || q.Action.AllowEdit == nil || *q.Action.AllowEdit)
}

// Decision is what an answered approval with an action tells the agent.
type Decision struct {
	Behavior string `json:"behavior"` // "allow" or "deny"
	// Digest is the digest of the action decided on: the edited action's
	// when a person edited it, else the asked action's.
	Digest string `json:"digest"`
	// Input is the arguments to run with (allow only): the edited ones, or
	// the original ones.
	Input json.RawMessage `json:"input,omitempty"`
	// Edited is true when Input is a person's edit of the asked arguments.
	Edited bool `json:"edited,omitempty"`
	// Rules are the chosen "always allow" suggestions (allow only).
	Rules []json.RawMessage `json:"rules,omitempty"`
	// Message is the reason of a denial, for the agent.
	Message string `json:"message,omitempty"`
	// AutoRule names the auto_allow rule that approved the action without
	// asking anyone.
	AutoRule string `json:"auto_rule,omitempty"`
}

// Decision behaviours.
const (
	BehaviorAllow = "allow"
	BehaviorDeny  = "deny"
)

// EditedAction is the action a person approved after changing its
// arguments; the question's action stays the original.
type EditedAction struct {
	Tool   string          `json:"tool"`
	Input  json.RawMessage `json:"input"`
	Digest string          `json:"digest"`
	By     *Person         `json:"by,omitempty"`
}

// CanonicalInput returns the JSON object in b with keys sorted and no
// insignificant space; an empty or null input is {}. It fails when b is
// not a JSON object.
func CanonicalInput(b json.RawMessage) (json.RawMessage, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return json.RawMessage("{}"), nil
	}
	if b[0] != '{' {
		return nil, fmt.Errorf("must be a JSON object of the tool's arguments, e.g. {\"command\": \"ls\"}")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("is not valid JSON")
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("is not valid JSON")
	}
	return json.RawMessage(bytes.TrimRight(out.Bytes(), "\n")), nil
}

// ActionDigest is the digest of tool with its canonical input.
func ActionDigest(tool string, canonical json.RawMessage) string {
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{'\n'})
	h.Write(canonical)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// prepareAction validates an asked action and fills in its canonical
// input, digest and diff, reporting problems under "action.".
func prepareAction(p *problems, a *Action) *Action {
	if a == nil {
		return nil
	}
	out := &Action{Tool: strings.TrimSpace(a.Tool), CallID: a.CallID}
	checkID(p, "action.call_id", a.CallID)
	if a.AllowEdit != nil && !*a.AllowEdit {
		no := false
		out.AllowEdit = &no
	}
	switch n := utf8.RuneCountInString(out.Tool); {
	case n == 0:
		p.add("action.tool", "required: the name of the tool the agent wants to run")
	case n > MaxToolLen:
		p.add("action.tool", "at most %d characters", MaxToolLen)
	}
	if len(a.Input) > MaxActionInput {
		p.add("action.input", "at most %d KiB of JSON, got %d bytes; send the arguments without bulky data", MaxActionInput>>10, len(a.Input))
		return out
	}
	in, err := CanonicalInput(a.Input)
	if err != nil {
		p.add("action.input", "%s", err.Error())
		return out
	}
	out.Input = in
	out.Digest = ActionDigest(out.Tool, in)
	if a.Digest != "" && a.Digest != out.Digest {
		p.add("action.digest", "does not match the tool and input sent (the bridge computed %s); leave it out to let the bridge compute it", out.Digest)
	}
	if len(a.Suggestions) > MaxSuggestions {
		p.add("action.suggestions", "at most %d", MaxSuggestions)
	}
	for i, s := range a.Suggestions {
		s = bytes.TrimSpace(s)
		f := fmt.Sprintf("action.suggestions[%d]", i)
		switch {
		case len(s) > MaxSuggestionLen:
			p.add(f, "at most %d KiB of JSON", MaxSuggestionLen>>10)
		case len(s) == 0 || s[0] != '{' || !json.Valid(s):
			p.add(f, "must be a JSON object (a rule such as Claude Code's permission_suggestions)")
		default:
			var c bytes.Buffer
			_ = json.Compact(&c, s)
			out.Suggestions = append(out.Suggestions, c.Bytes())
		}
	}
	out.Diff = ActionDiff(out.Tool, in)
	return out
}

// ActionDiff renders the file edit an action makes as a unified diff:
// Claude Code's Edit (file_path, old_string, new_string), MultiEdit
// (file_path, edits[]), Write (file_path, content: the old content is not
// known, so every line shows as added) and any input with an old/new pair
// (old_string/new_string, or old/new strings). Hunk line numbers count
// from the start of each replaced text, not of the file. Other actions
// have no diff ("").
func ActionDiff(tool string, input json.RawMessage) string {
	var in struct {
		FilePath  *string `json:"file_path"`
		Path      *string `json:"path"`
		OldString *string `json:"old_string"`
		NewString *string `json:"new_string"`
		Old       any     `json:"old"`
		New       any     `json:"new"`
		Content   *string `json:"content"`
		Edits     []struct {
			OldString string `json:"old_string"`
			NewString string `json:"new_string"`
		} `json:"edits"`
	}
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	name := "file"
	if in.FilePath != nil {
		name = *in.FilePath
	} else if in.Path != nil {
		name = *in.Path
	}
	name = strings.TrimPrefix(name, "/")
	header := "--- a/" + name + "\n+++ b/" + name + "\n"
	switch {
	case in.OldString != nil && in.NewString != nil:
		if h := textdiff.Hunks(*in.OldString, *in.NewString, 1, 1); h != "" {
			return header + h
		}
	case len(in.Edits) > 0:
		var b strings.Builder
		for _, e := range in.Edits {
			b.WriteString(textdiff.Hunks(e.OldString, e.NewString, 1, 1))
		}
		if b.Len() > 0 {
			return header + b.String()
		}
	case tool == "Write" && in.Content != nil:
		return textdiff.Unified("/dev/null", "b/"+name, "", *in.Content)
	default:
		old, ok1 := in.Old.(string)
		nw, ok2 := in.New.(string)
		if ok1 && ok2 {
			if h := textdiff.Hunks(old, nw, 1, 1); h != "" {
				return header + h
			}
		}
	}
	return ""
}

// actionFingerprint is Fingerprint of the items, joined with the action's
// digest: an approval of a different tool call is a different question
// even when its text is the same. An action that names its call (CallID)
// is keyed by the call alone (CallKey).
func actionFingerprint(items []Item, a *Action) string {
	if a != nil && a.CallID != "" {
		return CallKey(a.CallID)
	}
	fp := Fingerprint(items)
	if a == nil || a.Digest == "" {
		return fp
	}
	sum := sha256.Sum256([]byte(fp + a.Digest))
	return hex.EncodeToString(sum[:16])
}
