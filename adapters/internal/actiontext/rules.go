// Package actiontext holds platform-free helpers for presenting the action
// of an approval (core.Action): a suggested "always allow" rule in words,
// the arguments as a person reads them, and a long text cut by whole lines
// to a budget with an explicit count of what is shown.
package actiontext

import (
	"encoding/json"
	"strings"
)

// RuleWords describes one "always allow" suggestion (a Claude Code
// permission_suggestions entry) as the thing it stops asking about:
// addRules → "Bash(git status:*)", addDirectories → "files in /a, /b",
// setMode → "file edits (acceptEdits mode)". A suggestion of another or an
// unknown type is described by its type.
func RuleWords(s json.RawMessage) string {
	var v struct {
		Type  string `json:"type"`
		Rules []struct {
			ToolName    string `json:"toolName"`
			RuleContent string `json:"ruleContent"`
		} `json:"rules"`
		Directories []string `json:"directories"`
		Mode        string   `json:"mode"`
	}
	if json.Unmarshal(s, &v) != nil {
		return "this rule"
	}
	switch v.Type {
	case "addRules", "replaceRules":
		var rs []string
		for _, r := range v.Rules {
			if r.RuleContent == "" {
				rs = append(rs, r.ToolName)
			} else {
				rs = append(rs, r.ToolName+"("+r.RuleContent+")")
			}
		}
		if len(rs) > 0 {
			return strings.Join(rs, ", ")
		}
	case "addDirectories":
		if len(v.Directories) > 0 {
			return "files in " + strings.Join(v.Directories, ", ")
		}
	case "setMode":
		switch v.Mode {
		case "acceptEdits":
			return "file edits (acceptEdits mode)"
		case "bypassPermissions":
			return "anything (bypassPermissions mode)"
		case "":
		default:
			return v.Mode + " mode"
		}
	}
	if v.Type == "" {
		return "this rule"
	}
	return "this rule (" + v.Type + ")"
}

// RuleScope is where a suggestion applies, from its destination:
// "this session" (session, or none given), "this project" (projectSettings,
// localSettings), "every project" (userSettings).
func RuleScope(s json.RawMessage) string {
	var v struct {
		Destination string `json:"destination"`
	}
	_ = json.Unmarshal(s, &v)
	switch v.Destination {
	case "projectSettings", "localSettings":
		return "in this project"
	case "userSettings":
		return "in any project"
	}
	return "this session"
}

// AlwaysAllowLabel is the choice offered for a suggestion: "Allow, and
// don't ask again this session for Bash(git status:*)".
func AlwaysAllowLabel(s json.RawMessage) string {
	return "Allow, and don't ask again " + RuleScope(s) + " for " + RuleWords(s)
}
