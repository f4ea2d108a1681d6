package domain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of an ask (docs/openapi.yaml).
const (
	MaxItems          = 4
	MinOptions        = 2
	MaxOptions        = 4
	MaxHeaderLen      = 12
	MaxQuestionLen    = 2000
	MaxLabelLen       = 200
	MaxDescriptionLen = 1000
	MaxValueLen       = 1000
	MaxContextLen     = 8000
	MaxIDLen          = 200
	MaxTargets        = 10
	MinTimeout        = 10 * time.Second
	MaxTimeout        = 30 * 24 * time.Hour
	DefaultTimeout    = 5 * time.Minute
	ReattachWindow    = 10 * time.Minute
)

// Duration is a time.Duration that reads a Go duration string ("30m") or a
// number of seconds (1800 or "1800") from JSON.
type Duration time.Duration

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := ParseDuration(s)
		if err != nil {
			return err
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return fmt.Errorf("want a duration such as \"30m\" or a number of seconds")
	}
	*d = Duration(time.Duration(secs * float64(time.Second)))
	return nil
}

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// ParseDuration reads "30m", "1h30m" or a plain number of seconds.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(secs * float64(time.Second)), nil
	}
	if strings.HasSuffix(s, "d") {
		if days, err := strconv.ParseFloat(strings.TrimSuffix(s, "d"), 64); err == nil {
			return time.Duration(days * 24 * float64(time.Hour)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as \"30m\" or a number of seconds", s)
	}
	return d, nil
}

// AskRequest is the body of POST /api/projects/{p}/agent-questions.
type AskRequest struct {
	RunID       string `json:"run_id,omitempty"`
	AgentID     string `json:"agent_id,omitempty"`
	AgentName   string `json:"agent_name,omitempty"`
	ParentRunID string `json:"parent_run_id,omitempty"`
	Kind        string `json:"kind,omitempty"`
	Questions   []Item `json:"questions,omitempty"`
	// Shorthand for a single item.
	Question       string         `json:"question,omitempty"`
	Header         string         `json:"header,omitempty"`
	MultiSelect    bool           `json:"multiSelect,omitempty"`
	Options        []Option       `json:"options,omitempty"`
	Other          *FreeTextRules `json:"other,omitempty"`
	Image          *Image         `json:"image,omitempty"`
	Context        string         `json:"context,omitempty"`
	ContextImage   *Image         `json:"context_image,omitempty"`
	Targets        []Target       `json:"targets,omitempty"`
	Route          string         `json:"route,omitempty"`
	Responders     *Responders    `json:"responders,omitempty"`
	Timeout        *Duration      `json:"timeout,omitempty"`
	Resume         *ResumeRequest `json:"resume,omitempty"`
	IdempotencyKey string         `json:"idempotency_key,omitempty"`
	// On-call approvals (issue: who may answer, N-of-M, default on timeout).
	RequestedBy       string     `json:"requested_by,omitempty"`
	ApprovalsRequired *int       `json:"approvals_required,omitempty"`
	OnTimeout         *OnTimeout `json:"on_timeout,omitempty"`
	// Action is the tool call an approval decides (domain/action.go); it
	// makes the question an approval.
	Action *Action `json:"action,omitempty"`
}

// ResumeRequest is the resume block of an ask.
type ResumeRequest struct {
	URL string `json:"url"`
}

// Items returns the request's items, turning the shorthand into one item.
func (r *AskRequest) Items() []Item {
	if len(r.Questions) > 0 || r.Question == "" {
		return r.Questions
	}
	return []Item{{Question: r.Question, Header: r.Header, MultiSelect: r.MultiSelect, Options: r.Options, Other: r.Other, Image: r.Image}}
}

// NormalizeItems trims texts and fills option values with their labels.
func NormalizeItems(items []Item) []Item {
	out := make([]Item, len(items))
	for i, it := range items {
		it.Question = strings.TrimSpace(it.Question)
		it.Header = strings.TrimSpace(it.Header)
		opts := make([]Option, len(it.Options))
		for j, o := range it.Options {
			o.Label = strings.TrimSpace(o.Label)
			o.Description = strings.TrimSpace(o.Description)
			if strings.TrimSpace(o.Value) == "" {
				o.Value = o.Label
			}
			opts[j] = o
		}
		if len(opts) == 0 {
			it.MultiSelect = false
		}
		it.Options = opts
		out[i] = it
	}
	return out
}

// ValidateItems checks items against the limits of docs/openapi.yaml and returns
// every problem found, each naming its field.
func ValidateItems(items []Item) []Detail {
	var p problems
	if len(items) == 0 {
		p.add("questions", "at least 1 question is required")
	}
	if len(items) > MaxItems {
		p.add("questions", "at most %d questions, got %d", MaxItems, len(items))
	}
	texts := map[string]int{}
	for i, it := range items {
		f := fmt.Sprintf("questions[%d]", i)
		checkText(&p, f+".question", it.Question)
		checkLabel(&p, f+".header", it.Header)
		switch {
		case it.Question == "":
			p.add(f+".question", "required")
		case utf8.RuneCountInString(it.Question) > MaxQuestionLen:
			p.add(f+".question", "at most %d characters", MaxQuestionLen)
		default:
			key := strings.ToLower(it.Question)
			if j, dup := texts[key]; dup {
				p.add(f+".question", "same text as questions[%d]; each question must be distinct", j)
			} else {
				texts[key] = i
			}
		}
		if n := utf8.RuneCountInString(it.Header); n > MaxHeaderLen {
			p.add(f+".header", "at most %d characters", MaxHeaderLen)
		}
		if n := len(it.Options); n != 0 && (n < MinOptions || n > MaxOptions) {
			p.add(f+".options", "%d to %d options, or none for an open-ended question; got %d", MinOptions, MaxOptions, n)
		}
		labels := map[string]int{}
		for j, o := range it.Options {
			of := fmt.Sprintf("%s.options[%d]", f, j)
			checkLabel(&p, of+".label", o.Label)
			checkText(&p, of+".description", o.Description)
			checkLabel(&p, of+".value", o.Value)
			switch {
			case o.Label == "":
				p.add(of+".label", "required")
			case utf8.RuneCountInString(o.Label) > MaxLabelLen:
				p.add(of+".label", "at most %d characters", MaxLabelLen)
			case IsOtherLabel(o.Label):
				p.add(of+".label", "%s", OtherOptionProblem)
			default:
				key := Skeleton(o.Label)
				if k, dup := labels[key]; dup {
					if strings.EqualFold(it.Options[k].Label, o.Label) {
						p.add(of+".label", "same label as options[%d]; labels must be unique within a question", k)
					} else {
						p.add(of+".label", "looks the same as options[%d] (%q); labels must be told apart by what people read", k, it.Options[k].Label)
					}
				} else {
					labels[key] = j
				}
			}
			if utf8.RuneCountInString(o.Description) > MaxDescriptionLen {
				p.add(of+".description", "at most %d characters", MaxDescriptionLen)
			}
			if utf8.RuneCountInString(o.Value) > MaxValueLen {
				p.add(of+".value", "at most %d characters", MaxValueLen)
			}
		}
		// An answer is matched to an option by value or label: a value that
		// names another option's label would make "Deny" mean Allow.
		for j, o := range it.Options {
			if o.Value == "" || o.Value == o.Label {
				continue
			}
			if k, ok := labels[Skeleton(o.Value)]; ok && k != j {
				p.add(fmt.Sprintf("%s.options[%d].value", f, j), "%q is the label of options[%d]; a value may not name another option", o.Value, k)
			}
		}
	}
	checkAdaptive(&p, items)
	return p
}

// Fingerprint identifies a question's items for re-attaching identical re-asks.
func Fingerprint(items []Item) string {
	b, _ := json.Marshal(items)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// AskDefaults are the values an ask falls back on, resolved from its agent
// and route by the Router.
type AskDefaults struct {
	Targets           []Target
	Responders        Responders
	Timeout           time.Duration
	ApprovalsRequired int
	OnTimeout         *OnTimeout
	Escalation        []EscalationStep
	// CheckResumeURL, if set, refuses resume urls the bridge may not
	// reach (docs/security.md); its error is the problem shown for resume.url.
	CheckResumeURL func(url string) error
}

// MaxApprovals bounds approvals_required.
const MaxApprovals = 20

// BuildQuestion validates an ask and turns it into a new pending question.
// It reports every problem at once. The caller sets ID, times and project.
// hasSecret tells whether a webhook secret is available for webhook mode.
func BuildQuestion(req *AskRequest, def AskDefaults, hasSecret bool) (*Question, time.Duration, error) {
	if strings.TrimSpace(req.ParentRunID) != "" {
		return nil, 0, Errorf(ESubagentNotAllowed, "only parent conversations can ask user questions")
	}
	var p problems
	if len(req.Questions) > 0 && (req.Question != "" || len(req.Options) > 0 || req.Other != nil || req.Image != nil) {
		p.add("question", "use either questions[] or the question+options shorthand, not both")
	}
	items := NormalizeItems(req.Items())
	if len(req.Questions) == 0 && req.Question == "" && len(req.Options) > 0 {
		p.add("question", "required with options")
	}
	p = append(p, ValidateItems(items)...)

	kind := req.Kind
	if kind == "" && req.Action != nil {
		kind = KindApproval
	}
	if kind == "" {
		kind = KindQuestion
	}
	if req.Action != nil && kind != KindApproval {
		p.add("action", "only an approval (kind \"approval\") carries an action")
	}
	action := prepareAction(&p, req.Action)
	if action != nil && len(items) == 1 && !items[0].OpenEnded() {
		checkApprovalOptions(&p, items[0])
	}
	if kind != KindQuestion && kind != KindApproval {
		p.add("kind", "must be %q or %q", KindQuestion, KindApproval)
	}
	checkID(&p, "run_id", req.RunID)
	checkID(&p, "agent_id", req.AgentID)
	checkID(&p, "idempotency_key", req.IdempotencyKey)
	checkLabel(&p, "route", req.Route)
	checkLabel(&p, "agent_name", req.AgentName)
	checkText(&p, "context", req.Context)
	checkImage(&p, "context_image", req.ContextImage)
	for i, t := range req.Targets {
		checkLabel(&p, fmt.Sprintf("targets[%d].channel", i), t.Channel)
		checkLabel(&p, fmt.Sprintf("targets[%d].thread_ts", i), t.ThreadTS)
	}
	if utf8.RuneCountInString(req.AgentName) > MaxIDLen {
		p.add("agent_name", "at most %d characters", MaxIDLen)
	}
	if utf8.RuneCountInString(req.Context) > MaxContextLen {
		p.add("context", "at most %d characters", MaxContextLen)
	}

	timeout := def.Timeout
	if req.Timeout != nil {
		timeout = time.Duration(*req.Timeout)
		checkTimeout(&p, "timeout", timeout)
	}
	if timeout == 0 {
		timeout = DefaultTimeout
	}

	targets := req.Targets
	if len(targets) == 0 {
		targets = def.Targets
	}
	checkTargets(&p, "targets", targets) // the rules of a route's targets (route.go)
	clean := make([]Target, 0, len(targets))
	for _, t := range targets {
		clean = append(clean, CleanTarget(t))
	}

	responders := def.Responders
	if req.Responders != nil {
		responders = *req.Responders
	}
	checkResponders(&p, "responders", responders)

	approvals := def.ApprovalsRequired
	if req.ApprovalsRequired != nil {
		approvals = *req.ApprovalsRequired
	}
	checkApprovals(&p, approvals)
	if approvals > 1 && (len(items) != 1 || items[0].OpenEnded() || items[0].MultiSelect) {
		p.add("approvals_required", "several approvals need exactly one single-select question with options")
	}
	if approvals < 2 {
		approvals = 0
	}
	onTimeout := def.OnTimeout
	if req.OnTimeout != nil {
		onTimeout = req.OnTimeout
	}
	if onTimeout != nil && onTimeout.UseDefaults {
		switch {
		case strings.TrimSpace(onTimeout.Answer) != "":
			p.add("on_timeout", "give either answer or use_defaults, not both")
		case !HasDefaults(items):
			p.add("on_timeout.use_defaults", "no option is marked default; mark the defaults with \"default\": true")
		default:
			if _, ok := DefaultsRequest(items); !ok {
				choices := DefaultChoices(items)
				shown := Shown(items, choices)
				for i := range items {
					if shown[i] && len(choices[i]) == 0 {
						p.add(fmt.Sprintf("questions[%d].options", i), "no option is marked default, but on_timeout.use_defaults answers every question asked with its defaults")
					}
				}
			}
		}
	} else if onTimeout != nil {
		switch {
		case len(items) != 1:
			p.add("on_timeout.answer", "a default answer needs exactly one question")
		case strings.TrimSpace(onTimeout.Answer) == "":
			p.add("on_timeout.answer", "required")
		case !items[0].OpenEnded():
			if _, ok := MatchOption(items[0], onTimeout.Answer); !ok {
				p.add("on_timeout.answer", "%q is not one of the options", onTimeout.Answer)
			}
		}
	}
	checkTimeoutOutcome(&p, kind == KindApproval || approvals > 1, items, req.OnTimeout, onTimeout)
	if req.RequestedBy != "" && !strings.Contains(req.RequestedBy, ":") {
		p.add("requested_by", "must be <platform>:<id>, e.g. slack:U0123")
	}

	var resume *Resume
	if req.Resume != nil && req.Resume.URL != "" {
		u, err := url.Parse(req.Resume.URL)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			p.add("resume.url", "must be an absolute http or https URL")
		case u.User != nil:
			p.add("resume.url", "must not contain a user name or password (user:pass@); the webhook is authenticated by its signature")
		case !hasSecret:
			p.add("resume.url", "webhook mode needs a signing secret: set webhooks.secret in the config file or BRIDGE_WEBHOOK_SECRET")
		case def.CheckResumeURL != nil:
			if err := def.CheckResumeURL(req.Resume.URL); err != nil {
				p.add("resume.url", "%s", err.Error())
			}
		}
		resume = &Resume{URL: req.Resume.URL}
	}
	if err := p.err(EInvalid, "the question is not valid"); err != nil {
		return nil, 0, err
	}
	q := &Question{
		RunID: req.RunID, AgentID: req.AgentID, AgentName: req.AgentName,
		Kind: kind, Status: StatusPending, Questions: items, Context: req.Context, ContextImage: req.ContextImage,
		Targets: clean, Responders: responders, Resume: resume, Route: req.Route,
		IdempotencyKey: req.IdempotencyKey, Fingerprint: actionFingerprint(items, action),
		RequestedBy: req.RequestedBy, ApprovalsRequired: approvals, OnTimeout: onTimeout, Escalation: def.Escalation,
		Action: action,
	}
	return q, timeout, nil
}

func checkID(p *problems, field, v string) {
	checkLabel(p, field, v)
	if utf8.RuneCountInString(v) > MaxIDLen {
		p.add(field, "at most %d characters", MaxIDLen)
	}
	if strings.ContainsAny(v, "\n\r\t ") {
		p.add(field, "must not contain spaces or line breaks")
	}
}

// checkApprovalOptions refuses an approval of an action whose options do
// not say, by rule (ItemTones), which one allows and which one denies: the
// person reads the labels, and the choice they read decides.
func checkApprovalOptions(p *problems, it Item) {
	allow, deny := false, false
	for _, t := range ItemTones(it) {
		allow = allow || t == ToneAllow
		deny = deny || t == ToneDeny
	}
	if allow && deny {
		return
	}
	missing := "allows"
	if allow {
		missing = "denies"
	}
	p.add("questions[0].options", "no option %s the action: an approval needs an option that allows it (Allow, Yes, Approve…) "+
		"and one that denies it (Deny, No, Reject, Cancel…), told apart by their labels, or exactly two options of which the first allows", missing)
}

// OtherOptionProblem is the problem reported for an option that is the
// free-text "Other" every surface adds by itself (IsOtherLabel).
const OtherOptionProblem = `remove the "Other" option; the person can always answer in their own words ("Other" is added automatically)`

// IsOtherLabel reports whether an option's label is the free-text choice
// every surface adds: "Other", "Other (please specify)", "Something
// else", in any case, with or without a trailing ".", "…" or ":".
func IsOtherLabel(label string) bool {
	l := strings.TrimRight(strings.ToLower(strings.TrimSpace(label)), ".…: ")
	switch l {
	case "other", "other (please specify)", "other (specify)", "something else":
		return true
	}
	return false
}
