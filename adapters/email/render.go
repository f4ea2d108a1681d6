package email

import (
	"bytes"
	"embed"
	htmltemplate "html/template"
	"net/url"
	"slices"
	"strings"
	texttemplate "text/template"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/actiontext"
	"github.com/askbridge/askbridge/adapters/internal/approval"
	"github.com/askbridge/askbridge/domain"
)

// What a sensible mail holds; longer text is cut with "…" and the mail
// links to the question page for the rest.
const (
	maxContextRunes  = 3000
	maxQuestionRunes = 1000
	maxLabelRunes    = 200
	maxDescRunes     = 300
	maxCommandRunes  = 2000
	maxArgsRunes     = 2000
	maxDiffRunes     = 4000
	maxSubjectRunes  = 120
	maxAltRunes      = 300
)

//go:embed templates
var templateFS embed.FS

var (
	mailText = texttemplate.Must(texttemplate.New("").ParseFS(templateFS, "templates/mail.txt"))
	mailHTML = htmltemplate.Must(htmltemplate.New("").Funcs(htmltemplate.FuncMap{"lines": lines}).ParseFS(templateFS, "templates/mail.html"))
)

// mailKind is which mail of a question's thread one is.
type mailKind string

const (
	kindPost   mailKind = "post"   // the question
	kindRemind mailKind = "remind" // a reminder, in the thread
	kindFinal  mailKind = "final"  // the outcome, the thread's last mail
)

// mailView is what one mail shows to one recipient.
type mailView struct {
	Kind       mailKind
	Recipient  string
	Agent      string
	Approval   bool
	Context    string
	Items      []itemView
	FormLink   string // the one "Answer" link, when options are not links
	Action     *actionView
	Deadline   string
	Others     []string // who else was asked
	PageLink   string   // the question page, for what was cut
	Cut        bool     // something was shortened: see PageLink
	Outcome    string   // final: the outcome line
	Tally      string   // a reminder of a vote
	Expired    bool
	Title      string
	Intro      string
	Footer     string
	AnswerHint string

	// DefaultsLink confirms every item asked answered with its defaults
	// (Defaults says which), when options are not links themselves.
	DefaultsLink string
	Defaults     string
	ContextImage *imageView
	History      string // "Last 2 times: …" (domain.HistoryText)
}

type itemView struct {
	Header   string
	Question string
	Multi    bool
	Open     bool
	Options  []optionView
	Image    *imageView
	// Condition says when the item is asked (show_if), Rules what free
	// text it takes (other), in words.
	Condition string
	Rules     string
}

// imageView is a picture in a mail. Mail programs load no remote picture
// by default, and one that does tells the picture's host who read the
// mail; so, as in the web inbox, only a host listed in web.image_hosts
// gets an <img> (Show), any other is a link with its alt text.
type imageView struct {
	URL  string
	Alt  string
	Show bool
}

func newImageView(img *domain.Image, hosts []string) *imageView {
	if img == nil {
		return nil
	}
	return &imageView{URL: img.URL, Alt: domain.Shorten(strings.Join(strings.Fields(img.Alt), " "), maxAltRunes), Show: img.AllowedBy(hosts)}
}

type optionView struct {
	Label       string
	Description string
	Recommended bool
	Default     bool
	Image       *imageView
	Tone        string // "allow", "deny" or ""
	Verb        string // "Allow" or "Deny" when the label does not say it already
	Link        string // the confirmation page for this choice; empty: see FormLink
}

type actionView struct {
	Tool      string
	Command   string // a Bash command, shown as a code block
	Arguments string
	Diff      []diffLine
	DiffMore  string
}

type diffLine struct {
	Mark string // "+", "−", " " or "" (a header)
	Text string
	Kind string // "add", "del", "ctx", "head"
}

// cut shortens s to n runes and notes that something was cut.
func (v *mailView) cut(s string, n int) string {
	out := domain.Shorten(s, n)
	if out != s {
		v.Cut = true
	}
	return out
}

// linkFunc makes the link of one choice for the recipient.
type linkFunc func(choice int) (string, error)

// buildView renders q for one recipient; link signs the recipient's links
// (nil for mails without links); hosts are web.image_hosts.
func buildView(q *domain.Question, kind mailKind, recipient, pageLink string, others []string, now time.Time, link linkFunc, hosts []string) (*mailView, error) {
	v := &mailView{Kind: kind, Recipient: recipient, Agent: q.AgentName, Approval: approval.Is(q), PageLink: pageLink, Others: others}
	if v.Agent == "" {
		v.Agent = q.AgentID
	}
	v.Agent = v.cut(v.Agent, 80)
	v.Title = v.cut(subjectOf(q), maxSubjectRunes)
	v.Context = v.cut(q.Context, maxContextRunes)
	v.ContextImage = newImageView(q.ContextImage, hosts)
	v.History = v.cut(domain.HistoryText(q.History, now), maxDescRunes)
	v.Deadline = deadline(q, now)
	tones := approval.Tones(q)
	optionLinks := link != nil && q.Status == domain.StatusPending && len(q.Questions) == 1 &&
		!q.Questions[0].MultiSelect && !q.Questions[0].OpenEnded()
	for _, it := range q.Questions {
		iv := itemView{Header: v.cut(it.Header, 40), Question: v.cut(it.Question, maxQuestionRunes), Multi: it.MultiSelect, Open: it.OpenEnded(),
			Image: newImageView(it.Image, hosts), Condition: domain.ConditionText(q.Questions, it.ShowIf)}
		if !v.Approval {
			iv.Rules = v.cut(it.Other.Describe(), maxDescRunes)
		}
		for j, o := range it.Options {
			ov := optionView{Label: v.cut(o.Label, maxLabelRunes), Description: v.cut(o.Description, maxDescRunes), Recommended: o.Recommended,
				Default: o.Default, Image: newImageView(o.Image, hosts)}
			if tones != nil {
				switch tones[j] {
				case approval.Allow:
					ov.Tone, ov.Verb = "allow", "Allow"
				case approval.Deny:
					ov.Tone, ov.Verb = "deny", "Deny"
				}
				if first, _, _ := strings.Cut(strings.ToLower(o.Label), " "); first == strings.ToLower(ov.Verb) {
					ov.Verb = ""
				}
			}
			if optionLinks {
				l, err := link(j)
				if err != nil {
					return nil, err
				}
				ov.Link = l
			}
			iv.Options = append(iv.Options, ov)
		}
		v.Items = append(v.Items, iv)
	}
	if link != nil && q.Status == domain.StatusPending && !optionLinks {
		l, err := link(FormChoice)
		if err != nil {
			return nil, err
		}
		v.FormLink = l
		// One link answers with the defaults; where each option is its
		// own link, the default's link (marked) is that one action.
		if sum := domain.DefaultsSummary(q.Questions); sum != "" && !v.Approval {
			if v.DefaultsLink, err = link(DefaultsChoice); err != nil {
				return nil, err
			}
			v.Defaults = v.cut(sum, maxQuestionRunes)
		}
	}
	if q.Action != nil {
		v.Action = buildAction(v, q.Action)
	}
	v.Tally = domain.TallyLine(q)
	switch kind {
	case kindPost:
		v.Intro = v.Agent + " asks you:"
		if v.Approval {
			v.Intro = v.Agent + " asks for your approval:"
		}
	case kindRemind:
		v.Intro = "Reminder: " + v.Agent + " is still waiting for an answer."
	case kindFinal:
		v.Outcome = outcome(q)
		v.Intro = v.Outcome + " — nothing more to do."
		v.Items, v.FormLink, v.DefaultsLink, v.Action, v.Context, v.ContextImage, v.History = nil, "", "", nil, "", nil, ""
	}
	if link != nil && q.Status == domain.StatusPending {
		v.AnswerHint = "Opening a link shows a page where you confirm; nothing is decided until you press the button on that page."
	}
	v.Footer = "Sent by askbridge to " + recipient + " because an agent asked for an answer."
	return v, nil
}

func buildAction(v *mailView, a *domain.Action) *actionView {
	av := &actionView{Tool: v.cut(a.Tool, 100)}
	text, bash := actiontext.Arguments(a)
	if bash {
		av.Command = v.cut(text, maxCommandRunes)
	} else {
		av.Arguments = v.cut(text, maxArgsRunes)
	}
	if a.Diff != "" {
		d, shown, total := actiontext.CutDiff(a.Diff, maxDiffRunes)
		if shown < total {
			v.Cut = true
		}
		for _, l := range strings.Split(strings.TrimRight(d, "\n"), "\n") {
			switch {
			case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "@@"), strings.HasPrefix(l, "⋯"):
				av.Diff = append(av.Diff, diffLine{Text: l, Kind: "head"})
			case strings.HasPrefix(l, "+"):
				av.Diff = append(av.Diff, diffLine{Mark: "+", Text: l[1:], Kind: "add"})
			case strings.HasPrefix(l, "-"):
				av.Diff = append(av.Diff, diffLine{Mark: "−", Text: l[1:], Kind: "del"})
			default:
				av.Diff = append(av.Diff, diffLine{Mark: " ", Text: strings.TrimPrefix(l, " "), Kind: "ctx"})
			}
		}
	}
	return av
}

// subjectOf is the thread's subject: the same on every mail of it, so
// mail programs keep them together.
func subjectOf(q *domain.Question) string {
	first := ""
	if len(q.Questions) > 0 {
		first = q.Questions[0].Question
	}
	first = strings.Join(strings.Fields(first), " ")
	agent := q.AgentName
	if agent == "" {
		agent = q.AgentID
	}
	if approval.Is(q) {
		return "Approval needed: " + first
	}
	return agent + " asks: " + first
}

// deadline says when the question expires, in words and as a UTC time.
func deadline(q *domain.Question, now time.Time) string {
	if q.ExpiresAt.IsZero() {
		return ""
	}
	return "Answer within " + domain.HumanDuration(q.ExpiresAt.Sub(now)) + " (by " + q.ExpiresAt.UTC().Format("Mon 2 Jan 15:04 MST") + ")."
}

// outcome is the final line: "Allowed by maria on Slack".
func outcome(q *domain.Question) string {
	if verb, note, ok := approval.Verdict(q); ok {
		s := verb + " by " + personWords(q.RespondedBy)
		if note != "" {
			s += ": “" + note + "”"
		}
		return s
	}
	if q.Status == domain.StatusAnswered && !q.Defaulted && q.ApprovalsRequired < 2 {
		return "Answered by " + personWords(q.RespondedBy) + ": " + domain.AnswerLine(q)
	}
	return domain.OutcomeLine(q)
}

// personWords names a person with their surface: "maria on Slack".
func personWords(p *domain.Person) string {
	if p == nil {
		return "someone"
	}
	name := domain.PersonName(p)
	if p.Name == "" {
		name = p.ID
	}
	if p.Platform == "" {
		return name
	}
	return name + " " + domain.OnPlatform(p.Platform)
}

// othersAsked names the places and addresses besides recipient.
func othersAsked(q *domain.Question, recipient string) []string {
	var out []string
	for _, t := range q.Targets {
		if t.Platform == Platform {
			for _, a := range recipientsOf(t) {
				if a != recipient && !slices.Contains(out, a) {
					out = append(out, a)
				}
			}
			continue
		}
		if n := domain.TargetName(t); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// lines splits text into its lines, for HTML that keeps them without
// white-space: pre-wrap (which many mail programs ignore).
func lines(s string) []string { return strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") }

// render returns the text and HTML parts of v.
func render(v *mailView) (text, html string, err error) {
	var tb, hb bytes.Buffer
	if err := mailText.ExecuteTemplate(&tb, "mail.txt", v); err != nil {
		return "", "", err
	}
	if err := mailHTML.ExecuteTemplate(&hb, "mail.html", v); err != nil {
		return "", "", err
	}
	return tb.String(), hb.String(), nil
}

// questionPage is the web inbox's page of q under base.
func questionPage(base, id string) string {
	if base == "" {
		return ""
	}
	return strings.TrimRight(base, "/") + "/questions/" + url.PathEscape(id)
}
