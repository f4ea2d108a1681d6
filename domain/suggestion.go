package domain

import (
	"encoding/json"
	"strings"
)

// SuggestionRule is an "always allow" suggestion (Claude Code's
// permission_suggestions entry) in words.
type SuggestionRule struct {
	// What the rule covers: "Bash(npm test:*)", "files in
	// /home/dev/proj/build", "file edits (acceptEdits mode)".
	What string
	// Where it applies: "this session", "this project", …
	Where string
}

// Sentence is the choice as a person reads it: "Allow, and don't ask
// again this session for Bash(npm test:*)".
func (r SuggestionRule) Sentence() string {
	return "Allow, and don't ask again " + r.Where + " for " + r.What
}

var suggestionModes = map[string]string{
	"acceptEdits":       "file edits",
	"bypassPermissions": "anything",
	"plan":              "nothing: planning only",
	"dontAsk":           "nothing it has not allowed",
}

var suggestionDestinations = map[string]string{
	"session":         "this session",
	"localSettings":   "in this project (your local settings)",
	"projectSettings": "in this project (shared settings)",
	"userSettings":    "in any of your projects",
	"cliArg":          "this session",
}

// DescribeSuggestion puts one suggestion in words, the same on every surface:
// addRules → "Tool(rule content)", addDirectories → "files in <dirs>",
// setMode → "file edits (acceptEdits mode)". A suggestion of another shape
// is shown as its JSON, so nothing is hidden.
func DescribeSuggestion(raw json.RawMessage) SuggestionRule {
	var s struct {
		Type  string `json:"type"`
		Rules []struct {
			ToolName    string `json:"toolName"`
			RuleContent string `json:"ruleContent"`
		} `json:"rules"`
		Behavior    string   `json:"behavior"`
		Directories []string `json:"directories"`
		Mode        string   `json:"mode"`
		Destination string   `json:"destination"`
	}
	_ = json.Unmarshal(raw, &s)
	r := SuggestionRule{Where: suggestionDestinations[s.Destination]}
	if r.Where == "" {
		r.Where = "this session"
		if s.Destination != "" {
			r.Where = "(" + s.Destination + ")"
		}
	}
	switch s.Type {
	case "addRules", "replaceRules":
		var parts []string
		for _, x := range s.Rules {
			if x.RuleContent != "" {
				parts = append(parts, x.ToolName+"("+x.RuleContent+")")
			} else {
				parts = append(parts, x.ToolName)
			}
		}
		if len(parts) > 0 && (s.Behavior == "" || s.Behavior == "allow") {
			r.What = strings.Join(parts, ", ")
			return r
		}
	case "addDirectories":
		if len(s.Directories) > 0 {
			r.What = "files in " + strings.Join(s.Directories, ", ")
			return r
		}
	case "setMode":
		if s.Mode != "" {
			r.What = s.Mode + " mode"
			if m := suggestionModes[s.Mode]; m != "" {
				r.What = m + " (" + r.What + ")"
			}
			return r
		}
	}
	r.What = "the rule " + string(raw)
	return r
}
