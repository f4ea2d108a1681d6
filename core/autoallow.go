package core

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Auto-allow approves, at once and without posting anything, an approval
// whose action
//   - one of its route's auto_allow rules matches, or
//   - is identical (same digest) to one a person allowed earlier in the same
//     run while choosing an "always allow" suggestion, or matches a
//     Claude Code addRules suggestion chosen earlier in the run.
//
// The run's memory is its answered records, so it lives exactly as long as
// they do (retention). The record is answered with a decision whose
// auto_rule names the rule, and the audit trail says "auto_approved".
//
// A rule is "Tool" (every call of that tool) or "Tool(glob)", the glob
// matched against the tool's main argument (command, file_path, path, url,
// pattern, query, else the arguments as JSON); "*" matches any run of
// characters. "mcp__*" style globs apply to the tool name too.

// AutoPerson is who answers an auto-approved approval.
var AutoPerson = Person{Platform: "askbridge", ID: "auto_allow", Name: "askbridge auto-allow"}

// CheckAutoAllowRule reports a malformed rule, for config validation.
func CheckAutoAllowRule(rule string) error {
	tool, arg, hasArg := splitRule(rule)
	if tool == "" {
		return fmt.Errorf("%q: a rule is a tool name, optionally with a pattern in parentheses, e.g. Read or Bash(git status*)", rule)
	}
	if hasArg && arg == "" {
		return fmt.Errorf("%q: empty pattern in parentheses; write %s alone to allow every call", rule, tool)
	}
	return nil
}

func splitRule(rule string) (tool, arg string, hasArg bool) {
	rule = strings.TrimSpace(rule)
	if i := strings.IndexByte(rule, '('); i > 0 && strings.HasSuffix(rule, ")") {
		return strings.TrimSpace(rule[:i]), rule[i+1 : len(rule)-1], true
	}
	if strings.ContainsAny(rule, "()") {
		return "", "", false
	}
	return rule, "", false
}

// RuleMatches reports whether rule allows a.
func RuleMatches(rule string, a *Action) bool {
	tool, arg, hasArg := splitRule(rule)
	if tool == "" || a == nil || !globMatch(tool, a.Tool) {
		return false
	}
	return !hasArg || globMatch(arg, MainArgument(a.Input))
}

// MainArgument is the argument of a tool call a rule's pattern matches:
// the first of command, file_path, path, url, pattern, query that is a
// string, else the arguments as JSON.
func MainArgument(input json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(input, &m) == nil {
		for _, k := range []string{"command", "file_path", "path", "url", "pattern", "query"} {
			if s, ok := m[k].(string); ok {
				return s
			}
		}
	}
	return string(input)
}

// globMatch matches s against pattern, where "*" is any run of characters.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// suggestionRules turns a Claude Code addRules suggestion into rules:
// {"type":"addRules","behavior":"allow","rules":[{"toolName":"Bash",
// "ruleContent":"npm test:*"}]} allows Bash(npm test*).
func suggestionRules(s json.RawMessage) []string {
	var sg struct {
		Type     string `json:"type"`
		Behavior string `json:"behavior"`
		Rules    []struct {
			ToolName    string `json:"toolName"`
			RuleContent string `json:"ruleContent"`
		} `json:"rules"`
	}
	if json.Unmarshal(s, &sg) != nil || sg.Type != "addRules" || (sg.Behavior != "" && sg.Behavior != BehaviorAllow) {
		return nil
	}
	var out []string
	for _, r := range sg.Rules {
		switch {
		case r.ToolName == "":
		case r.RuleContent == "":
			out = append(out, r.ToolName)
		default:
			content := r.RuleContent
			if c, ok := strings.CutSuffix(content, ":*"); ok {
				content = c + "*"
			}
			out = append(out, r.ToolName+"("+content+")")
		}
	}
	return out
}

// autoRule finds the rule that approves q at once, or "".
func (r *Router) autoRule(ctx context.Context, project string, q *Question, route *Route) string {
	if q.Action == nil || q.Kind != KindApproval || len(q.Questions) != 1 || q.ApprovalsRequired > 1 {
		return ""
	}
	if _, ok := allowOption(q.Questions[0]); !ok {
		return ""
	}
	if route != nil {
		for _, rule := range route.AutoAllow {
			if RuleMatches(rule, q.Action) {
				return rule
			}
		}
	}
	if q.RunID == "" {
		return ""
	}
	earlier, err := r.store.RunQuestions(ctx, project, q.RunID)
	if err != nil {
		return ""
	}
	for _, e := range earlier {
		d := e.Decision
		if e.Status != StatusAnswered || d == nil || d.Behavior != BehaviorAllow || len(d.Rules) == 0 || e.Action == nil || e.Action.Tool != q.Action.Tool {
			continue
		}
		if d.Digest == q.Action.Digest {
			return "always allow (this run): " + q.Action.Tool + " as allowed in " + e.ID
		}
		for _, s := range d.Rules {
			for _, rule := range suggestionRules(s) {
				if RuleMatches(rule, q.Action) {
					return rule
				}
			}
		}
	}
	return ""
}

// autoApprove answers a just-created approval by rule, without posting it.
func (r *Router) autoApprove(ctx context.Context, q *Question, rule string) (*Question, error) {
	o, _ := allowOption(q.Questions[0])
	ans := Resolve(q.Questions, [][]string{{o.Label}})
	ans.Decision = &Decision{Behavior: BehaviorAllow, Digest: q.Action.Digest, Input: q.Action.Input, AutoRule: rule}
	by := AutoPerson
	final, err := r.transition(ctx, q, Transition{To: StatusAnswered, Answer: &ans, By: &by})
	if err != nil {
		return final, err
	}
	r.audit(ctx, final, AuditEntry{Type: "auto_approved", By: &by, Detail: rule})
	return final, nil
}
