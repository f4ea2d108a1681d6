package domain

import (
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

// AutoAllowRule returns the rule that approves q without asking anyone, or
// "": one of routeRules (a route's auto_allow) that matches q's action, or
// an always-allow decision a person made earlier in the same run. earlier
// lists that run's questions; it is called only when needed.
func AutoAllowRule(q *Question, routeRules []string, earlier func() []*Question) string {
	if q.Action == nil || q.Kind != KindApproval || len(q.Questions) != 1 || q.ApprovalsRequired > 1 {
		return ""
	}
	if _, ok := allowOption(q.Questions[0]); !ok {
		return ""
	}
	for _, rule := range routeRules {
		if RuleMatches(rule, q.Action) {
			return rule
		}
	}
	if q.RunID == "" {
		return ""
	}
	for _, e := range earlier() {
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

// AutoApproval is the answer that allows q's action by rule, with no person.
func AutoApproval(q *Question, rule string) Answer {
	o, _ := allowOption(q.Questions[0])
	ans := Resolve(q.Questions, [][]string{{o.Label}})
	ans.Decision = &Decision{Behavior: BehaviorAllow, Digest: q.Action.Digest, Input: q.Action.Input, AutoRule: rule}
	return ans
}
