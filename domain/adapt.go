package domain

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Questions that adapt (docs/adaptive-questions.md): an item shown only when an earlier
// answer matches (ShowIf), rules for free text (FreeTextRules), options
// chosen by default, and pictures (Image). Every rule is checked here, once,
// for every answer path: ParseAnswer applies them, surfaces only show them.

// Limits of the enhancements. Slack refuses image URLs over 3,000 characters
// and alt text over 2,000 (https://api.slack.com/reference/block-kit/blocks#image).
const (
	MaxImageURLLen = 3000
	MaxImageAltLen = 2000
	MaxPatternLen  = 1000
	MaxHintLen     = 200
)

// Image is a picture shown with an option, an item or the context. The
// bridge never fetches it; surfaces link to it or let the viewer's client
// load it.
type Image struct {
	URL string `json:"url"`
	Alt string `json:"alt"`
}

// ShowIf makes an item conditional on the answer to an earlier item: it is
// asked only when that answer includes one of AnyOf, or none of NoneOf.
type ShowIf struct {
	Item   int      `json:"item"`
	AnyOf  []string `json:"any_of,omitempty"`
	NoneOf []string `json:"none_of,omitempty"`
}

// FreeTextRules are what free text given for an item must satisfy (an
// open-ended item's answer, or "Other" on an item with options).
type FreeTextRules struct {
	Pattern   string      `json:"pattern,omitempty"` // RE2, matched against the whole answer
	MinLength int         `json:"min_length,omitempty"`
	MaxLength int         `json:"max_length,omitempty"`
	Number    *NumberRule `json:"number,omitempty"`
	Hint      string      `json:"hint,omitempty"` // what people should type, e.g. "a ticket id like OPS-123"
}

// NumberRule asks for a number, within bounds when they are set.
type NumberRule struct {
	Min     *float64 `json:"min,omitempty"`
	Max     *float64 `json:"max,omitempty"`
	Integer bool     `json:"integer,omitempty"`
}

// Skipped is an item that was not asked, because its condition was not met.
type Skipped struct {
	Question string `json:"question"`
	Reason   string `json:"reason"`
}

// anchored is the pattern matched against a whole answer.
func (r *FreeTextRules) anchored() string { return `^(?:` + r.Pattern + `)$` }

// HTMLPattern is the pattern as an HTML pattern attribute takes it (the
// browser anchors it itself), or "" when the browser's syntax might read
// it differently from RE2 (then only the bridge checks it).
func (r *FreeTextRules) HTMLPattern() string {
	if r == nil || r.Pattern == "" {
		return ""
	}
	for _, rs := range []string{`(?`, `\A`, `\z`, `\Q`, `[[:`, `\C`} {
		if strings.Contains(r.Pattern, rs) {
			return ""
		}
	}
	return r.Pattern
}

// Describe says the rules in plain words: the hint, then each rule.
func (r *FreeTextRules) Describe() string {
	if r == nil {
		return ""
	}
	var parts []string
	if r.Number != nil {
		n := "a number"
		if r.Number.Integer {
			n = "a whole number"
		}
		switch {
		case r.Number.Min != nil && r.Number.Max != nil:
			n += fmt.Sprintf(" from %s to %s", num(*r.Number.Min), num(*r.Number.Max))
		case r.Number.Min != nil:
			n += fmt.Sprintf(" of at least %s", num(*r.Number.Min))
		case r.Number.Max != nil:
			n += fmt.Sprintf(" of at most %s", num(*r.Number.Max))
		}
		parts = append(parts, n)
	}
	switch {
	case r.MinLength > 0 && r.MaxLength > 0:
		parts = append(parts, fmt.Sprintf("%d to %d characters", r.MinLength, r.MaxLength))
	case r.MinLength > 0:
		parts = append(parts, fmt.Sprintf("at least %d characters", r.MinLength))
	case r.MaxLength > 0:
		parts = append(parts, fmt.Sprintf("at most %d characters", r.MaxLength))
	}
	if r.Pattern != "" {
		parts = append(parts, "matching "+r.Pattern)
	}
	rules := strings.Join(parts, ", ")
	switch {
	case r.Hint != "" && rules != "":
		return r.Hint + " (" + rules + ")"
	case r.Hint != "":
		return r.Hint
	}
	return rules
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Check returns what is wrong with free text s under the rules, in plain
// words that give the hint and the rule, or "" when s is fine.
func (r *FreeTextRules) Check(s string) string {
	if r == nil {
		return ""
	}
	s = strings.TrimSpace(s)
	bad := func(why string) string {
		msg := fmt.Sprintf("%q %s", clip(s, 60), why)
		if r.Hint != "" {
			msg += "; expected " + r.Hint
		}
		return msg
	}
	n := utf8.RuneCountInString(s)
	if r.MinLength > 0 && n < r.MinLength {
		return bad(fmt.Sprintf("is too short: at least %d characters", r.MinLength))
	}
	if r.MaxLength > 0 && n > r.MaxLength {
		return bad(fmt.Sprintf("is too long: at most %d characters", r.MaxLength))
	}
	if nr := r.Number; nr != nil {
		f, err := strconv.ParseFloat(s, 64)
		switch {
		case err != nil || math.IsNaN(f) || math.IsInf(f, 0):
			return bad("is not a number")
		case nr.Integer && f != math.Trunc(f):
			return bad("is not a whole number")
		case nr.Min != nil && f < *nr.Min:
			return bad("is below the least allowed, " + num(*nr.Min))
		case nr.Max != nil && f > *nr.Max:
			return bad("is above the most allowed, " + num(*nr.Max))
		}
	}
	if r.Pattern != "" {
		re, err := regexp.Compile(r.anchored())
		if err != nil || !re.MatchString(s) {
			return bad("does not match the pattern " + r.Pattern)
		}
	}
	return ""
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// checkRules refuses rules that cannot be met or checked.
func checkRules(p *problems, f string, r *FreeTextRules) {
	if r == nil {
		return
	}
	checkLabel(p, f+".hint", r.Hint)
	if utf8.RuneCountInString(r.Hint) > MaxHintLen {
		p.add(f+".hint", "at most %d characters", MaxHintLen)
	}
	if r.Pattern != "" {
		if len(r.Pattern) > MaxPatternLen {
			p.add(f+".pattern", "at most %d characters", MaxPatternLen)
		} else if _, err := regexp.Compile(r.anchored()); err != nil {
			p.add(f+".pattern", "is not a valid RE2 regular expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
	}
	if r.MinLength < 0 {
		p.add(f+".min_length", "must not be negative")
	}
	if r.MaxLength < 0 || r.MaxLength > MaxAnswerLen {
		p.add(f+".max_length", "from 1 to %d", MaxAnswerLen)
	}
	if r.MaxLength > 0 && r.MinLength > r.MaxLength {
		p.add(f+".min_length", "is more than max_length (%d)", r.MaxLength)
	}
	if nr := r.Number; nr != nil && nr.Min != nil && nr.Max != nil && *nr.Min > *nr.Max {
		p.add(f+".number.min", "is more than number.max (%s)", num(*nr.Max))
	}
}

// checkImage refuses an image surfaces cannot show safely: not https, a
// data: URL, too long, or without alt text.
func checkImage(p *problems, f string, img *Image) {
	if img == nil {
		return
	}
	u, err := url.Parse(img.URL)
	switch {
	case strings.TrimSpace(img.URL) == "":
		p.add(f+".url", "required")
	case len(img.URL) > MaxImageURLLen:
		p.add(f+".url", "at most %d characters (Slack's limit)", MaxImageURLLen)
	case err != nil || !strings.EqualFold(u.Scheme, "https") || u.Host == "":
		p.add(f+".url", "must be an absolute https URL (not data:, http: or another scheme)")
	case u.User != nil:
		p.add(f+".url", "must not contain a user name or password")
	case strings.ContainsAny(img.URL, " \t\r\n\"'<>`"):
		p.add(f+".url", "must not contain spaces, quotes or angle brackets; percent-encode them")
	}
	checkLabel(p, f+".alt", img.Alt)
	switch n := utf8.RuneCountInString(strings.TrimSpace(img.Alt)); {
	case n == 0:
		p.add(f+".alt", "required: describe the picture for people who cannot see it")
	case n > MaxImageAltLen:
		p.add(f+".alt", "at most %d characters", MaxImageAltLen)
	}
}

// ImageHost is the host of an image's URL, in lower case.
func (img *Image) ImageHost() string {
	u, err := url.Parse(img.URL)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

// AllowedBy reports whether a viewer's client may load img: an https URL
// whose host is one of hosts (web.image_hosts; "*.example.com" allows the
// subdomains of example.com). Surfaces show any other picture as a link
// with its alt text, so nobody's address goes to a host nobody approved.
func (img *Image) AllowedBy(hosts []string) bool {
	if img == nil || !strings.HasPrefix(strings.ToLower(img.URL), "https://") {
		return false
	}
	host := img.ImageHost()
	if host == "" {
		return false
	}
	for _, h := range hosts {
		h = strings.ToLower(h)
		if h == host || (strings.HasPrefix(h, "*.") && strings.HasSuffix(host, h[1:])) {
			return true
		}
	}
	return false
}

// checkAdaptive checks the enhancements of items: conditions point back at
// an earlier item with options and name its labels; rules and images are
// sound; defaults fit the item.
func checkAdaptive(p *problems, items []Item) {
	for i, it := range items {
		f := fmt.Sprintf("questions[%d]", i)
		checkImage(p, f+".image", it.Image)
		checkRules(p, f+".other", it.Other)
		defaults := 0
		for j, o := range it.Options {
			checkImage(p, fmt.Sprintf("%s.options[%d].image", f, j), o.Image)
			if o.Default {
				defaults++
			}
		}
		if defaults > 1 && !it.MultiSelect {
			p.add(f+".options", "%d options are marked default; a single-select question takes one default", defaults)
		}
		c := it.ShowIf
		if c == nil {
			continue
		}
		cf := f + ".show_if"
		switch {
		case c.Item == i:
			p.add(cf+".item", "points at this question itself; a condition needs an earlier question")
			continue
		case c.Item > i:
			p.add(cf+".item", "points forward, at questions[%d]; a condition needs an earlier question", c.Item)
			continue
		case c.Item < 0:
			p.add(cf+".item", "must be the index of an earlier question (0 is the first)")
			continue
		}
		if items[c.Item].OpenEnded() {
			p.add(cf+".item", "questions[%d] is open-ended (free text); a condition needs a question with options", c.Item)
			continue
		}
		switch {
		case len(c.AnyOf) == 0 && len(c.NoneOf) == 0:
			p.add(cf, "give any_of or none_of: the labels of questions[%d] that show this question", c.Item)
		case len(c.AnyOf) > 0 && len(c.NoneOf) > 0:
			p.add(cf, "give either any_of or none_of, not both")
		}
		for k, l := range append(append([]string{}, c.AnyOf...), c.NoneOf...) {
			key := "any_of"
			idx := k
			if k >= len(c.AnyOf) {
				key, idx = "none_of", k-len(c.AnyOf)
			}
			if _, ok := MatchOption(items[c.Item], l); !ok {
				p.add(fmt.Sprintf("%s.%s[%d]", cf, key, idx), "%q is not an option of questions[%d]", l, c.Item)
			}
		}
	}
}

// Shown tells, for each item, whether it is asked given the choices made so
// far (labels, values or free text per item, as ParseAnswer reads them). An
// item whose condition's item is itself hidden is hidden.
func Shown(items []Item, choices [][]string) []bool {
	shown := make([]bool, len(items))
	for i, it := range items {
		shown[i] = conditionMet(items, shown, choices, it.ShowIf, i)
	}
	return shown
}

func conditionMet(items []Item, shown []bool, choices [][]string, c *ShowIf, i int) bool {
	if c == nil {
		return true
	}
	if c.Item < 0 || c.Item >= i || !shown[c.Item] {
		return false
	}
	var picked []string
	if c.Item < len(choices) {
		picked = choices[c.Item]
	}
	has := func(labels []string) bool {
		for _, s := range picked {
			o, ok := MatchOption(items[c.Item], s)
			if !ok {
				continue
			}
			for _, l := range labels {
				if lo, ok := MatchOption(items[c.Item], l); ok && lo.Label == o.Label {
					return true
				}
			}
		}
		return false
	}
	if len(c.AnyOf) > 0 {
		return has(c.AnyOf)
	}
	return !has(c.NoneOf)
}

// ConditionText says when an item is shown, for people: `only if "Auth"
// is API key or OAuth`.
func ConditionText(items []Item, c *ShowIf) string {
	if c == nil || c.Item < 0 || c.Item >= len(items) {
		return ""
	}
	name := items[c.Item].Header
	if name == "" {
		name = clip(items[c.Item].Question, 80)
	}
	if len(c.AnyOf) > 0 {
		return fmt.Sprintf("asked only if “%s” is %s", name, strings.Join(c.AnyOf, " or "))
	}
	return fmt.Sprintf("asked only if “%s” is not %s", name, strings.Join(c.NoneOf, " or "))
}

// skipReason says why item i was not asked.
func skipReason(items []Item, i int, shown []bool) string {
	c := items[i].ShowIf
	if c != nil && c.Item >= 0 && c.Item < i && !shown[c.Item] {
		return fmt.Sprintf("not asked: questions[%d], which it depends on, was not asked", c.Item)
	}
	return "not asked: " + ConditionText(items, c) + ", and the answer was otherwise"
}

// HasDefaults reports whether any option is marked default.
func HasDefaults(items []Item) bool {
	for _, it := range items {
		for _, o := range it.Options {
			if o.Default {
				return true
			}
		}
	}
	return false
}

// DefaultChoices is each item's default options' labels, nil for an item
// with none.
func DefaultChoices(items []Item) [][]string {
	out := make([][]string, len(items))
	for i, it := range items {
		for _, o := range it.Options {
			if o.Default {
				out[i] = append(out[i], o.Label)
			}
		}
	}
	return out
}

// DefaultsRequest is the answer "Submit defaults" gives: every item asked
// under the defaults answered with its defaults. ok is false when an item
// that would be asked has no default.
func DefaultsRequest(items []Item) (RespondRequest, bool) {
	choices := DefaultChoices(items)
	shown := Shown(items, choices)
	req := RespondRequest{Answers: map[string]StringList{}}
	for i, it := range items {
		if !shown[i] {
			continue
		}
		if len(choices[i]) == 0 {
			return RespondRequest{}, false
		}
		req.Answers[it.Question] = StringList(choices[i])
	}
	return req, len(req.Answers) > 0
}

// DefaultsSummary names what "Submit defaults" answers, item by item in
// order ("Auth: OAuth; Regions: eu-west, us-east"), or "" when it cannot
// be offered (DefaultsRequest is not ok).
func DefaultsSummary(items []Item) string {
	req, ok := DefaultsRequest(items)
	if !ok {
		return ""
	}
	var parts []string
	for _, it := range items {
		picked, asked := req.Answers[it.Question]
		if !asked {
			continue
		}
		name := it.Header
		if name == "" {
			name = clip(it.Question, 80)
		}
		parts = append(parts, name+": "+strings.Join(picked, ", "))
	}
	return strings.Join(parts, "; ")
}

// FreeTextProblem is what is wrong with s as free text for it (an answer
// that names none of its options), or "" when it may be sent: the check
// ParseAnswer applies, for surfaces that refuse on the field itself.
func FreeTextProblem(it Item, s string) string {
	if _, ok := MatchOption(it, strings.TrimSpace(s)); ok {
		return ""
	}
	if utf8.RuneCountInString(strings.TrimSpace(s)) > MaxAnswerLen {
		return fmt.Sprintf("free text at most %d characters", MaxAnswerLen)
	}
	return it.Other.Check(s)
}
