package actiontext

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// Changes lists, in words, how edited arguments differ from the asked
// ones, one entry per top-level argument in key order: "replicas: 3 → 5",
// "region: added \"eu\"", "dry_run: removed". A Bash-like command reads
// "command: `rm -rf build` → `rm -rf build/tmp`". Arguments that are not
// JSON objects compare as a whole ("arguments: … → …").
func Changes(tool string, old, edited json.RawMessage) []string {
	var a, b map[string]json.RawMessage
	if json.Unmarshal(old, &a) != nil || json.Unmarshal(edited, &b) != nil {
		return []string{"arguments: " + string(old) + " → " + string(edited)}
	}
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	_, _, bashLike := SplitCommand(tool, old)
	show := func(k string, v json.RawMessage) string {
		var s string
		if k == "command" && bashLike && json.Unmarshal(v, &s) == nil {
			return "`" + s + "`"
		}
		return compact(v)
	}
	var out []string
	for _, k := range sorted {
		va, inA := a[k]
		vb, inB := b[k]
		switch {
		case !inA:
			out = append(out, k+": added "+show(k, vb))
		case !inB:
			out = append(out, k+": removed")
		case compact(va) != compact(vb):
			out = append(out, k+": "+show(k, va)+" → "+show(k, vb))
		}
	}
	return out
}

func compact(v json.RawMessage) string {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return string(v)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(x) != nil {
		return string(v)
	}
	return strings.TrimRight(b.String(), "\n")
}
