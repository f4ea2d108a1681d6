package domain

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// The rules of a route, shared by the configuration (a route as written in
// the file) and the ask path (the same fields given in an ask): one rule,
// one wording, whichever way the value arrives.

// ValidateRoute checks a route as configured and returns every problem,
// each naming its field relative to the route (name, targets[0].channel,
// escalation[1].after). The rules that depend on the question asked
// (on_timeout.answer among the options, several approvals needing one
// single-select question) are checked when a question uses the route.
// Which platforms have an adapter is the caller's to check (NotConfigured).
func ValidateRoute(r Route) []Detail {
	var p problems
	if strings.TrimSpace(r.Name) == "" {
		p.add("name", "required")
	}
	if r.Thread != "" && r.Thread != "per-run" {
		p.add("thread", "%q is not a thread mode (use per-run or leave it out)", r.Thread)
	}
	if r.Timeout != 0 {
		checkTimeout(&p, "timeout", r.Timeout)
	}
	checkTargets(&p, "targets", r.Targets)
	checkResponders(&p, "responders", r.Responders)
	checkApprovals(&p, r.ApprovalsRequired)
	if r.BatchWindow < 0 || r.BatchWindow > MaxBatchWindow {
		p.add("batch_window", "must be between 0s and %s (0s or left out: the bridge's default, %s)", MaxBatchWindow, DefaultBatchWindow)
	}
	for j, rule := range r.AutoAllow {
		if err := CheckAutoAllowRule(rule); err != nil {
			p.add(fmt.Sprintf("auto_allow[%d]", j), "%v", err)
		}
	}
	if r.OnTimeout != nil && r.OnTimeout.UseDefaults && strings.TrimSpace(r.OnTimeout.Answer) != "" {
		p.add("on_timeout", "give either answer or use_defaults, not both")
	}
	if r.OnTimeout != nil && !r.OnTimeout.UseDefaults && strings.TrimSpace(r.OnTimeout.Answer) == "" {
		p.add("on_timeout.answer", "required")
	}
	var last time.Duration
	for i, e := range r.Escalation {
		f := fmt.Sprintf("escalation[%d]", i)
		if time.Duration(e.After) <= last {
			p.add(f+".after", "must be later than the step before (and above 0)")
		}
		last = time.Duration(e.After)
		if !e.Remind && len(e.Targets) == 0 && e.Responders == nil && e.Page == nil {
			p.add(f, "does nothing; set remind: true, targets, responders or page")
		}
		checkTargets(&p, f+".targets", e.Targets)
		if e.Responders != nil {
			checkResponders(&p, f+".responders", *e.Responders)
		}
	}
	return p
}

// CleanTarget trims a target and lower-cases its platform, as every target
// is read (route or ask).
func CleanTarget(t Target) Target {
	c := Target{Platform: strings.ToLower(strings.TrimSpace(t.Platform)), Channel: strings.TrimSpace(t.Channel), ThreadTS: t.ThreadTS}
	if len(t.To) > 0 {
		for _, a := range t.To {
			if a = strings.TrimSpace(a); a != "" && !slices.Contains(c.To, a) {
				c.To = append(c.To, a)
			}
		}
		if c.Channel == "" {
			c.Channel = strings.Join(c.To, ",")
		}
	}
	return c
}

// NotConfigured words a target on a platform this bridge has no adapter
// for; configured names the platforms it has.
func NotConfigured(platform string, configured []string) string {
	if len(configured) == 0 {
		return fmt.Sprintf("%q is not configured on this bridge (configured: none; the question can be answered in the web inbox or the API)", platform)
	}
	names := slices.Sorted(slices.Values(configured))
	return fmt.Sprintf("%q is not configured on this bridge (configured: %s)", platform, strings.Join(names, ", "))
}

func checkTimeout(p *problems, field string, d time.Duration) {
	if d < MinTimeout || d > MaxTimeout {
		p.add(field, "must be between 10s and 720h (30 days), got %s", d)
	}
}

// MaxRecipients bounds the addresses of one email target.
const MaxRecipients = 20

// checkTargets checks targets as CleanTarget reads them.
func checkTargets(p *problems, field string, ts []Target) {
	if len(ts) > MaxTargets {
		p.add(field, "at most %d targets", MaxTargets)
	}
	for i, t := range ts {
		t = CleanTarget(t)
		f := fmt.Sprintf("%s[%d]", field, i)
		if t.Platform == "" {
			p.add(f+".platform", "required (slack or discord)")
		}
		switch {
		case t.Platform == "email" && t.Channel == "":
			p.add(f+".to", "required: the addresses to mail, e.g. to: [ana@example.com]")
		case t.Channel == "":
			p.add(f+".channel", "required")
		}
		if len(t.To) > MaxRecipients {
			p.add(f+".to", "at most %d addresses per target", MaxRecipients)
		}
		for j, a := range t.To {
			if TextProblem(a) != "" || strings.ContainsAny(a, ",;<>\" \t\r\n") || strings.Count(a, "@") != 1 || strings.HasPrefix(a, "@") || strings.HasSuffix(a, "@") {
				p.add(fmt.Sprintf("%s.to[%d]", f, j), "%q is not an email address (write it as name@example.com)", a)
			}
		}
	}
}

func checkResponders(p *problems, field string, r Responders) {
	for i, u := range r.Users {
		if !strings.Contains(u, ":") {
			p.add(fmt.Sprintf("%s.users[%d]", field, i), "%q must be <platform>:<id>, e.g. slack:U0123", u)
		}
	}
	if len(r.Groups) == 0 {
		return
	}
	kinds := GroupKinds()
	for _, k := range slices.Sorted(maps.Keys(r.Groups)) {
		if !slices.Contains(kinds, k) {
			p.add(field+"."+k, "not a kind of responders; use users, exclude_requester or a kind of group: %s", strings.Join(kinds, ", "))
		}
	}
}

func checkApprovals(p *problems, n int) {
	if n < 0 || n > MaxApprovals {
		p.add("approvals_required", "from 1 to %d", MaxApprovals)
	}
}

// Route is a named set of targets, responders and defaults.
type Route struct {
	Name       string
	Default    bool
	Targets    []Target
	Responders Responders
	Thread     string // "" or "per-run"
	Timeout    time.Duration
	// ApprovalsRequired > 1 makes answers votes; the question resolves when
	// that many people chose the same option (or at a veto option's vote).
	ApprovalsRequired int
	// OnTimeout answers the question at its deadline instead of expiring it.
	OnTimeout *OnTimeout
	// Escalation runs in order, each step After the question was created.
	Escalation []EscalationStep
	// NoEdit refuses edited arguments on this route's approvals
	// (allow_edit: false in the config).
	NoEdit bool
	// Page wakes people through a pager when a question is asked on this
	// route.
	Page *Page
	// AutoAllow approves, without asking, an approval whose action one of
	// these rules matches (domain/autoallow.go), e.g. "Bash(git status*)".
	AutoAllow []string
	// BatchWindow: approvals of a run asked this close together form one
	// batch (domain/batch.go); 0: the bridge's default.
	BatchWindow time.Duration
	// SuggestFromHistory marks the most frequent earlier answer as
	// recommended when the agent recommended none.
	SuggestFromHistory bool
	// EmailRequireLogin takes an answer from an email link only from a
	// browser signed in to the web inbox (email: {require_login: true}),
	// so an approval cannot be decided from a forwarded mail.
	EmailRequireLogin bool
}

// CheckTargetPlatforms refuses targets on a platform that is not among
// configured, naming each such target.
func CheckTargetPlatforms(targets []Target, configured []string) error {
	var p problems
	for i, t := range targets {
		if !slices.Contains(configured, t.Platform) {
			p.add(fmt.Sprintf("targets[%d].platform", i), "%s", NotConfigured(t.Platform, configured))
		}
	}
	return p.err(EInvalid, "the question is not valid")
}
