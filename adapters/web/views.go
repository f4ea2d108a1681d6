package web

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/approval"
	"github.com/askbridge/askbridge/domain"
)

// pageData is what every page template receives.
type pageData struct {
	Title   string
	Page    string // inbox, question, run, login, refused
	Viewer  *viewer
	CSRF    string
	Flash   string
	Error   *pageError
	Cards   []*cardView
	Card    *cardView
	Run     *runView
	Batch   *batchView
	History *historyView
	// Inbox paging: Total pending questions, the page shown.
	Total     int
	Paging    paging
	Projects  []string
	LocalMode bool
	Next      string
	Now       time.Time
	Origin    string // scheme://host of this page, for the local quick start
}

// pageError is a problem shown on the page instead of an error status page.
type pageError struct {
	Title   string
	Message string
	Details []domain.Detail
}

// cardView is one question as the templates show it.
type cardView struct {
	Q          *domain.Question
	Title      string // the card's heading
	Items      []itemView
	Unread     bool
	Context    template.HTML
	Responders string
	// Approvals: an approval that needs several people; Tally is how the
	// votes stand ("Approve: 1 of 2 approvals — alice"), empty before any.
	Approvals int
	Tally     string
	// MyVote is the option the viewer voted for, while votes are missing.
	MyVote string
	Agent  string
	Error  *pageError
	// Unsent is what a stale form carried ("Which region? — eu-west").
	Unsent []string
	// Buttons: one single-select item, answered with one click per option.
	Buttons bool
	// Approval: an approval (Allow / Deny): no "Other"; Note offers
	// "Deny with note…" (see adapters/internal/approval).
	Approval bool
	Note     bool
	Return   string // where the form returns: "inbox" or "question"
	CSRF     string
	// Action is an approval's exact action (action.go), else nil.
	Action *actionView
	// History: what was answered the last few times ("Last 3 times: …").
	History string
	// Defaults: the question has options chosen by default; with Buttons,
	// where nothing can be pre-selected, they are marked on the buttons.
	Defaults bool
	// BatchHead is the Allow all / Deny all strip shown before this card,
	// the first of its batch's calls shown together (batches.go); InBatch
	// marks every card shown under such a strip.
	BatchHead *batchHead
	InBatch   bool
}

type itemView struct {
	Index    int
	Field    string // form field name of the item's choices
	Text     string // form field name of the item's free text
	Item     domain.Item
	Options  []optionView
	Open     bool
	Multi    bool
	Answer   string   // final: what was answered
	Chosen   []string // final: the selections
	PrevText string   // after an invalid submit: the text typed
	Other    bool     // after an invalid submit: "Other" was picked
	Problem  string   // after an invalid submit: what is wrong with it
	// Cond: a conditional item (show_if): the form values of the options
	// of item CondItem that show it (or, with CondNone, hide it), and the
	// condition in words. The page reveals it live; without JavaScript
	// every item shows, with the condition beside it.
	Cond     string
	CondItem int
	CondNone bool
	CondText string
	// Rules for free text: the hint and rules in words, and the form
	// field's attributes.
	Rules     string
	Pattern   string
	MinLength int
	MaxLength int
	Numeric   bool
}

type optionView struct {
	Index   int
	Value   string // form value: "o<index>"
	Opt     domain.Option
	Checked bool
	Chosen  bool   // final: this option was selected
	Tone    string // approvals: "allow" or "deny" (styling), else empty
	Mine    bool   // N-of-M: the viewer's current vote
}

// runView is the run detail page.
type runView struct {
	Project   string
	ID        string
	Run       *domain.Run // nil in wait mode (no run record)
	Questions []*cardView
}

func (i *Inbox) card(q *domain.Question, prev url.Values, v *viewer, ret string) *cardView {
	c := &cardView{Q: q, CSRF: v.CSRF, Return: ret, Unread: !domain.NotificationFor(q).Read, Context: renderContext(q.Context), Agent: q.AgentName}
	if c.Agent == "" {
		c.Agent = q.AgentID
	}
	if c.Agent == "" {
		c.Agent = "An agent"
	}
	c.Title = cardTitle(q, c.Agent)
	if !q.Responders.Empty() {
		c.Responders = domain.DescribeResponders(q.Responders)
		if q.Responders.ExcludeRequester && q.RequestedBy != "" {
			c.Responders += " (not " + q.RequestedBy + ", who asked for it)"
		}
	}
	if q.ApprovalsRequired > 1 {
		c.Approvals, c.Tally = q.ApprovalsRequired, domain.TallyLine(q)
		c.MyVote = myVote(q, v.Person())
	}
	c.Buttons = len(q.Questions) == 1 && !q.Questions[0].MultiSelect && !q.Questions[0].OpenEnded()
	c.Approval, c.Note = q.Kind == domain.KindApproval, approval.NoteAllowed(q)
	c.Action = i.actionView(q, prev, v, ret)
	if q.Status == domain.StatusPending {
		c.History = domain.HistoryText(q.History, i.router.Clock().Now())
	}
	tones := approval.Tones(q)
	for n, it := range q.Questions {
		iv := itemView{Index: n, Field: "a" + strconv.Itoa(n), Text: "t" + strconv.Itoa(n), Item: it,
			Open: it.OpenEnded(), Multi: it.MultiSelect}
		if prev != nil {
			iv.PrevText = prev.Get(iv.Text)
		}
		if c := it.ShowIf; c != nil && c.Item >= 0 && c.Item < len(q.Questions) {
			labels, none := c.AnyOf, false
			if len(labels) == 0 {
				labels, none = c.NoneOf, true
			}
			var vals []string
			for _, l := range labels {
				for j, o := range q.Questions[c.Item].Options {
					if lo, ok := domain.MatchOption(q.Questions[c.Item], l); ok && lo.Label == o.Label {
						vals = append(vals, "o"+strconv.Itoa(j))
					}
				}
			}
			iv.Cond, iv.CondItem, iv.CondNone = strings.Join(vals, " "), c.Item, none
			iv.CondText = domain.ConditionText(q.Questions, c)
		}
		if r := it.Other; r != nil {
			iv.Rules, iv.Pattern, iv.MinLength, iv.MaxLength = r.Describe(), r.HTMLPattern(), r.MinLength, r.MaxLength
			iv.Numeric = r.Number != nil
		}
		chosen := q.Selections[it.Question]
		for j, o := range it.Options {
			ov := optionView{Index: j, Value: "o" + strconv.Itoa(j), Opt: o, Mine: n == 0 && c.MyVote != "" && c.MyVote == o.Label}
			if n == 0 && j < len(tones) {
				ov.Tone = map[approval.Tone]string{approval.Allow: "allow", approval.Deny: "deny"}[tones[j]]
			}
			for _, s := range chosen {
				if s == o.Label {
					ov.Chosen = true
				}
			}
			if prev != nil {
				for _, v := range prev[iv.Field] {
					if v == ov.Value {
						ov.Checked = true
					}
				}
			} else if o.Default && q.Status == domain.StatusPending {
				ov.Checked = true
			}
			c.Defaults = c.Defaults || o.Default
			iv.Options = append(iv.Options, ov)
		}
		if prev != nil {
			for _, v := range prev[iv.Field] {
				if v == "other" {
					iv.Other = true
				}
			}
		}
		iv.Answer = q.Answers[it.Question]
		iv.Chosen = chosen
		c.Items = append(c.Items, iv)
	}
	return c
}

// cardTitle heads a card: the item's header; for several items their
// headers together ("Backfill · Region · Notes"), never just the first.
func cardTitle(q *domain.Question, agent string) string {
	switch len(q.Questions) {
	case 0:
		return "Question from " + agent
	case 1:
		if h := q.Questions[0].Header; h != "" {
			return h
		}
		return "Question from " + agent
	}
	var hs []string
	for _, it := range q.Questions {
		if it.Header == "" {
			return strconv.Itoa(len(q.Questions)) + " questions from " + agent
		}
		hs = append(hs, it.Header)
	}
	return strings.Join(hs, " · ")
}

// myVote is the label me voted for on q, or "".
func myVote(q *domain.Question, me domain.Person) string {
	for _, v := range q.Votes {
		if v.By.Platform == me.Platform && v.By.ID == me.ID {
			return v.Label
		}
	}
	return ""
}

// answerFromForm turns a submitted card into a respond request: option
// fields carry "o<index>" (never the label, so labels of any length or
// content round-trip exactly) or "other"; free text is in t<index>.
//
// On an approval, typed text never decides anything by itself: only an
// option, or the explicit "Deny with note…" (a0=note), counts.
func answerFromForm(q *domain.Question, form url.Values) (domain.RespondRequest, error) {
	req := domain.RespondRequest{Answers: map[string]domain.StringList{}}
	if q.Kind == domain.KindApproval {
		return approvalFromForm(q, form)
	}
	for n, it := range q.Questions {
		picks := form["a"+strconv.Itoa(n)]
		text := strings.TrimSpace(form.Get("t" + strconv.Itoa(n)))
		var out []string
		other := false
		for _, v := range picks {
			if v == "other" {
				other = true
				continue
			}
			if j, err := strconv.Atoi(strings.TrimPrefix(v, "o")); err == nil && strings.HasPrefix(v, "o") && j >= 0 && j < len(it.Options) {
				out = append(out, it.Options[j].Label)
			}
		}
		switch {
		case it.OpenEnded():
			out = nil
			if text != "" {
				out = []string{text}
			}
		case it.MultiSelect:
			// Typed text is one more selection ("Other").
			if text != "" {
				out = append(out, text)
			}
		case other || (len(out) == 0 && text != ""):
			// Single-select: a chosen option wins over text typed into
			// "Other" unless "Other" itself was chosen.
			out = nil
			if text != "" {
				out = []string{text}
			}
		}
		req.Answers[it.Question] = domain.StringList(out)
	}
	return req, nil
}

// approvalFromForm reads an approval's form: each item's option, or for a
// single-vote Allow / Deny approval a note that denies.
func approvalFromForm(q *domain.Question, form url.Values) (domain.RespondRequest, error) {
	req := domain.RespondRequest{Answers: map[string]domain.StringList{}}
	if q.Action != nil {
		if r, ok, err := actionFromForm(q, form); ok {
			return r, err
		}
		req.Digest = strings.TrimSpace(form.Get("digest"))
	}
	for n, it := range q.Questions {
		picks := form["a"+strconv.Itoa(n)]
		text := strings.TrimSpace(form.Get("t" + strconv.Itoa(n)))
		var out []string
		for _, v := range picks {
			if v == "note" && n == 0 && approval.NoteAllowed(q) {
				// The note is the reason, as typed; never read as an answer.
				note, ok := approval.NoteRequest(q, form.Get("t0"))
				if !ok {
					return req, &domain.Error{Code: domain.EInvalidAnswer, Message: "Write a note to deny with, or press Deny.",
						Details: []domain.Detail{{Field: "answers[" + it.Question + "]", Problem: "the note is empty"}}}
				}
				return note, nil
			}
			if j, err := strconv.Atoi(strings.TrimPrefix(v, "o")); err == nil && strings.HasPrefix(v, "o") && j >= 0 && j < len(it.Options) {
				out = append(out, it.Options[j].Label)
			}
		}
		if it.OpenEnded() && text != "" {
			out = []string{text}
		}
		if len(out) == 0 && text != "" && !it.OpenEnded() {
			msg := "An approval is decided with its buttons; typed text alone decides nothing."
			if approval.NoteAllowed(q) {
				msg = "An approval is decided with its buttons; typed text alone decides nothing. To refuse with a reason, use “Deny with note…”."
			}
			return req, &domain.Error{Code: domain.EInvalidAnswer, Message: msg,
				Details: []domain.Detail{{Field: "answers[" + it.Question + "]", Problem: "choose one of the options"}}}
		}
		req.Answers[it.Question] = domain.StringList(out)
	}
	return req, nil
}

// finalLine says how a question ended, in one sentence.
func finalLine(q *domain.Question) string {
	switch q.Status {
	case domain.StatusAnswered:
		if q.Defaulted {
			return "No answer in time; answered by default"
		}
		if q.ApprovalsRequired > 1 {
			// "Approved by alice, bob: Approve" without the answer, which
			// the card shows beside the question.
			return strings.TrimSuffix(domain.OutcomeLine(q), ": "+q.Answers[q.Questions[0].Question])
		}
		by := personLabel(q.RespondedBy)
		if line := decisionLine(q, by); line != "" {
			return line
		}
		switch tone, note := approval.Outcome(q); {
		case tone == approval.Allow:
			return "Allowed by " + by
		case tone == approval.Deny && note != "":
			return "Denied by " + by + " with a note"
		case tone == approval.Deny:
			return "Denied by " + by
		}
		return "Answered by " + by
	case domain.StatusExpired:
		return "Expired without an answer"
	case domain.StatusCancelled:
		note := domain.NoteSuffix(q)
		switch q.CancelReason {
		case domain.CancelUser:
			if q.RespondedBy != nil {
				return "Dismissed by " + personLabel(q.RespondedBy) + note
			}
			return "Dismissed" + note
		case domain.CancelAgent:
			return "Withdrawn by the agent" + note
		case domain.CancelSuperseded:
			return "Replaced by a newer question of the same run"
		}
		return "Cancelled" + note
	}
	return "Waiting for an answer"
}

// personLabel names who acted for people: "maria (Slack)"; on the web
// just the name.
func personLabel(p *domain.Person) string {
	if p == nil {
		return "someone"
	}
	by := p.Name
	if by == "" {
		by = p.ID
	}
	if by == "" {
		by = "someone"
	}
	if p.Platform != "" && p.Platform != "web" {
		by += " (" + domain.PlatformName(p.Platform) + ")"
	}
	return by
}

func (i *Inbox) funcs() template.FuncMap {
	return template.FuncMap{
		"final": finalLine,
		// imageShown: a picture whose host web.image_hosts allows is shown;
		// any other is a link with its alt text (never loaded by the page).
		"imageShown": func(img *domain.Image) bool { return i.imageAllowed(img) },
		// dismissAsk is the confirmation before a dismissal, in the words
		// Slack's confirmation dialog uses too (domain.Words).
		"dismissAsk": func() string { return words.DismissConfirm().Text },
		"until": func(t time.Time) string {
			d := t.Sub(i.router.Clock().Now())
			if d <= 0 {
				return "expired"
			}
			return "expires in " + domain.HumanDuration(d)
		},
		"ts": func(t time.Time) string { return t.UTC().Format("Jan 2, 15:04 UTC") },
		"iso": func(t time.Time) string {
			return t.UTC().Format(time.RFC3339)
		},
		"tsp": func(t *time.Time) string {
			if t == nil {
				return ""
			}
			return t.UTC().Format("Jan 2, 15:04:05 UTC")
		},
		"isop": func(t *time.Time) string {
			if t == nil {
				return ""
			}
			return t.UTC().Format(time.RFC3339)
		},
		"short": func(id string) string {
			// Generated ids (uuids) are shortened; names a runtime chose
			// are shown whole.
			if len(id) > 16 {
				return id[:8] + "…"
			}
			return id
		},
		"soon": func(t time.Time) bool { return t.Sub(i.router.Clock().Now()) < 5*time.Minute },
		"plural": func(n int, one, many string) string {
			if n == 1 {
				return fmt.Sprintf("%d %s", n, one)
			}
			return fmt.Sprintf("%d %s", n, many)
		},
		"pathEscape": url.PathEscape,
		"md":         inlineHTML,
		"asset": func(name string) string {
			if a, ok := i.assets[name]; ok {
				return "/static/" + a.hashed
			}
			return "/static/" + name
		},
	}
}

func parseTemplates(funcs template.FuncMap) (map[string]*template.Template, error) {
	pages := []string{"inbox", "question", "run", "login", "refused", "history", "batch"}
	out := map[string]*template.Template{}
	for _, p := range pages {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS,
			"templates/layout.html", "templates/card.html", "templates/action.html", "templates/"+p+".html")
		if err != nil {
			return nil, err
		}
		out[p] = t
	}
	// The bare card, for live updates.
	t, err := template.New("card.html").Funcs(funcs).ParseFS(templateFS, "templates/card.html", "templates/action.html")
	if err != nil {
		return nil, err
	}
	out["card"] = t
	return out, nil
}

func (i *Inbox) render(w http.ResponseWriter, r *http.Request, page string, d pageData) {
	i.renderStatus(w, r, http.StatusOK, page, d)
}

func (i *Inbox) renderStatus(w http.ResponseWriter, r *http.Request, status int, page string, d pageData) {
	d.Page = page
	d.LocalMode = !i.cfg.RequireLogin
	if d.Now.IsZero() {
		d.Now = time.Now()
	}
	var buf bytes.Buffer
	if err := i.tmpl[page].ExecuteTemplate(&buf, "layout.html", d); err != nil {
		i.log.Error("rendering page failed", "page", page, "err", err)
		http.Error(w, "The page could not be rendered.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	writeBody(w, r, status, buf.Bytes())
}

func (i *Inbox) renderCard(w http.ResponseWriter, r *http.Request, c *cardView) {
	var buf bytes.Buffer
	if err := i.tmpl["card"].ExecuteTemplate(&buf, "card", c); err != nil {
		i.log.Error("rendering card failed", "err", err)
		http.Error(w, "The card could not be rendered.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	writeBody(w, r, http.StatusOK, buf.Bytes())
}

// imageAllowed reports whether the page may load img: its host is one of
// web.image_hosts ("*.example.com" allows the subdomains).
func (i *Inbox) imageAllowed(img *domain.Image) bool { return img.AllowedBy(i.cfg.ImageHosts) }

// CheckImageHost refuses an entry of web.image_hosts the page's CSP could
// not carry as it means: a host name, or "*." and a host name, nothing
// else (no scheme, port, path or spaces).
func CheckImageHost(h string) error {
	name := strings.TrimPrefix(h, "*.")
	if name == "" || strings.ContainsAny(name, "/:;*' \t\"") || strings.Trim(name, ".") != name {
		return fmt.Errorf("web.image_hosts: %q is not a host name such as img.example.com or *.example.com (no scheme, port or path)", h)
	}
	return nil
}
